package proxy

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordingEngine answers every completion 200 and keeps what reached it.
type recordingEngine struct {
	mu     sync.Mutex
	bodies []string
	header []http.Header
	models atomic.Int64
}

func (e *recordingEngine) handler(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/health":
		return
	case "/v1/models":
		e.models.Add(1)
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"object": "list", "data": [{"id": "`+testModel+`", "object": "model", "created": 1}]}`)
		return
	}
	b, _ := io.ReadAll(r.Body)
	e.mu.Lock()
	e.bodies = append(e.bodies, string(b))
	e.header = append(e.header, r.Header.Clone())
	e.mu.Unlock()
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}], "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}`)
}

func (e *recordingEngine) seen() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.bodies...)
}

// Every hostile body (Python's NaN and Infinity hiding a model or an
// adapter, an empty or repeated model, a template of the client's own,
// stop values and numbers mlx_lm would raise on) gets the proxy's own 4xx,
// and the engine never sees it.
func TestHostileBodiesNeverReachTheEngine(t *testing.T) {
	var e recordingEngine
	r := rigWithUpstream(t, e.handler, served())
	msgs := `"messages": [{"role": "user", "content": "x"}]`
	for _, c := range []struct {
		name, body string
		status     int
		code       string
	}{
		{"C1 NaN skips nothing", `{"model": "evil/other-model", ` + msgs + `, "x": NaN}`, 404, "model_not_found"},
		{"C1 Infinity with adapters", `{` + msgs + `, "adapters": "/tmp/a", "y": Infinity}`, 400, "unsupported_parameter"},
		{"C1 adapters as NaN", `{` + msgs + `, "adapters": NaN}`, 400, "unsupported_parameter"},
		{"C1 -Infinity with a draft model", `{` + msgs + `, "draft_model": "any/repo", "z": [-Infinity]}`, 400, "unsupported_parameter"},
		{"H1 empty model", `{"model": "", ` + msgs + `}`, 404, "model_not_found"},
		{"model not a string", `{"model": ["a"], ` + msgs + `}`, 400, "invalid_type"},
		{"duplicate keys: Python keeps the last", `{"model": "` + testModel + `", ` + msgs + `, "model": "evil/other"}`, 404, "model_not_found"},
		{"escaped key", `{"mod\u0065l": "evil/other", ` + msgs + `}`, 404, "model_not_found"},
		{"H2 a template of the client's own", `{` + msgs + `, "chat_template_kwargs": {"chat_template": "{% for i in range(100000) %}{% endfor %}"}}`, 400, "unsupported_parameter"},
		{"H2 kwargs not an object", `{` + msgs + `, "chat_template_kwargs": "x"}`, 400, "invalid_type"},
		{"D5 a number in stop", `{` + msgs + `, "stop": [1]}`, 400, "invalid_type"},
		{"D5 null in stop", `{` + msgs + `, "stop": [null]}`, 400, "invalid_type"},
		{"D5 a list in stop", `{` + msgs + `, "stop": [["a"]]}`, 400, "invalid_type"},
		{"too many stops", `{` + msgs + `, "stop": [` + strings.TrimSuffix(strings.Repeat(`"s",`, 17), ",") + `]}`, 400, "invalid_value"},
		{"a long stop", `{` + msgs + `, "stop": "` + strings.Repeat("s", 300) + `"}`, 400, "invalid_value"},
		{"max_tokens over the bound", `{` + msgs + `, "max_tokens": 1000000}`, 400, "invalid_value"},
		{"max_completion_tokens a bool", `{` + msgs + `, "max_completion_tokens": true}`, 400, "invalid_type"},
		{"NaN temperature", `{` + msgs + `, "temperature": NaN}`, 400, "invalid_value"},
		{"a float too large is Python's inf", `{` + msgs + `, "repetition_penalty": 1e400}`, 400, "invalid_value"},
		{"not UTF-8", "{" + msgs + `, "x": "` + "\xff\xfe" + `"}`, 400, "invalid_json"},
		{"too deep", `{` + msgs + `, "x": ` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`, 400, "invalid_json"},
		{"not an object", `[` + msgs + `]`, 400, "invalid_json"},
		{"forged log lines", "not json\n2026-12-06 01:00:00,000 - INFO - Prompt Cache: 9 sequences, 99.0 GB", 400, "invalid_json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := r.post(chatPath, c.body)
			assert.Equal(t, c.status, resp.status, string(resp.body))
			assert.Equal(t, c.code, errorOf(t, resp)["code"])
		})
	}
	// A page's text/plain POST needs no CORS preflight: 415.
	resp := r.do(r.url, http.MethodPost, chatPath, "", "Content-Type", "text/plain")
	assert.Equal(t, http.StatusUnsupportedMediaType, resp.status)
	assert.Empty(t, e.seen(), "no hostile body reached the engine")

	// What is allowed still passes, a null model as default_model.
	for _, body := range []string{
		`{"model": null, ` + msgs + `}`,
		`{` + msgs + `, "chat_template_kwargs": {"enable_thinking": false}, "stop": ["\n\n", "END"], "max_tokens": 32768}`,
		`{` + msgs + `, "stop": "END", "temperature": 0.7, "logit_bias": {"1": NaN}}`,
	} {
		assert.Equal(t, http.StatusOK, r.post(chatPath, body).status, body)
	}
	seen := e.seen()
	require.Len(t, seen, 3)
	var first map[string]any
	require.NoError(t, json.Unmarshal([]byte(seen[0]), &first))
	assert.Equal(t, defaultModelName, first["model"], "a null model is the served one")
}

// Without keys only loopback callers are served ("local"); with keys a
// remote caller must present one, compared whatever its length, and is
// known by its name; a wrong key is 401 from anywhere.
func TestCallersAreKnown(t *testing.T) {
	keys := []APIKey{{Name: "alice", Key: "alice-key-0123456789"}, {Name: "bob", Key: "bob-key-0123456789ab"}}
	req := func(remote, auth string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080"+chatPath, nil)
		r.RemoteAddr = remote
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		return r
	}
	const local, remote = "127.0.0.1:5000", "192.0.2.7:5000"
	for _, c := range []struct {
		name   string
		access Access
		remote string
		auth   string
		client string
		status int
	}{
		{"no keys, loopback", Access{}, local, "", ClientLocal, 0},
		{"no keys, loopback with a dummy token", Access{}, local, "Bearer lm-studio", ClientLocal, 0},
		{"no keys, remote", Access{}, remote, "", "", http.StatusForbidden},
		{"no keys, remote allowed", Access{AllowUnauthenticatedRemote: true}, remote, "", ClientAnonymous, 0},
		{"keys, remote without", Access{APIKeys: keys}, remote, "", "", http.StatusUnauthorized},
		{"keys, remote with", Access{APIKeys: keys}, remote, "Bearer bob-key-0123456789ab", "bob", 0},
		{"keys, scheme in any case", Access{APIKeys: keys}, remote, "bearer alice-key-0123456789", "alice", 0},
		{"keys, wrong key", Access{APIKeys: keys}, remote, "Bearer alice-key-0123456789X", "", http.StatusUnauthorized},
		{"keys, wrong key on loopback", Access{APIKeys: keys}, local, "Bearer nope", "", http.StatusUnauthorized},
		{"keys, loopback without", Access{APIKeys: keys}, local, "", ClientLocal, 0},
		{"keys, loopback must present one", Access{APIKeys: keys, RequireKeyOnLoopback: true}, local, "", "", http.StatusUnauthorized},
	} {
		who, d := newCallers(c.access).admit(req(c.remote, c.auth))
		if c.status != 0 {
			require.NotNil(t, d, c.name)
			assert.Equal(t, c.status, d.status, c.name)
			continue
		}
		require.Nil(t, d, c.name)
		assert.Equal(t, c.client, who.client, c.name)
	}
}

// DNS rebinding: a loopback caller must name this machine; IP addresses,
// localhost and allowed_hosts pass.
func TestHostMustNameThisMachine(t *testing.T) {
	c := newCallers(Access{AllowedHosts: []string{"mlx.lan"}})
	for host, ok := range map[string]bool{
		"127.0.0.1:8080": true, "localhost:8080": true, "LOCALHOST": true, "[::1]:8080": true, "192.168.1.10:8080": true,
		"mlx.lan:8080": true, "app.localhost": true, "evil.example:8080": false, "rebind.attacker.test": false,
	} {
		r := httptest.NewRequest(http.MethodGet, "http://x/health", nil)
		r.RemoteAddr, r.Host = "127.0.0.1:5000", host
		_, d := c.admit(r)
		assert.Equal(t, ok, d == nil, host)
	}
	// Open to the LAN without keys: a rebound name is refused there too.
	open := newCallers(Access{AllowUnauthenticatedRemote: true})
	for host, ok := range map[string]bool{"192.168.1.10:8080": true, "evil.example": false} {
		r := httptest.NewRequest(http.MethodGet, "http://x/health", nil)
		r.RemoteAddr, r.Host = "192.168.1.77:5000", host
		_, d := open.admit(r)
		assert.Equal(t, ok, d == nil, host)
	}
}

// The proxy answers CORS itself: the engine's * is stripped, an origin
// not allowed gets 403, an allowed one its own origin back, and a
// preflight never reaches the engine.
func TestCORSIsTheProxys(t *testing.T) {
	var e recordingEngine
	r := rigWithUpstream(t, e.handler, served(func(c *Config) { c.AllowedOrigins = []string{"http://localhost:3000"} }))
	body := `{"messages": [{"role": "user", "content": "x"}]}`

	plain := r.post(chatPath, body)
	assert.Equal(t, http.StatusOK, plain.status)
	assert.Empty(t, plain.header.Get("Access-Control-Allow-Origin"), "the engine's * is stripped")

	evil := r.do(r.url, http.MethodPost, chatPath, body, "Origin", "https://evil.example")
	assert.Equal(t, http.StatusForbidden, evil.status)
	assert.Equal(t, "origin_not_allowed", errorOf(t, evil)["code"])

	ok := r.do(r.url, http.MethodPost, chatPath, body, "Origin", "http://localhost:3000")
	assert.Equal(t, http.StatusOK, ok.status)
	assert.Equal(t, "http://localhost:3000", ok.header.Get("Access-Control-Allow-Origin"))
	assert.Contains(t, ok.header.Values("Vary"), "Origin")
	assert.Equal(t, "Retry-After, X-Mlx-Trace-Id, X-Mlx-Span-Id", ok.header.Get("Access-Control-Expose-Headers"),
		"a page reads the ids it gives feedback with")

	pre := r.do(r.url, http.MethodOptions, chatPath, "", "Origin", "http://localhost:3000", "Access-Control-Request-Method", "POST")
	assert.Equal(t, http.StatusNoContent, pre.status)
	assert.Equal(t, "http://localhost:3000", pre.header.Get("Access-Control-Allow-Origin"))
	assert.Contains(t, pre.header.Get("Access-Control-Allow-Headers"), "Authorization")
	assert.NotContains(t, pre.header.Get("Access-Control-Allow-Headers"), OriginHeader, "a page is a user's: it may not claim an origin")
	pre = r.do(r.url, http.MethodOptions, chatPath, "", "Origin", "https://evil.example")
	assert.Equal(t, http.StatusForbidden, pre.status)

	assert.Len(t, e.seen(), 2, "only the two allowed posts reached the engine")
}

// With keys, the caller's key is the proxy's: counted under its name and
// never passed on to the engine.
func TestAKeysNameIsTheClientLabel(t *testing.T) {
	var e recordingEngine
	r := rigWithUpstream(t, e.handler, served(func(c *Config) {
		c.APIKeys = []APIKey{{Name: "alice", Key: "alice-key-0123456789"}}
	}))
	body := `{"messages": [{"role": "user", "content": "x"}]}`
	assert.Equal(t, http.StatusOK, r.do(r.url, http.MethodPost, chatPath, body, "Authorization", "Bearer alice-key-0123456789").status)
	assert.Equal(t, http.StatusOK, r.post(chatPath, body).status)
	bad := r.do(r.url, http.MethodPost, chatPath, body, "Authorization", "Bearer wrong")
	assert.Equal(t, http.StatusUnauthorized, bad.status)
	assert.Equal(t, `Bearer realm="mlx-otelcol"`, bad.header.Get("WWW-Authenticate"))

	e.mu.Lock()
	for _, h := range e.header {
		assert.Empty(t, h.Get("Authorization"), "the key is not passed on")
	}
	e.mu.Unlock()
	sc := r.scrape()
	assert.Equal(t, 1.0, value(t, sc, "mlx_client_requests_total", "client", "alice", "status", "2xx"))
	assert.Equal(t, 1.0, value(t, sc, "mlx_client_requests_total", "client", ClientLocal, "status", "2xx"))
	assert.Equal(t, 3.0, value(t, sc, "mlx_client_tokens_total", "client", "alice", "type", "prompt"))
	assert.Equal(t, 1.0, value(t, sc, "mlx_http_refusals_total", "route", "chat_completions", "status", "401"))
}

// /v1/models is served from a short cache filled by one engine call at a
// time; unknown paths and methods are the proxy's.
func TestModelsAreCached(t *testing.T) {
	var e recordingEngine
	r := rigWithUpstream(t, e.handler, served(func(c *Config) { c.ModelsCacheTTL = time.Minute }))
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := r.do(r.url, http.MethodGet, "/v1/models", "")
			assert.Equal(t, http.StatusOK, resp.status)
			assert.Contains(t, string(resp.body), testModel)
			assert.Empty(t, resp.header.Get("Access-Control-Allow-Origin"))
		}()
	}
	wg.Wait()
	assert.Equal(t, int64(1), e.models.Load(), "twenty listings, one scan of the engine's cache")
}

// Connections past max_connections_per_client are closed as soon as they
// are accepted, and counted; headers past max_header_bytes get 431.
func TestConnectionAndHeaderLimits(t *testing.T) {
	var e recordingEngine
	r := rigWithUpstream(t, e.handler, served(func(c *Config) {
		c.MaxConnectionsPerClient, c.MaxHeaderBytes = 2, 8<<10
	}))
	addr := strings.TrimPrefix(r.url, "http://")
	var open []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		open = append(open, c)
	}
	third, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	require.NoError(t, third.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err = fmt.Fprintf(third, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	if err == nil {
		_, err = third.Read(make([]byte, 1))
	}
	assert.Error(t, err, "the third connection from one address is closed")
	third.Close()
	for _, c := range open {
		c.Close()
	}
	assert.Equal(t, 1.0, testutil.ToFloat64(r.proxy.metrics.mlxProxyConnectionsRefusedTotal.WithLabelValues(connRefusedPerClient)))
	// The slots come back when the connections close.
	require.Eventually(t, func() bool {
		resp, err := r.client.Get(r.url + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 5*time.Second, 20*time.Millisecond)

	big, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer big.Close()
	_, err = fmt.Fprintf(big, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: %s\r\n\r\n", strings.Repeat("b", 40<<10))
	require.NoError(t, err)
	resp, _ := rawAnswer(t, big)
	assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode)
	assert.Equal(t, 8<<10, r.proxy.server.MaxHeaderBytes)
}
