package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rawRequest opens a connection to the proxy and sends a request's head
// with the given Content-Length and the first part of its body.
func rawRequest(t *testing.T, url string, contentLength int, first string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	_, err = fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", contentLength, first)
	require.NoError(t, err)
	return c
}

// A client that stops sending its body gets 408 once the body deadline
// passes, its connection is closed, and the engine never sees it.
func TestSlowBodyGets408(t *testing.T) {
	up, reached := countingEngine(t)
	cfg := DefaultConfig()
	cfg.Upstream, cfg.Model, cfg.BodyReadTimeout = up.URL, testModel, 300*time.Millisecond
	p, url := startProxy(t, cfg)
	c := rawRequest(t, url, 1000, `{"messages": [`)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err, "an answer, not a hung connection")
	b, _ := io.ReadAll(resp.Body)
	assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
	assert.Contains(t, string(b), "request_timeout")
	assert.True(t, resp.Close, "the connection is closed")
	assert.Zero(t, reached.Load())
	settle(p)
	assert.Equal(t, 1.0, value(t, scrapeProxy(t, url), "mlx_http_refusals_total", "route", "chat_completions", "status", "408"))
}

// Clients that declare large bodies and send little pin memory for what
// they sent, not for what they declared: 32 slow clients declaring 32 MiB
// each (1 GiB) hold a few MiB.
func TestDeclaredBodySizeIsNotAllocated(t *testing.T) {
	up, _ := countingEngine(t)
	cfg := DefaultConfig()
	cfg.Upstream, cfg.Model = up.URL, testModel
	_, url := startProxy(t, cfg)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 32 {
		rawRequest(t, url, 32<<20, `{"messages": [`)
	}
	time.Sleep(300 * time.Millisecond) // the handlers are reading
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapInuse) - int64(before.HeapInuse)
	assert.Less(t, grown, int64(64<<20), "heap grew %d MiB for 32 clients that sent a few bytes each", grown>>20)
}

// Past MaxConcurrentRequests a completion gets 429 with Retry-After
// before its body is read; when one ends, the next is served.
func TestConcurrencyCapAnswers429(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			return
		}
		<-release
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"choices": []}`)
	}))
	t.Cleanup(func() { once.Do(func() { close(release) }); up.Close() })
	cfg := DefaultConfig()
	cfg.Upstream, cfg.Model, cfg.MaxConcurrentRequests, cfg.TopLogprobs = up.URL, testModel, 2, 0
	p, url := startProxy(t, cfg)
	done := make(chan int, 2)
	for range 2 {
		go func() {
			status, _ := postBody(t, url, `{"messages": []}`)
			done <- status
		}()
	}
	require.Eventually(t, func() bool { return p.admitted.Load() == 2 }, 5*time.Second, 5*time.Millisecond)
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(`{"messages": []}`))
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
	assert.Contains(t, string(b), "rate_limit_exceeded")
	// Other routes are not capped.
	resp, err = http.Get(url + "/metrics")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	once.Do(func() { close(release) })
	assert.Equal(t, http.StatusOK, <-done)
	assert.Equal(t, http.StatusOK, <-done)
	status, _ := postBody(t, url, `{"messages": []}`)
	assert.Equal(t, http.StatusOK, status, "served again once the others ended")
	settle(p)
	sc := scrapeProxy(t, url)
	assert.Equal(t, 1.0, value(t, sc, "mlx_http_refusals_total", "route", "chat_completions", "status", "429"))
}
