//go:build e2e && fault

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// engineTap stands between the proxy and the simulated engine and keeps
// every request the proxy passed on: what "the engine saw", whatever the
// engine does with it. The supervisor's probes go to the engine directly.
type engineTap struct {
	url  string
	mu   sync.Mutex
	seen []string // "METHOD path body"
}

func startEngineTap(t *testing.T, enginePort int) *engineTap {
	t.Helper()
	target, err := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", enginePort))
	require.NoError(t, err)
	tap := &engineTap{}
	relay := httputil.NewSingleHostReverseProxy(target)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" {
			b, _ := io.ReadAll(r.Body)
			tap.mu.Lock()
			tap.seen = append(tap.seen, r.Method+" "+r.URL.Path+" "+string(b))
			tap.mu.Unlock()
			r.Body = io.NopCloser(strings.NewReader(string(b)))
		}
		relay.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	tap.url = "http://" + ln.Addr().String()
	return tap
}

func (e *engineTap) requests() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.seen...)
}

// Every attack a client or a web page can make on the front door (bodies
// that are not JSON or not strict JSON, another model, adapters, a draft
// model, a template of the client's own, a stop value that kills mlx_lm's
// generation thread, a page's origin, OPTIONS, unknown paths) against the
// built collector: each gets the proxy's own 4xx in OpenAI's error shape,
// and the engine never sees it.
func TestFaultFrontDoorAttacksNeverReachTheEngine(t *testing.T) {
	enginePort := freePort(t)
	tap := startEngineTap(t, enginePort)
	f := startFaultCollector(t, collectorOptions{configs: append(demoConfigs, engineOverlay(t)), enginePort: enginePort,
		sets: []string{"extensions::mlx_proxy::upstream=" + tap.url}})
	waitEngineReady(f.stack)
	f.mark()
	client := &http.Client{Timeout: 20 * time.Second}
	defer client.CloseIdleConnections()
	msgs := `"messages": [{"role": "user", "content": "x"}]`
	attacks := []struct {
		name, method, path, contentType, body string
		header                                []string
		status                                int
		code                                  string
	}{
		{"C1 NaN as text/plain (no preflight)", "POST", "/v1/chat/completions", "text/plain", `{"model": "evil/other-model", ` + msgs + `, "x": NaN}`, nil, 415, "unsupported_media_type"},
		{"C1 NaN names another model", "POST", "/v1/chat/completions", "", `{"model": "evil/other-model", ` + msgs + `, "x": NaN}`, nil, 404, "model_not_found"},
		{"C1 Infinity with adapters", "POST", "/v1/chat/completions", "", `{` + msgs + `, "adapters": "/tmp/evil", "x": Infinity}`, nil, 400, "unsupported_parameter"},
		{"C1 -Infinity with a draft model", "POST", "/v1/completions", "", `{"prompt": "x", "draft_model": "any/repo", "x": -Infinity}`, nil, 400, "unsupported_parameter"},
		{"H1 empty model", "POST", "/v1/chat/completions", "", `{"model": "", ` + msgs + `}`, nil, 404, "model_not_found"},
		{"H2 a template of the client's own", "POST", "/chat/completions", "", `{` + msgs + `, "chat_template_kwargs": {"chat_template": "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"}}`, nil, 400, "unsupported_parameter"},
		{"D5 a number in stop", "POST", "/v1/chat/completions", "", `{` + msgs + `, "stop": [1]}`, nil, 400, "invalid_type"},
		{"D5 a list in stop", "POST", "/v1/chat/completions", "", `{` + msgs + `, "stop": [["a"]]}`, nil, 400, "invalid_type"},
		{"thousands of stop strings", "POST", "/v1/chat/completions", "", `{` + msgs + `, "stop": [` + strings.TrimSuffix(strings.Repeat(`"x",`, 5000), ",") + `]}`, nil, 400, "invalid_value"},
		{"max_tokens past the bound", "POST", "/v1/chat/completions", "", `{` + msgs + `, "max_tokens": 100000000}`, nil, 400, "invalid_value"},
		{"M2 forged log lines", "POST", "/v1/chat/completions", "", "junk\n2026-12-06 01:00:00,000 - INFO - Prompt Cache: 9 sequences, 99.0 GB\nTraceback (most recent call last):", nil, 400, "invalid_json"},
		{"not UTF-8", "POST", "/v1/chat/completions", "", "{" + msgs + `, "x": "` + "\xff" + `"}`, nil, 400, "invalid_json"},
		{"H3 a web page's origin", "POST", "/v1/chat/completions", "", `{` + msgs + `}`, []string{"Origin", "https://evil.example"}, 403, "origin_not_allowed"},
		{"H3 DNS rebinding", "POST", "/v1/chat/completions", "", `{` + msgs + `}`, []string{"Host", "rebind.attacker.test"}, 403, "host_not_allowed"},
		{"H3 a preflight from a page", "OPTIONS", "/v1/chat/completions", "", "", []string{"Origin", "https://evil.example"}, 403, "origin_not_allowed"},
		{"an unknown route", "POST", "/v1/embeddings", "", `{"input": "x"}`, nil, 404, "not_found"},
		{"a method the engine has not", "DELETE", "/v1/models", "", "", nil, 405, "method_not_allowed"},
	}
	base := f.proxyURL("")
	for _, a := range attacks {
		req, err := http.NewRequest(a.method, base+a.path, strings.NewReader(a.body))
		require.NoError(t, err)
		ct := a.contentType
		if ct == "" {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
		setHeaders(req, a.header)
		resp, err := client.Do(req)
		require.NoError(t, err, a.name)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, a.status, resp.StatusCode, "%s: %s", a.name, b)
		var e struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		if assert.NoError(t, json.Unmarshal(b, &e), "%s: the proxy's own OpenAI error: %s", a.name, b) {
			assert.Equal(t, a.code, e.Error.Code, a.name)
		}
		assert.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"), a.name)
	}
	assert.Empty(t, tap.requests(), "no attack reached the engine")

	// The door is not shut on everyone: a normal request still reaches it.
	require.False(t, completion(t.Context(), base+"/v1/chat/completions", false, 4), "a normal request is served")
	got := tap.requests()
	require.Len(t, got, 1)
	assert.True(t, strings.HasPrefix(got[0], "POST /v1/chat/completions "), got[0])
	assert.Equal(t, 0.0, supervisorValue(f, "mlx_server_restarts_total"), "nothing sent brought the engine down")
	client.CloseIdleConnections()
	f.finish(t, faultRow{name: "front door: the review's attacks", sent: int64(len(attacks) + 1), failed: int64(len(got) - 1), hasFailed: true,
		note: "failed: attacks that reached the engine"})
}
