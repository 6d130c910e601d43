package proxy

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingEngine answers every completion 200 and counts in n what
// reached it.
func countingEngine(n *atomic.Int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			return
		}
		n.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}], "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}`)
	}
}

// served configures a rig's proxy for testModel, without logprobs
// injected (the bodies reach the engine as sent), then applies more.
func served(more ...func(*Config)) func(*Config) {
	return func(c *Config) {
		c.Model, c.TopLogprobs = testModel, 0
		for _, f := range more {
			f(c)
		}
	}
}

// errorOf is the OpenAI error object of an answer.
func errorOf(t *testing.T, resp response) map[string]any {
	t.Helper()
	var out struct {
		Error map[string]any `json:"error"`
	}
	require.NoError(t, json.Unmarshal(resp.body, &out), string(resp.body))
	return out.Error
}

const chatPath = "/v1/chat/completions"

// A request for a model the engine does not serve, or with adapters or a
// draft model, gets the proxy's own OpenAI-shaped error and never reaches
// the engine (which would unload its model to load the other).
func TestUnservedModelsAreRefused(t *testing.T) {
	var reached atomic.Int64
	r := rigWithUpstream(t, countingEngine(&reached), served())

	for _, body := range []string{
		`{"messages": [{"role": "user", "content": "x"}]}`,
		`{"model": "default_model", "messages": [{"role": "user", "content": "x"}]}`,
		`{"model": "` + testModel + `", "messages": [{"role": "user", "content": "x"}], "adapters": null}`,
	} {
		assert.Equal(t, http.StatusOK, r.post(chatPath, body).status, body)
	}
	require.Equal(t, int64(3), reached.Load(), "served requests reach the engine")

	resp := r.post(chatPath, `{"model": "mlx-community/Made-Up-70B", "messages": [{"role": "user", "content": "x"}]}`)
	assert.Equal(t, http.StatusNotFound, resp.status)
	e := errorOf(t, resp)
	assert.Equal(t, "model_not_found", e["code"])
	assert.Equal(t, "invalid_request_error", e["type"])
	assert.Equal(t, "model", e["param"])
	assert.Contains(t, e["message"], "mlx-community/Made-Up-70B")
	for _, member := range []string{"adapters", "draft_model"} {
		resp = r.post(chatPath, `{"messages": [{"role": "user", "content": "x"}], "`+member+`": "/tmp/other-weights"}`)
		assert.Equal(t, http.StatusBadRequest, resp.status, member)
		assert.Equal(t, member, errorOf(t, resp)["param"])
	}
	assert.Equal(t, int64(3), reached.Load(), "no refused request reached the engine")

	sc := r.scrape()
	assert.Equal(t, 1.0, value(t, sc, "mlx_http_refusals_total", "route", "chat_completions", "status", "404"))
	assert.Equal(t, 2.0, value(t, sc, "mlx_http_refusals_total", "route", "chat_completions", "status", "400"))
	assert.Equal(t, 3.0, value(t, sc, "mlx_requests_total", "model", testModel, "streaming", "false", "kind", KindChat),
		"a refusal is not a request of the service (account.go, refuse)")
	assert.Equal(t, 0.0, value(t, sc, "mlx_error_total", "model", testModel, "status", "4xx", "kind", KindChat), "nor an error")
	_, other := sc.Value("mlx_requests_total", "model", otherLabel)
	assert.False(t, other, "nor a request under another model label")
}

// Configured served models pass, and "*" lets every model through.
func TestServedModelsAndAnyModel(t *testing.T) {
	var reached atomic.Int64
	r := rigWithUpstream(t, countingEngine(&reached), served(func(c *Config) {
		c.ServedModels = []string{testModel, "mlx-community/Qwen3-1.7B-4bit"}
	}))
	assert.Equal(t, http.StatusOK, r.post(chatPath, `{"model": "mlx-community/Qwen3-1.7B-4bit", "messages": []}`).status)
	r = rigWithUpstream(t, countingEngine(&reached), served(func(c *Config) {
		c.ServedModels, c.AllowAdapters = []string{AnyModel}, true
	}))
	assert.Equal(t, http.StatusOK, r.post(chatPath, `{"model": "anything/at-all", "adapters": "/a", "messages": []}`).status)
	assert.Equal(t, int64(2), reached.Load())
}

var modelOf = regexp.MustCompile(`model="([^"]*)"`)

// Junk model names take no model label slot: with every junk name tried
// (and, with "*", answered by the engine as errors), a real second model
// is still counted under its own name.
func TestJunkModelNamesTakeNoLabelSlots(t *testing.T) {
	engine := func(w http.ResponseWriter, r *http.Request) {
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
	}
	for _, models := range [][]string{nil, {AnyModel}} {
		r := rigWithUpstream(t, engine, served(func(c *Config) { c.ServedModels = models }))
		for i := range 1000 {
			r.post(chatPath, fmt.Sprintf(`{"model": "junk-%d", "messages": []}`, i))
		}
		if models != nil {
			require.Equal(t, http.StatusOK, r.post(chatPath, `{"model": "mlx-community/Second-Model", "messages": []}`).status)
		}
		labels := map[string]bool{}
		for _, s := range r.scrape().Series("mlx_requests_total") {
			if m := modelOf.FindStringSubmatch(s); m != nil {
				labels[m[1]] = true
			}
		}
		assert.LessOrEqual(t, len(labels), DefaultConfig().MaxModelLabelValues+1, "%v", labels)
		for m := range labels {
			assert.False(t, strings.HasPrefix(m, "junk-"), "junk name %s took a label slot", m)
		}
		if models != nil {
			assert.True(t, labels["mlx-community/Second-Model"], "the real second model keeps its name: %v", labels)
		}
	}
}
