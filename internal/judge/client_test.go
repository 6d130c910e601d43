package judge

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The judge turns thinking off for its own requests, gives the answer
// room, and reads the final content, not the reasoning.
func TestClientTurnsThinkingOffAndReadsTheContent(t *testing.T) {
	var (
		got    map[string]any
		header http.Header
		status = http.StatusOK
	)
	reply := `{"id": "c", "object": "chat.completion", "model": "default_model", "created": 1, "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "{\"correctness\": 4}", "reasoning": "Let me think."}}]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &got)
		header = r.Header
		assert.Equal(t, "/v1/chat/completions", r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, reply)
	}))
	defer srv.Close()
	c := NewClient(srv.URL+"/v1", "default_model", "k", 5*time.Second)
	content, err := c.Ask(context.Background(), "grade this")
	require.NoError(t, err)
	assert.Equal(t, `{"correctness": 4}`, content)
	assert.Equal(t, map[string]any{"enable_thinking": false}, got["chat_template_kwargs"])
	assert.EqualValues(t, judgeMaxTokens, got["max_tokens"])
	assert.Equal(t, map[string]any{"model": "default_model", "max_tokens": float64(judgeMaxTokens), "temperature": float64(0),
		"messages": []any{map[string]any{"role": "user", "content": "grade this"}}, "chat_template_kwargs": map[string]any{"enable_thinking": false}}, got)
	assert.Equal(t, "0", header.Get("X-Mlx-Trace"), "the judge's requests are not traced")
	assert.Equal(t, "judge", header.Get("X-Mlx-Origin"))
	assert.Equal(t, "Bearer k", header.Get("Authorization"))
	assert.Equal(t, "OpenAI/Go 3.99.0", header.Get("User-Agent"), "as the access log has always shown the judge")

	reply = `{"id": "c", "object": "chat.completion", "model": "default_model", "created": 1, "choices": [{"index": 0, "finish_reason": "length", "message": {"role": "assistant", "content": null, "reasoning": "Let me think for ever"}}]}`
	_, err = c.Ask(context.Background(), "grade this")
	assert.ErrorContains(t, err, "ran out of tokens")

	status = http.StatusBadRequest
	_, err = c.Ask(context.Background(), "grade this")
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusBadRequest, apiErr.StatusCode)
}

// A judge at an endpoint of its own (OpenAI's API refuses unknown fields)
// is sent no chat_template_kwargs, with its key and the room configured.
func TestClientForAHostedJudge(t *testing.T) {
	var got map[string]any
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &got)
		auth = r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id": "c", "object": "chat.completion", "model": "gpt-judge", "created": 1, "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "{}"}}]}`)
	}))
	defer srv.Close()
	c := NewClient(srv.URL+"/v1", "gpt-judge", "sk-test", 5*time.Second)
	c.ThinkingOff, c.MaxTokens = false, 4096
	_, err := c.Ask(context.Background(), "grade this")
	require.NoError(t, err)
	assert.NotContains(t, got, "chat_template_kwargs")
	assert.EqualValues(t, 4096, got["max_tokens"])
	assert.Equal(t, "gpt-judge", got["model"])
	assert.Equal(t, "Bearer sk-test", auth)
}

func TestLocalEndpoint(t *testing.T) {
	for base, local := range map[string]bool{
		"http://127.0.0.1:8080/v1": true, "http://10.0.0.2:8081/v1": true, "http://big-mac.local:8080/v1": true,
		"http://judge:8000/v1": true, "http://[::1]:8080/v1": true,
		"https://api.openai.com/v1": false, "https://openrouter.ai/api/v1": false, "http://203.0.113.9/v1": false,
	} {
		assert.Equal(t, local, LocalEndpoint(base), base)
	}
}
