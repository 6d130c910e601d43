package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
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
	_, err = fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", contentLength, first)
	require.NoError(t, err)
	return c
}

// rawAnswer reads the answer on c within 10 s: a hung connection fails.
func rawAnswer(t *testing.T, c net.Conn) (*http.Response, []byte) {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err, "an answer, not a hung connection")
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// A client that stops sending its body gets 408 once the body deadline
// passes, its connection is closed, and the engine never sees it.
func TestSlowBodyGets408(t *testing.T) {
	var reached atomic.Int64
	r := rigWithUpstream(t, countingEngine(&reached), served(func(c *Config) { c.BodyReadTimeout = 300 * time.Millisecond }))
	resp, b := rawAnswer(t, rawRequest(t, r.url, 1000, `{"messages": [`))
	assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
	assert.Contains(t, string(b), "request_timeout")
	assert.True(t, resp.Close, "the connection is closed")
	assert.Zero(t, reached.Load())
	assert.Equal(t, 1.0, value(t, r.scrape(), "mlx_http_refusals_total", "route", "chat_completions", "status", "408"))
}

// A chunked body whose framing is broken gets 400 with an OpenAI error,
// not an empty 200, and the engine never sees it.
func TestMalformedChunkedBodyGets400(t *testing.T) {
	var reached atomic.Int64
	r := rigWithUpstream(t, countingEngine(&reached), served())
	c, err := net.Dial("tcp", strings.TrimPrefix(r.url, "http://"))
	require.NoError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"+
		"5\r\n{\"mes\r\nzz-not-hex\r\n")
	require.NoError(t, err)
	resp, b := rawAnswer(t, c)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, string(b), "malformed_body")
	assert.True(t, resp.Close, "the connection is closed")
	assert.Zero(t, reached.Load())
	assert.Equal(t, 1.0, value(t, r.scrape(), "mlx_http_refusals_total", "route", "chat_completions", "status", "400"))
}

// A body cut short by a client that half-closes its side and waits for
// the answer gets 400, not an empty 200; it counts as a client gone.
func TestTruncatedBodyGets400(t *testing.T) {
	var reached atomic.Int64
	r := rigWithUpstream(t, countingEngine(&reached), served())
	c := rawRequest(t, r.url, 1000, `{"messages": [`)
	require.NoError(t, c.(*net.TCPConn).CloseWrite())
	resp, b := rawAnswer(t, c)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, string(b), "incomplete_body")
	assert.Zero(t, reached.Load())
}

// Clients that declare large bodies and send little pin memory for what
// they sent, not for what they declared: 32 slow clients declaring 32 MiB
// each (1 GiB) hold a few MiB.
func TestDeclaredBodySizeIsNotAllocated(t *testing.T) {
	var reached atomic.Int64
	r := rigWithUpstream(t, countingEngine(&reached), served())
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 32 {
		rawRequest(t, r.url, 32<<20, `{"messages": [`)
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
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	r := rigWithUpstream(t, func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/health" {
			return
		}
		<-release
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"choices": []}`)
	}, served(func(c *Config) { c.MaxConcurrentRequests = 2 }))
	done := make(chan int, 2)
	for range 2 {
		go func() { done <- r.post(chatPath, `{"messages": []}`).status }()
	}
	require.Eventually(t, func() bool { return r.proxy.admitted.Load() == 2 }, 5*time.Second, 5*time.Millisecond)
	resp := r.post(chatPath, `{"messages": []}`)
	assert.Equal(t, http.StatusTooManyRequests, resp.status)
	assert.Equal(t, "1", resp.header.Get("Retry-After"))
	assert.Equal(t, "rate_limit_exceeded", errorOf(t, resp)["type"])
	// Other routes are not capped.
	assert.Equal(t, http.StatusOK, r.do(r.url, http.MethodGet, "/metrics", "").status)

	once.Do(func() { close(release) })
	assert.Equal(t, http.StatusOK, <-done)
	assert.Equal(t, http.StatusOK, <-done)
	assert.Equal(t, http.StatusOK, r.post(chatPath, `{"messages": []}`).status, "served again once the others ended")
	assert.Equal(t, 1.0, value(t, r.scrape(), "mlx_http_refusals_total", "route", "chat_completions", "status", "429"))
}
