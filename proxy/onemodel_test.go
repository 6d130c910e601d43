package proxy

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every request for the served model reaches the engine as
// "default_model", so mlx_lm never drains its batch between two names of
// one model; the client's answer still says the name it sent, streamed or
// not, byte for byte as mlx_lm would have echoed it.
func TestOneModelNameOnTheWire(t *testing.T) {
	var seen []string
	engine := func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			return
		}
		b, _ := io.ReadAll(r.Body)
		var req struct {
			Model  string `json:"model"`
			Stream bool   `json:"stream"`
		}
		_ = json.Unmarshal(b, &req)
		seen = append(seen, req.Model)
		if req.Stream {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, `data: {"id": "c1", "model": "`+req.Model+`", "choices": [{"index": 0, "finish_reason": null, "delta": {"role": "assistant", "content": "hi \"model\": \"default_model\""}}]}`+"\n\n")
			_, _ = io.WriteString(w, `data: {"id": "c1", "model": "`+req.Model+`", "choices": [{"index": 0, "finish_reason": "stop", "delta": {}}]}`+"\n\ndata: [DONE]\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id": "c1", "model": "`+req.Model+`", "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "hi"}}], "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}`)
	}
	r := rigWithUpstream(t, engine, served())
	msgs := `"messages": [{"role": "user", "content": "x"}]`

	plain := r.post(chatPath, `{"model": "`+testModel+`", `+msgs+`}`)
	require.Equal(t, http.StatusOK, plain.status)
	assert.Contains(t, string(plain.body), `"model": "`+testModel+`"`)
	assert.Equal(t, plain.header.Get("Content-Length"), strconv.Itoa(len(plain.body)))

	stream := r.post(chatPath, `{"model": "`+testModel+`", `+msgs+`, "stream": true, "stream_options": {"include_usage": true}}`)
	require.Equal(t, http.StatusOK, stream.status)
	assert.Equal(t, 2, strings.Count(string(stream.body), `"model": "`+testModel+`"`), "every chunk: %s", stream.body)
	assert.Contains(t, string(stream.body), `hi \"model\": \"default_model\"`, "text in the content is the model's own")

	assert.Equal(t, http.StatusOK, r.post(chatPath, `{"model": null, `+msgs+`}`).status)
	assert.Equal(t, http.StatusOK, r.post(chatPath, `{`+msgs+`}`).status)
	// Absent, mlx_lm reads it as default_model itself (body.get("model",
	// "default_model")): the body goes as it came.
	assert.Equal(t, []string{defaultModelName, defaultModelName, defaultModelName, ""}, seen,
		"the engine saw one name for the served model")
}

func TestPythonString(t *testing.T) {
	for in, want := range map[string]string{
		"mlx-community/Qwen3-4B-4bit": `"mlx-community/Qwen3-4B-4bit"`,
		`a"b\c`:                       `"a\"b\\c"`,
		"é":                           `"\u00e9"`,
		"😀":                           `"\ud83d\ude00"`,
	} {
		assert.Equal(t, want, string(pythonString(in)), in)
	}
}
