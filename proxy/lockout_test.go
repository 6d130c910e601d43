package proxy

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/span/spankey"
	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
)

// A flood of refusals changes nothing but their own counters: not the
// requests and errors the SLO rules read, not the latency histograms, not
// the feedback index (the answer before the flood still takes feedback,
// with room for four), and only a caller that was let in and then refused
// for its body gets a span, as it got a trace id.
func TestRefusalFloodChangesNothing(t *testing.T) {
	const key = "alice-key-0123456789"
	r, spans, fs := feedbackRig(t, func(c *Config, _ *mlxsim.Options) {
		c.APIKeys = []APIKey{{Name: "alice", Key: key}}
		c.Feedback.MaxTraces = 4
	})
	traceID, _ := ask(t, r)
	spans.next(t, 1)
	before := r.scrape()

	const n = 10 // each kind, more than the index holds
	refusals := []struct {
		method, path, body string
		header             []string
		status             int
		traced             bool
	}{
		{"POST", chatPath, `{"messages": []}`, []string{"Authorization", "Bearer wrong-key-0123456789"}, http.StatusUnauthorized, false},
		{"POST", chatPath, `{"messages": []}`, []string{"Host", "rebind.attacker.test"}, http.StatusForbidden, false},
		{"POST", chatPath, `{"messages": []}`, []string{"Origin", "https://evil.example"}, http.StatusForbidden, false},
		{"POST", "/v1/embeddings", `{"input": "x"}`, nil, http.StatusNotFound, false},
		{"DELETE", "/v1/models", "", nil, http.StatusMethodNotAllowed, false},
		{"POST", chatPath, `{"messages": [`, []string{"Authorization", "Bearer " + key}, http.StatusBadRequest, true},
		{"POST", chatPath, `{"model": "nobody/nothing", "messages": []}`, nil, http.StatusNotFound, true},
	}
	traced := 0
	for _, f := range refusals {
		for range n {
			req, err := http.NewRequest(f.method, r.url+f.path, strings.NewReader(f.body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			for i := 0; i+1 < len(f.header); i += 2 {
				if f.header[i] == "Host" {
					req.Host = f.header[i+1]
				} else {
					req.Header.Set(f.header[i], f.header[i+1])
				}
			}
			resp, err := r.client.Do(req)
			require.NoError(t, err)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			require.Equal(t, f.status, resp.StatusCode, "%s %s %v", f.method, f.path, f.header)
			assert.Equal(t, f.traced, resp.Header.Get(TraceIDHeader) != "", "a trace id only for a span: %s %s %v", f.method, f.path, f.header)
			if f.traced {
				traced++
			}
		}
	}
	after := r.scrape()

	for _, name := range []string{"mlx_requests_total", "mlx_error_total", "mlx_ttft_seconds", "mlx_request_latency_seconds", "mlx_queue_wait_seconds", "mlx_in_flight"} {
		assert.Equal(t, familyText(before, name), familyText(after, name), "%s does not move for a refusal", name)
	}
	assert.Equal(t, float64(n), value(t, after, "mlx_http_refusals_total", "route", "chat_completions", "status", "401"))
	assert.Equal(t, float64(2*n), value(t, after, "mlx_http_refusals_total", "route", "chat_completions", "status", "403"))
	assert.Equal(t, float64(n), value(t, after, "mlx_http_refusals_total", "route", "chat_completions", "status", "400"))
	assert.Equal(t, float64(n), value(t, after, "mlx_http_refusals_total", "route", "chat_completions", "status", "404"))
	assert.Equal(t, float64(n), value(t, after, "mlx_http_refusals_total", "route", routeOtherLabel, "status", "404"))
	assert.Equal(t, float64(n), value(t, after, "mlx_http_refusals_total", "route", routeOtherLabel, "status", "405"))
	// A caller that was let in is counted under its name.
	assert.Equal(t, float64(n), value(t, after, "mlx_client_requests_total", "client", "alice", "status", "4xx"))

	// The refused requests of admitted callers are spans with their error,
	// the others none. They were sent last, and spans of refusals leave
	// in the order they were made: once theirs are in, any other would be.
	refusedSpans := func() (refused, all int) {
		spans.mu.Lock()
		defer spans.mu.Unlock()
		for _, s := range spans.spans {
			if spanErrorType(s) == OutcomeRefused.String() {
				refused++
			}
		}
		return refused, len(spans.spans)
	}
	require.Eventually(t, func() bool { n, _ := refusedSpans(); return n >= traced }, 5*time.Second, time.Millisecond,
		"a span for each refusal of an admitted caller")
	refused, all := refusedSpans()
	assert.Equal(t, traced, refused)
	assert.Equal(t, 1+traced, all, "no span for a caller refused at the door")

	resp := r.feedback(`{"trace_id":"` + traceID + `","score":"up"}`)
	require.Equal(t, http.StatusOK, resp.status, "the answer before the flood is still in the index: %s", resp.body)
	require.Eventually(t, func() bool { return len(fs.records()) == 1 }, 5*time.Second, time.Millisecond, "the feedback record is handed over")
}

// familyText is a family's series and values as the scrape has them.
func familyText(sc interface{ Series(string) []string }, name string) string {
	return fmt.Sprint(sc.Series(name))
}

// spanErrorType is a span's error.type attribute.
func spanErrorType(s *Span) string {
	for _, kv := range s.Attributes {
		if kv.Key == spankey.ErrorType {
			return kv.Value.AsString()
		}
	}
	return ""
}

// A request the proxy refuses, or answers without a body it takes, while
// its body is still coming (here: never) is answered at once, the
// answer closing the connection, which the proxy then closes: net/http
// would otherwise read the unread body, with no deadline, before writing
// the answer. Everything here waits up to 10 s; the body never comes.
func TestRefusalWithAStalledBodyIsAnsweredAtOnce(t *testing.T) {
	var reached atomic.Int64
	r := rigWithUpstream(t, countingEngine(&reached), served(func(c *Config) {
		c.APIKeys = []APIKey{{Name: "alice", Key: "alice-key-0123456789"}}
	}))
	for _, c := range []struct {
		name, head string
		status     int
	}{
		{"host_not_allowed", "POST /v1/chat/completions HTTP/1.1\r\nHost: rebind.attacker.test\r\nContent-Type: application/json\r\n", http.StatusForbidden},
		{"invalid_api_key", "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer nope\r\nContent-Type: application/json\r\n", http.StatusUnauthorized},
		{"unsupported_media_type", "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n", http.StatusUnsupportedMediaType},
		{"not_found", "POST /v1/embeddings HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n", http.StatusNotFound},
		{"a read route with a body", "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n", http.StatusOK},
		{"a scrape with a body", "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n", http.StatusOK},
	} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(r.url, "http://"))
		require.NoError(t, err)
		// 100 KB declared, under the 256 KiB net/http reads of an unread
		// body before it answers; ten bytes sent.
		_, err = fmt.Fprintf(conn, "%sContent-Length: 100000\r\n\r\n{\"messages", c.head)
		require.NoError(t, err)
		resp, b := rawAnswer(t, conn)
		assert.Equal(t, c.status, resp.StatusCode, "%s: %s", c.name, b)
		assert.True(t, resp.Close, "%s: the answer closes the connection", c.name)
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
		_, err = conn.Read(make([]byte, 1))
		assert.ErrorIs(t, err, io.EOF, "%s: the proxy closes the connection, not waiting for the body", c.name)
		conn.Close()
	}
	assert.Zero(t, reached.Load(), "no request with a stalled body went to the engine")
}

// One client (a key, or an address without one) holds at most
// max_concurrent_requests_per_client slots: a key whose requests send one
// byte of body each gets 429 past its share, while another caller is
// served; the slots come back as its requests end.
func TestOneClientCannotHoldEveryRequestSlot(t *testing.T) {
	const key = "alice-key-0123456789"
	var reached atomic.Int64
	r := rigWithUpstream(t, countingEngine(&reached), served(func(c *Config) {
		c.APIKeys = []APIKey{{Name: "alice", Key: key}}
		c.MaxConcurrentRequests, c.MaxConcurrentRequestsPerClient = 8, 4
	}))
	addr := strings.TrimPrefix(r.url, "http://")
	var held []net.Conn
	for range 4 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		_, err = fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{", key)
		require.NoError(t, err)
		held = append(held, c)
	}
	require.Eventually(t, func() bool { return r.proxy.admitted.Load() == 4 }, 10*time.Second, 5*time.Millisecond)
	resp := r.do(r.url, http.MethodPost, chatPath, `{"messages": []}`, "Authorization", "Bearer "+key)
	assert.Equal(t, http.StatusTooManyRequests, resp.status, "the key is at its share")
	assert.Contains(t, string(resp.body), "the limit of one client")
	assert.Equal(t, http.StatusOK, r.post(chatPath, `{"messages": []}`).status, "another caller is served")
	for _, c := range held {
		c.Close()
	}
	require.Eventually(t, func() bool { return r.proxy.admitted.Load() == 0 }, 10*time.Second, 5*time.Millisecond)
	assert.Equal(t, http.StatusOK, r.do(r.url, http.MethodPost, chatPath, `{"messages": []}`, "Authorization", "Bearer "+key).status,
		"the key is served again once its requests ended")
	sc := r.scrape()
	assert.Equal(t, 1.0, value(t, sc, "mlx_http_refusals_total", "route", "chat_completions", "status", "429"))
	assert.Equal(t, 2.0, value(t, sc, "mlx_requests_total", "streaming", "false"), "the two served; no refusal")
}

// At the per-client bound an idle keep-alive connection makes room for a
// new one: a client holding its maximum of idle connections (from other
// loopback addresses, which count as one client) locks out nobody, and
// /metrics scrapes. Connections that are not idle are not closed for it.
func TestIdleConnectionsMakeRoom(t *testing.T) {
	var e recordingEngine
	r := rigWithUpstream(t, e.handler, served(func(c *Config) { c.MaxConnections, c.MaxConnectionsPerClient = 8, 4 }))
	addr := strings.TrimPrefix(r.url, "http://")
	var idle []net.Conn
	for i := range 4 {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i))}}
		c, err := d.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		_, err = fmt.Fprintf(c, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		require.NoError(t, err)
		resp, _ := rawAnswer(t, c)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.False(t, resp.Close, "kept alive")
		idle = append(idle, c)
	}
	// A fifth loopback address is the same client: over its bound, it
	// takes the oldest idle connection's place.
	assert.Equal(t, http.StatusOK, r.do(r.url, http.MethodGet, "/metrics", "").status)
	require.NoError(t, idle[0].SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err := idle[0].Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF, "the oldest idle connection was closed for the new one")
	assert.Equal(t, http.StatusOK, r.do(r.url, http.MethodGet, "/health", "").status)
}

// The limiter's choices, connection by connection: per-client and total
// bounds, the room kept for loopback, and which idle connection goes.
func TestConnectionBoundsKeepRoomForLoopback(t *testing.T) {
	l := limitConnections(nil, 6, 2, func(string) {})
	conn := func(ip string) *limitedConn {
		client := clientOfIP(net.ParseIP(ip))
		return &limitedConn{client: client, loopback: client == loopbackClient, l: l}
	}
	take := func(c *limitedConn) string {
		reason, evict := l.take(c)
		assert.Nil(t, evict)
		return reason
	}
	a1, a2, b1, b2 := conn("192.0.2.1"), conn("192.0.2.1"), conn("192.0.2.2"), conn("192.0.2.2")
	for _, c := range []*limitedConn{a1, a2, b1, b2} {
		require.Empty(t, take(c))
	}
	assert.Equal(t, connRefusedPerClient, take(conn("192.0.2.1")))
	assert.Equal(t, connRefusedTotal, take(conn("192.0.2.3")), "remote clients together hold at most 6-2")
	assert.Empty(t, take(conn("127.0.0.1")), "loopback keeps its room")
	assert.Empty(t, take(conn("127.0.0.9")))
	assert.Equal(t, connRefusedPerClient, take(conn("127.0.0.5")), "every loopback address is one client")

	// Idle connections make room: at the total bound, the client holding
	// the most gives its longest idle one.
	l.connState(b2, http.StateIdle)
	l.connState(a1, http.StateIdle)
	reason, evict := l.take(conn("192.0.2.3"))
	assert.Empty(t, reason)
	assert.Same(t, b2, evict, "the longest idle of the clients holding the most")
	// IPv6: one /64 is one client.
	assert.Equal(t, clientOfIP(net.ParseIP("2001:db8::1")), clientOfIP(net.ParseIP("2001:db8::ffff:1")))
	assert.NotEqual(t, clientOfIP(net.ParseIP("2001:db8::1")), clientOfIP(net.ParseIP("2001:db8:0:1::1")))
}
