package proxy

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
)

func TestErrorMessageOf(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		// mlx_lm v0.31.3 server.py: {"error": str(e)}.
		{`{"error": "Only 'text' content type is supported."}`, "Only 'text' content type is supported."},
		// OpenAI's shape (the proxy's own refusals, other engines).
		{`{"error": {"message": "too long", "type": "invalid_request_error"}}`, "too long"},
		// FastAPI's (vLLM's) shapes.
		{`{"detail": "Not Found"}`, "Not Found"},
		{`{"object": "error", "message": "bad model", "code": 404}`, "bad model"},
		{"Bad Gateway\n", "Bad Gateway"},
		{`{"error": 3}`, ""},
		{``, ""},
		{`{"error": "` + strings.Repeat("é", 1000) + `"}`, strings.Repeat("é", maxErrorMessage/2)},
		{"\xff\xfeplain", "plain"},
	} {
		assert.Equal(t, c.want, errorMessageOf([]byte(c.body)), c.body)
	}
}

// A body past maxErrorBody reaches the client whole; the span has its
// first bytes as text.
func TestALongErrorBodyIsRelayedWhole(t *testing.T) {
	long := strings.Repeat("x", 3*maxErrorBody)
	r := rigWithUpstream(t, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(long))
	}, nil)
	sink := &spanSink{}
	detachOnCleanup(t, r.proxy.AttachSpans(sink.spansSink))
	resp := r.post("/v1/chat/completions", chatBody)
	require.Equal(t, http.StatusInternalServerError, resp.status)
	assert.True(t, string(resp.body) == long, "the body relayed whole: %d bytes of %d", len(resp.body), len(long))
	span := sink.next(t, 1)
	assert.Equal(t, codes.Error, span.Status)
	assert.True(t, span.StatusMessage == "the engine answered 500: "+long[:maxErrorMessage], "%.60q (%d bytes)", span.StatusMessage, len(span.StatusMessage))
}

// "content": null (an assistant message with tool calls) is no content on
// the span, not "".
func TestNullContentIsNoContent(t *testing.T) {
	r, sink := tracedRig(t)
	body := `{"messages": [{"role": "user", "content": "Weather in Paris?"},` +
		`{"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},` +
		`{"role": "tool", "tool_call_id": "call_1", "content": "18C"}]}`
	require.Equal(t, http.StatusOK, r.post("/v1/chat/completions", body).status)
	a := attrsOf(sink.next(t, 1))
	assert.Equal(t, "assistant", a["llm.input_messages.1.message.role"].AsString())
	assert.NotContains(t, a, "llm.input_messages.1.message.content")
	assert.Equal(t, "get_weather", a["llm.input_messages.1.message.tool_calls.0.tool_call.function.name"].AsString())
	assert.Equal(t, "18C", a["llm.input_messages.2.message.content"].AsString())
	assert.Contains(t, a["input.value"].AsString(), `"content": null`, "the request as sent")
}
