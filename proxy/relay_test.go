package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	chatBody         = `{"model": "mlx-community/Qwen3-4B-4bit", "messages": [{"role": "user", "content": "Say hello"}], "max_tokens": 24}`
	chatStreamBody   = `{"model": "mlx-community/Qwen3-4B-4bit", "messages": [{"role": "user", "content": "Tell me a story"}], "max_tokens": 40, "stream": true}`
	chatUsageBody    = `{"messages": [{"role": "user", "content": "Count"}], "max_tokens": 16, "stream": true, "stream_options": {"include_usage": true}}`
	textBody         = `{"prompt": "Once upon a time", "max_tokens": 20}`
	textStreamBody   = `{"prompt": "Once upon a time", "max_tokens": 20, "stream": true}`
	toolsJSON        = `[{"type": "function", "function": {"name": "get_weather", "description": "Weather for a city", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]`
	toolBody         = `{"messages": [{"role": "user", "content": "Use get_weather for Paris"}], "tools": ` + toolsJSON + `}`
	toolStreamBody   = `{"messages": [{"role": "user", "content": "Use get_weather for Paris"}], "tools": ` + toolsJSON + `, "stream": true}`
	reasoningBody    = `{"messages": [{"role": "user", "content": "Think first"}], "max_tokens": 80, "stream": true, "chat_template_kwargs": {"enable_thinking": true}}`
	textCompletionOK = "text_completion"
)

// What the client receives through the proxy is what it receives from the
// engine directly, byte for byte, but for the ids and timestamps that
// differ between any two runs.
func TestRelayEqualsDirect(t *testing.T) {
	r := newRig(t)
	cases := []struct {
		name, method, path, body string
		check                    func(t *testing.T, body string)
	}{
		{"chat", "POST", "/v1/chat/completions", chatBody, func(t *testing.T, b string) {
			assert.Contains(t, b, `"object": "chat.completion"`)
			assert.Contains(t, b, `"usage"`)
		}},
		{"chat stream", "POST", "/v1/chat/completions", chatStreamBody, func(t *testing.T, b string) {
			assert.Contains(t, b, "data: [DONE]")
			assert.NotContains(t, b, `"usage"`, "the client did not ask for usage")
		}},
		{"chat stream with usage asked", "POST", "/chat/completions", chatUsageBody, func(t *testing.T, b string) {
			assert.Contains(t, b, `"usage"`, "the client asked for usage: it gets it")
		}},
		{"text completion", "POST", "/v1/completions", textBody, func(t *testing.T, b string) {
			assert.Contains(t, b, textCompletionOK)
		}},
		{"text completion stream", "POST", "/v1/completions", textStreamBody, func(t *testing.T, b string) {
			assert.Contains(t, b, "data: [DONE]")
			assert.NotContains(t, b, `"usage"`)
		}},
		{"tool call", "POST", "/v1/chat/completions", toolBody, func(t *testing.T, b string) {
			assert.Contains(t, b, `"tool_calls"`)
			assert.Contains(t, b, `"get_weather"`)
		}},
		{"tool call stream", "POST", "/v1/chat/completions", toolStreamBody, func(t *testing.T, b string) {
			assert.Contains(t, b, `"tool_calls"`)
			assert.Contains(t, b, `"finish_reason": "tool_calls"`)
		}},
		{"reasoning stream", "POST", "/v1/chat/completions", reasoningBody, func(t *testing.T, b string) {
			assert.Contains(t, b, `"reasoning"`)
		}},
		{"models", "GET", "/v1/models", "", func(t *testing.T, b string) {
			assert.Contains(t, b, testModel)
		}},
		{"health", "GET", "/health", "", func(t *testing.T, b string) {
			assert.Equal(t, `{"status": "ok"}`, b)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			direct := r.do(r.direct, c.method, c.path, c.body)
			via := r.do(r.url, c.method, c.path, c.body)
			assert.Equal(t, direct.status, via.status)
			assert.Equal(t, normalize(direct.body), normalize(via.body))
			for _, h := range []string{"Content-Type", "Server"} {
				assert.Equal(t, direct.header.Values(h), via.header.Values(h), h)
			}
			assert.Equal(t, []string{"*"}, direct.header.Values("Access-Control-Allow-Origin"), "the engine answers every origin")
			assert.Empty(t, via.header.Values("Access-Control-Allow-Origin"), "the proxy answers none but those allowed")
			if c.check != nil {
				c.check(t, string(via.body))
			}
		})
	}
}

// What the engine must not see, the proxy answers itself: an unknown
// path, a preflight, a body that is not a JSON object.
func TestProxyAnswersWhatTheEngineMustNotSee(t *testing.T) {
	var reached atomic.Int64
	r := rigWithUpstream(t, countingEngine(&reached), served())
	for _, c := range []struct {
		method, path, body string
		status             int
		code               string
	}{
		{"POST", "/v1/embeddings", "{}", http.StatusNotFound, "not_found"},
		{"GET", "/v1/chat/completions", "", http.StatusMethodNotAllowed, "method_not_allowed"},
		{"DELETE", "/v1/models", "", http.StatusMethodNotAllowed, "method_not_allowed"},
		{"POST", "/v1/chat/completions", `{"messages": [`, http.StatusBadRequest, "invalid_json"},
		{"POST", "/v1/chat/completions", `[1, 2]`, http.StatusBadRequest, "invalid_json"},
		{"POST", "/v1/chat/completions", ` `, http.StatusBadRequest, "invalid_json"},
		{"POST", "/v1/chat/completions", "{\"messages\": [], \"x\": \"\xff\"}", http.StatusBadRequest, "invalid_json"},
		{"POST", "/v1/chat/completions", strings.Repeat("[", 200) + strings.Repeat("]", 200), http.StatusBadRequest, "invalid_json"},
	} {
		resp := r.do(r.url, c.method, c.path, c.body)
		assert.Equal(t, c.status, resp.status, "%s %s %.40q", c.method, c.path, c.body)
		assert.Equal(t, c.code, errorOf(t, resp)["code"], "%s %s %.40q", c.method, c.path, c.body)
	}
	opt := r.do(r.url, "OPTIONS", "/v1/chat/completions", "")
	assert.Equal(t, http.StatusNoContent, opt.status)
	assert.Empty(t, opt.header.Values("Access-Control-Allow-Origin"))
	assert.Zero(t, reached.Load(), "none of them reached the engine")
}

// The engine sees the client's headers, Authorization included, and a
// Content-Length even when the client sent its body chunked (mlx_lm
// answers 411 without one); a rewritten body has its new length.
func TestRequestReachesTheEngineWithItsHeaders(t *testing.T) {
	type seen struct {
		header        http.Header
		contentLength int64
		te            []string
		body          string
	}
	got := make(chan seen, 4)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			return // the proxy's probe
		}
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Header.Clone(), r.ContentLength, r.TransferEncoding, string(b)}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"choices": []}`)
	}))
	t.Cleanup(up.Close)
	cfg := DefaultConfig()
	cfg.Upstream = up.URL
	cfg.TopLogprobs = 0 // no logprobs injected: the body is the client's
	_, url := startProxy(t, cfg)
	client := testClient(t)

	// A chunked body (no Content-Length) with the client's own headers.
	req, err := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", io.MultiReader(strings.NewReader(`{"messages": []`), strings.NewReader(`}`)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer sk-secret")
	req.Header.Set("X-Custom", "kept")
	req.Header.Set("X-Forwarded-For", "10.1.2.3")
	req.Header.Set("User-Agent", "my-client/1.0")
	resp, err := client.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	s := <-got
	assert.Equal(t, "Bearer sk-secret", s.header.Get("Authorization"))
	assert.Equal(t, "kept", s.header.Get("X-Custom"))
	assert.Equal(t, "10.1.2.3", s.header.Get("X-Forwarded-For"), "forwarding headers pass as the client sent them")
	assert.Equal(t, "my-client/1.0", s.header.Get("User-Agent"))
	assert.Equal(t, int64(len(`{"messages": []}`)), s.contentLength)
	assert.Empty(t, s.te, "not chunked upstream")
	assert.Equal(t, `{"messages": []}`, s.body, "the body passes unchanged")

	// A stream without usage asked: the body gains stream_options and the
	// length follows.
	resp, err = client.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(`{"stream": true, "messages": []}`))
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	s = <-got
	assert.Equal(t, `{"stream_options": {"include_usage": true}, "stream": true, "messages": []}`, s.body)
	assert.Equal(t, int64(len(s.body)), s.contentLength)
	assert.Empty(t, s.header.Values("X-Forwarded-For"), "the proxy adds no forwarding headers of its own")
}
