package proxy

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// For an answer that is only a tool call, the engine streams exactly two
// chunks: the call with its index, then the finish reason. The re-emitted
// stream is that, byte for byte (ids aside).
func TestDestreamToolCallIsTheEngineStreamByteForByte(t *testing.T) {
	r := newRig(t)
	nonStreamed := r.do(r.direct, http.MethodPost, "/v1/chat/completions", toolBody)
	streamed := r.do(r.direct, http.MethodPost, "/v1/chat/completions", toolStreamBody)
	require.Equal(t, http.StatusOK, nonStreamed.status)

	out, err := destream(nonStreamed.body, false)
	require.NoError(t, err)
	var events []string
	for _, ev := range sseEvents(streamed.body) {
		if !strings.HasPrefix(ev, ":") {
			events = append(events, ev)
		}
	}
	assert.Equal(t, normalize([]byte(strings.Join(events, ""))), normalize(out))
}

// The usage chunk is the engine's: object chat.completion, no choices.
func TestDestreamUsageChunk(t *testing.T) {
	body := `{"id": "x", "system_fingerprint": "fp", "object": "chat.completion", "model": "m", "created": 5, "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "caf\u00e9"}}], "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}}`
	out, err := destream([]byte(body), true)
	require.NoError(t, err)
	assert.Equal(t, `data: {"id": "x", "system_fingerprint": "fp", "object": "chat.completion.chunk", "model": "m", "created": 5, "choices": [{"index": 0, "finish_reason": null, "delta": {"role": "assistant", "content": "caf\u00e9"}}]}

data: {"id": "x", "system_fingerprint": "fp", "object": "chat.completion.chunk", "model": "m", "created": 5, "choices": [{"index": 0, "finish_reason": "stop", "delta": {"role": "assistant"}}]}

data: {"id": "x", "system_fingerprint": "fp", "object": "chat.completion", "model": "m", "created": 5, "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}}

data: [DONE]

`, string(out))
}

func TestDestreamRefusesWhatIsNoCompletion(t *testing.T) {
	for _, body := range []string{``, `[]`, `{"error": "x"}`, `{"choices": 3}`, `{"choices": [{"message": 1}]}`, `{"choices": [`} {
		_, err := destream([]byte(body), true)
		assert.Error(t, err, body)
	}
}

// Whatever the engine sends, destream does not panic, and what it returns
// is a stream of JSON events ending in [DONE].
func FuzzDestream(f *testing.F) {
	f.Add([]byte(`{"id": "x", "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null, "reasoning": "r", "tool_calls": [{"function": {"name": "f", "arguments": "{}"}, "type": "function", "id": "1"}, {}]}}], "usage": {"prompt_tokens": 1}}`), true)
	f.Add([]byte(`{"choices": [{"logprobs": {"content": [{"id": 1, "logprob": NaN}]}, "message": {"content": "a"}}]}`), false)
	f.Add([]byte(`{"choices": [], "choices": [{"index": 2}]}`), true)
	f.Fuzz(func(t *testing.T, body []byte, usage bool) {
		out, err := destream(body, usage)
		if err != nil {
			return
		}
		events := sseEvents(out)
		require.NotEmpty(t, events)
		require.Equal(t, "data: [DONE]\n\n", events[len(events)-1])
		for _, ev := range events[:len(events)-1] {
			data, ok := strings.CutPrefix(ev, "data: ")
			require.True(t, ok, ev)
			require.True(t, json.Valid([]byte(strings.TrimSuffix(data, "\n\n"))), "%q", data)
		}
	})
}

// A tool call without "index" gets its position added before its "}", with
// json.dumps's separators (jsonedit.Close).
func TestIndexedToolCallsBytes(t *testing.T) {
	out, err := indexedToolCalls([]byte(`[{"id": "1"}, {}, {"index": 5}, 7, {"a":1 }, { }]`))
	require.NoError(t, err)
	assert.Equal(t, `[{"id": "1", "index": 0}, {"index": 1}, {"index": 5}, 7, {"a":1 , "index": 4}, { "index": 5}]`, string(out))
}
