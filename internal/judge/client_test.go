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
	var got map[string]any
	reply := `{"id": "c", "object": "chat.completion", "model": "default_model", "created": 1, "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "{\"correctness\": 4}", "reasoning": "Let me think."}}]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &got)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, reply)
	}))
	defer srv.Close()
	c := NewClient(srv.URL+"/v1", "default_model", "k", 5*time.Second)
	content, err := c.Ask(context.Background(), "grade this")
	require.NoError(t, err)
	assert.Equal(t, `{"correctness": 4}`, content)
	assert.Equal(t, map[string]any{"enable_thinking": false}, got["chat_template_kwargs"])
	assert.EqualValues(t, judgeMaxTokens, got["max_tokens"])

	reply = `{"id": "c", "object": "chat.completion", "model": "default_model", "created": 1, "choices": [{"index": 0, "finish_reason": "length", "message": {"role": "assistant", "content": null, "reasoning": "Let me think for ever"}}]}`
	_, err = c.Ask(context.Background(), "grade this")
	assert.ErrorContains(t, err, "ran out of tokens")
}
