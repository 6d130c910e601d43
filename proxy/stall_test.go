package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const chunk = `data: {"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "word "}}]}` + "\n\n"

// An engine that stops mid-stream: after StreamStallTimeout the client's
// stream ends cleanly (what it had, an error event, [DONE]), the engine's
// request is cancelled, and the stall counts.
func TestEngineStallEndsTheStreamCleanly(t *testing.T) {
	cancelled := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for range 2 {
			_, _ = io.WriteString(w, chunk)
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done() // hung: no more bytes, ever
		close(cancelled)
	}))
	t.Cleanup(up.Close)
	cfg := DefaultConfig()
	cfg.Upstream, cfg.Model, cfg.StreamStallTimeout = up.URL, testModel, 300*time.Millisecond
	p, url := startProxy(t, cfg)
	resp, err := testClient(t).Post(url+"/v1/chat/completions", "application/json", strings.NewReader(`{"stream": true, "messages": []}`))
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err, "a clean end, not a broken stream")
	body := string(b)
	assert.Equal(t, 2, strings.Count(body, `"content": "word "`))
	assert.Contains(t, body, `"code": "upstream_stalled"`)
	assert.True(t, strings.HasSuffix(body, "data: [DONE]\n\n"))
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the engine's request was not cancelled")
	}
	settle(p)
	sc := scrapeProxy(t, url)
	assert.Equal(t, 1.0, value(t, sc, "mlx_stream_stalls_total", "side", "engine"))
	assert.Equal(t, 1.0, value(t, sc, "mlx_error_total", "model", testModel, "status", "5xx", "kind", KindChat))
}

// Keepalive comments are bytes: an engine that prefills a long prompt
// (sending ": keepalive" now and then) is not a stalled one.
func TestKeepalivesAreNotAStall(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for range 8 {
			_, _ = io.WriteString(w, ": keepalive 1/8\n\n")
			w.(http.Flusher).Flush()
			time.Sleep(100 * time.Millisecond)
		}
		_, _ = io.WriteString(w, chunk+"data: [DONE]\n\n")
	}))
	t.Cleanup(up.Close)
	cfg := DefaultConfig()
	cfg.Upstream, cfg.Model, cfg.StreamStallTimeout = up.URL, testModel, 300*time.Millisecond
	_, url := startProxy(t, cfg)
	resp, err := testClient(t).Post(url+"/v1/chat/completions", "application/json", strings.NewReader(`{"stream": true, "messages": []}`))
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.NotContains(t, string(b), "upstream_stalled", "800 ms of keepalives over a 300 ms stall bound")
	assert.Contains(t, string(b), `"content": "word "`)
}

// A client that stops reading: once a write to it cannot finish within
// ClientWriteTimeout, it is cut off and the engine's request cancelled.
func TestClientThatStopsReadingIsCutOff(t *testing.T) {
	cancelled := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		big := strings.Repeat(chunk, 200)
		for r.Context().Err() == nil {
			if _, err := io.WriteString(w, big); err != nil {
				break
			}
			w.(http.Flusher).Flush()
		}
		close(cancelled)
	}))
	t.Cleanup(up.Close)
	cfg := DefaultConfig()
	cfg.Upstream, cfg.Model, cfg.ClientWriteTimeout = up.URL, testModel, 300*time.Millisecond
	p, url := startProxy(t, cfg)
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	require.NoError(t, err)
	defer c.Close()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4096)
	}
	body := `{"stream": true, "messages": []}`
	_, err = fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	require.NoError(t, err)
	_, err = http.ReadResponse(bufio.NewReader(c), nil) // the headers; then read nothing
	require.NoError(t, err)
	select {
	case <-cancelled:
	case <-time.After(20 * time.Second):
		t.Fatal("the engine's request was not cancelled while the client read nothing")
	}
	settle(p)
	assert.Equal(t, 1.0, value(t, scrapeProxy(t, url), "mlx_stream_stalls_total", "side", "client"))
}
