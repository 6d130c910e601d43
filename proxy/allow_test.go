package proxy

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/internal/promtext"
)

// countingEngine answers every completion 200 and counts what reached it.
func countingEngine(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			return
		}
		n.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}], "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}`)
	}))
	t.Cleanup(up.Close)
	return up, &n
}

func postBody(t *testing.T, url, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func scrapeProxy(t *testing.T, url string) *promtext.Scrape {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	sc, err := promtext.Parse(b)
	require.NoError(t, err)
	return sc
}

// A request for a model the engine does not serve, or with adapters or a
// draft model, gets the proxy's own OpenAI-shaped error and never reaches
// the engine (which would unload its model to load the other).
func TestUnservedModelsAreRefused(t *testing.T) {
	up, reached := countingEngine(t)
	cfg := DefaultConfig()
	cfg.Upstream, cfg.Model, cfg.TopLogprobs = up.URL, testModel, 0
	p, url := startProxy(t, cfg)

	for _, body := range []string{
		`{"messages": [{"role": "user", "content": "x"}]}`,
		`{"model": "default_model", "messages": [{"role": "user", "content": "x"}]}`,
		`{"model": "` + testModel + `", "messages": [{"role": "user", "content": "x"}], "adapters": null}`,
	} {
		status, _ := postBody(t, url, body)
		assert.Equal(t, http.StatusOK, status, body)
	}
	require.Equal(t, int64(3), reached.Load(), "served requests reach the engine")

	status, out := postBody(t, url, `{"model": "mlx-community/Made-Up-70B", "messages": [{"role": "user", "content": "x"}]}`)
	assert.Equal(t, http.StatusNotFound, status)
	e, _ := out["error"].(map[string]any)
	assert.Equal(t, "model_not_found", e["code"])
	assert.Equal(t, "invalid_request_error", e["type"])
	assert.Equal(t, "model", e["param"])
	assert.Contains(t, e["message"], "mlx-community/Made-Up-70B")
	for _, member := range []string{"adapters", "draft_model"} {
		status, out = postBody(t, url, `{"messages": [{"role": "user", "content": "x"}], "`+member+`": "/tmp/other-weights"}`)
		assert.Equal(t, http.StatusBadRequest, status, member)
		e, _ = out["error"].(map[string]any)
		assert.Equal(t, member, e["param"])
	}
	assert.Equal(t, int64(3), reached.Load(), "no refused request reached the engine")

	settle(p)
	sc := scrapeProxy(t, url)
	assert.Equal(t, 1.0, value(t, sc, "mlx_http_refusals_total", "route", "chat_completions", "status", "404"))
	assert.Equal(t, 2.0, value(t, sc, "mlx_http_refusals_total", "route", "chat_completions", "status", "400"))
	assert.Equal(t, 3.0, value(t, sc, "mlx_error_total", "model", otherLabel, "status", "4xx", "kind", KindChat)+
		value(t, sc, "mlx_error_total", "model", testModel, "status", "4xx", "kind", KindChat))
}

// Configured served models pass, and "*" lets every model through.
func TestServedModelsAndAnyModel(t *testing.T) {
	up, reached := countingEngine(t)
	cfg := DefaultConfig()
	cfg.Upstream, cfg.Model, cfg.TopLogprobs = up.URL, testModel, 0
	cfg.ServedModels = []string{testModel, "mlx-community/Qwen3-1.7B-4bit"}
	_, url := startProxy(t, cfg)
	status, _ := postBody(t, url, `{"model": "mlx-community/Qwen3-1.7B-4bit", "messages": []}`)
	assert.Equal(t, http.StatusOK, status)
	cfg.ServedModels, cfg.AllowAdapters = []string{AnyModel}, true
	_, url = startProxy(t, cfg)
	status, _ = postBody(t, url, `{"model": "anything/at-all", "adapters": "/a", "messages": []}`)
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, int64(2), reached.Load())
}

var modelOf = regexp.MustCompile(`model="([^"]*)"`)

// Junk model names take no model label slot: with every junk name tried
// (and, with "*", answered by the engine as errors), a real second model
// is still counted under its own name.
func TestJunkModelNamesTakeNoLabelSlots(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			return
		}
		var req struct {
			Model string `json:"model"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		if strings.HasPrefix(req.Model, "junk-") {
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error": "model not found"}`)
			return
		}
		_, _ = io.WriteString(w, `{"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}`)
	}))
	t.Cleanup(up.Close)
	for _, served := range [][]string{nil, {AnyModel}} {
		cfg := DefaultConfig()
		cfg.Upstream, cfg.Model, cfg.TopLogprobs = up.URL, testModel, 0
		cfg.ServedModels = served
		p, url := startProxy(t, cfg)
		for i := range 1000 {
			postBody(t, url, fmt.Sprintf(`{"model": "junk-%d", "messages": []}`, i))
		}
		if served != nil {
			status, _ := postBody(t, url, `{"model": "mlx-community/Second-Model", "messages": []}`)
			require.Equal(t, http.StatusOK, status)
		}
		settle(p)
		sc := scrapeProxy(t, url)
		models := map[string]bool{}
		for _, s := range sc.Series("mlx_requests_total") {
			if m := modelOf.FindStringSubmatch(s); m != nil {
				models[m[1]] = true
			}
		}
		assert.LessOrEqual(t, len(models), cfg.MaxModelLabelValues+1, "%v", models)
		for m := range models {
			assert.False(t, strings.HasPrefix(m, "junk-"), "junk name %s took a label slot", m)
		}
		if served != nil {
			assert.True(t, models["mlx-community/Second-Model"], "the real second model keeps its name: %v", models)
		}
	}
}
