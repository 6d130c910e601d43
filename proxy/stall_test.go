package proxy

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const chunk = `data: {"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "word "}}]}` + "\n\n"

// streamEngine answers every completion with an event stream that write
// produces.
func streamEngine(write func(w http.ResponseWriter, r *http.Request)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		write(w, r)
	}
}

func flush(w http.ResponseWriter, s string) {
	_, _ = io.WriteString(w, s)
	w.(http.Flusher).Flush()
}

const streamBody = `{"stream": true, "messages": []}`

// An engine that stops mid-stream: after StreamStallTimeout the client's
// stream ends cleanly (what it had, an error event, [DONE]), the engine's
// request is cancelled, and the stall counts.
func TestEngineStallEndsTheStreamCleanly(t *testing.T) {
	cancelled := make(chan struct{})
	r := rigWithUpstream(t, streamEngine(func(w http.ResponseWriter, req *http.Request) {
		flush(w, chunk)
		flush(w, chunk)
		<-req.Context().Done() // hung: no more bytes, ever
		close(cancelled)
	}), served(func(c *Config) { c.StreamStallTimeout = 300 * time.Millisecond }))
	body := string(r.post(chatPath, streamBody).body) // read whole: a clean end, not a broken stream
	assert.Equal(t, 2, strings.Count(body, `"content": "word "`))
	assert.Contains(t, body, `"code": "upstream_stalled"`)
	assert.True(t, strings.HasSuffix(body, "data: [DONE]\n\n"))
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the engine's request was not cancelled")
	}
	sc := r.scrape()
	assert.Equal(t, 1.0, value(t, sc, "mlx_stream_stalls_total", "side", "engine"))
	assert.Equal(t, 1.0, value(t, sc, "mlx_error_total", "model", testModel, "status", "5xx", "kind", KindChat))
}

// Keepalive comments are bytes: an engine that prefills a long prompt
// (sending ": keepalive" now and then) is not a stalled one. The engine
// sends one every 25 ms until three stall bounds have passed by its own
// clock, so the stream outlasts the bound by far while no gap comes near
// it (a gap would have to run 475 ms late to).
func TestKeepalivesAreNotAStall(t *testing.T) {
	const bound = 500 * time.Millisecond
	var sent atomic.Int64
	r := rigWithUpstream(t, streamEngine(func(w http.ResponseWriter, _ *http.Request) {
		start := time.Now()
		for time.Since(start) < 3*bound {
			flush(w, ": keepalive\n\n")
			sent.Add(1)
			time.Sleep(bound / 20)
		}
		flush(w, chunk+"data: [DONE]\n\n")
	}), served(func(c *Config) { c.StreamStallTimeout = bound }))
	body := string(r.post(chatPath, streamBody).body)
	assert.NotContains(t, body, "upstream_stalled", "keepalives for three stall bounds")
	assert.Contains(t, body, `"content": "word "`)
	assert.Greater(t, sent.Load(), int64(1))
	assert.Equal(t, 0.0, value(t, r.scrape(), "mlx_stream_stalls_total", "side", "engine"))
}

// A client that stops reading: once a write to it cannot finish within
// ClientWriteTimeout, it is cut off and the engine's request cancelled.
func TestClientThatStopsReadingIsCutOff(t *testing.T) {
	cancelled := make(chan struct{})
	big := strings.Repeat(chunk, 200)
	r := rigWithUpstream(t, streamEngine(func(w http.ResponseWriter, req *http.Request) {
		for req.Context().Err() == nil {
			if _, err := io.WriteString(w, big); err != nil {
				break
			}
			w.(http.Flusher).Flush()
		}
		close(cancelled)
	}), served(func(c *Config) { c.ClientWriteTimeout = 300 * time.Millisecond }))
	c := rawRequest(t, r.url, len(streamBody), streamBody)
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4096)
	}
	_, err := http.ReadResponse(bufio.NewReader(c), nil) // the headers; then read nothing
	require.NoError(t, err)
	select {
	case <-cancelled:
	case <-time.After(20 * time.Second):
		t.Fatal("the engine's request was not cancelled while the client read nothing")
	}
	assert.Equal(t, 1.0, value(t, r.scrape(), "mlx_stream_stalls_total", "side", "client"))
}

// An aborted stream's Close stops its stall watch, so the timer holds
// nothing of the request for the stall timeout (review L1).
func TestCloseStopsTheStallWatch(t *testing.T) {
	var cancelled atomic.Bool
	tap := newStreamTap(context.Background(), io.NopCloser(strings.NewReader("")), &Record{}, false)
	tap.watchStalls(time.Hour, func() { cancelled.Store(true) })
	require.NoError(t, tap.Close())
	assert.False(t, tap.watch.Stop(), "the timer was already stopped by Close")
	assert.False(t, cancelled.Load())
}
