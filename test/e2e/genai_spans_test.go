//go:build e2e

package e2e

import (
	"encoding/hex"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/internal/opikid"
	"github.com/mlx-otelcol/mlx-otelcol/standins/opiktest"
)

// opikTraceOf is the Opik stand-in's trace of a proxy span Jaeger shows,
// under the id the exporter mints from the span's ids and start.
func opikTraceOf(t *testing.T, opik *opiktest.Server, traceID string, sp jaegerSpan) opiktest.Trace {
	t.Helper()
	var tid [16]byte
	var sid [8]byte
	_, err := hex.Decode(tid[:], []byte(traceID))
	require.NoError(t, err)
	_, err = hex.Decode(sid[:], []byte(sp.SpanID))
	require.NoError(t, err)
	id := opikid.Trace(tid, sid, time.UnixMicro(sp.StartTime))
	require.Eventually(t, func() bool { _, ok := opik.Trace(id); return ok }, 20*time.Second, 100*time.Millisecond, "trace %s in Opik", id)
	tr, _ := opik.Trace(id)
	return tr
}

// opikSpanOf is the LLM span of an Opik trace.
func opikSpanOf(t *testing.T, opik *opiktest.Server, traceID string) opiktest.Span {
	t.Helper()
	var found *opiktest.Span
	require.Eventually(t, func() bool {
		for _, sp := range opik.Spans("mlx") {
			if sp.TraceID == traceID {
				found = &sp
				return true
			}
		}
		return false
	}, 20*time.Second, 100*time.Millisecond, "the LLM span of %s in Opik", traceID)
	return *found
}

// Through the built collector to mlxsim, Jaeger and the Opik stand-in:
// spans named as GenAI names them, an engine's error answer with the
// engine's own text, "content": null kept as no content, and Opik 2.x's
// ttft, provider and environment.
func TestGenAISpansInJaegerAndOpik(t *testing.T) {
	j := startJaeger(t)
	opik := startOpik(t)
	sets := append(traceSets(j, opik), "exporters::opik::environment=e2e")
	s := startCollector(t, collectorOptions{configs: demoConfigs, sets: sets,
		env: map[string]string{"MLXSIM_LOAD_DELAY": "0s"}})
	waitEngineReady(s)

	// A stream: its name, and ttft from its first chunk.
	stream := newTraceID(t)
	status, _ := tracedPost(t, s.proxyURL("/v1/chat/completions"), stream,
		`{"messages": [{"role": "user", "content": "Tell a story"}], "max_tokens": 8, "stream": true}`)
	require.Equal(t, http.StatusOK, status)
	spans, _ := j.waitTrace(t, stream)
	require.Len(t, spans, 1)
	model, _ := spans[0].tag("gen_ai.request.model")
	require.NotEmpty(t, model)
	assert.Equal(t, fmt.Sprintf("chat %s", model), spans[0].OperationName)
	firstChunk, ok := spans[0].tag("gen_ai.response.time_to_first_chunk")
	require.True(t, ok)
	tr := opikTraceOf(t, opik, stream, spans[0])
	require.NotNil(t, tr.TTFT, "ttft on the trace")
	assert.InDelta(t, firstChunk.(float64)*1000, *tr.TTFT, 1e-6, "ms, the first chunk's")
	assert.Equal(t, "e2e", tr.Environment)
	sp := opikSpanOf(t, opik, tr.ID)
	require.NotNil(t, sp.TTFT, "ttft on the LLM span")
	assert.Equal(t, *tr.TTFT, *sp.TTFT)
	assert.Equal(t, "mlx", sp.Provider)
	assert.Equal(t, model, sp.Model)
	assert.Equal(t, "e2e", sp.Environment)
	assert.Nil(t, sp.TotalEstimatedCost)

	// A text completion is text_completion.
	text := newTraceID(t)
	status, _ = tracedPost(t, s.proxyURL("/v1/completions"), text, `{"prompt": "Once upon a time", "max_tokens": 4}`)
	require.Equal(t, http.StatusOK, status)
	spans, _ = j.waitTrace(t, text)
	require.Len(t, spans, 1)
	assert.Equal(t, fmt.Sprintf("text_completion %s", model), spans[0].OperationName)

	// mlx_lm answers an image part with 404 {"error": "Only 'text' content
	// type is supported."} (server.py, handle_completion; mlxsim does the same).
	failed := newTraceID(t)
	status, body := tracedPost(t, s.proxyURL("/v1/chat/completions"), failed,
		`{"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}]}]}`)
	require.Equal(t, http.StatusNotFound, status)
	assert.JSONEq(t, `{"error": "Only 'text' content type is supported."}`, body, "the engine's answer, as it sent it")
	spans, _ = j.waitTrace(t, failed)
	require.Len(t, spans, 1)
	desc, _ := spans[0].tag("otel.status_description")
	assert.Equal(t, "the engine answered 404: Only 'text' content type is supported.", desc)
	var excMsg any
	for _, l := range spans[0].Logs {
		for _, f := range l.Fields {
			if f.Key == "exception.message" {
				excMsg = f.Value
			}
		}
	}
	assert.Equal(t, "Only 'text' content type is supported.", excMsg, "the exception event")
	tr = opikTraceOf(t, opik, failed, spans[0])
	require.NotNil(t, tr.ErrorInfo)
	assert.Equal(t, "404", tr.ErrorInfo.ExceptionType)
	assert.Contains(t, tr.ErrorInfo.Message, "Only 'text' content type is supported.")
	assert.Nil(t, tr.TTFT, "the engine generated no token")

	// An assistant message with "content": null and tool calls.
	null := newTraceID(t)
	status, _ = tracedPost(t, s.proxyURL("/v1/chat/completions"), null,
		`{"messages": [{"role": "user", "content": "Weather in Oslo?"}, {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}]}, {"role": "tool", "tool_call_id": "call_1", "content": "4C"}], "max_tokens": 8}`)
	require.Equal(t, http.StatusOK, status)
	spans, _ = j.waitTrace(t, null)
	require.Len(t, spans, 1)
	role, _ := spans[0].tag("llm.input_messages.1.message.role")
	assert.Equal(t, "assistant", role)
	_, hasContent := spans[0].tag("llm.input_messages.1.message.content")
	assert.False(t, hasContent, `"content": null is no content, not ""`)
	name, _ := spans[0].tag("llm.input_messages.1.message.tool_calls.0.tool_call.function.name")
	assert.Equal(t, "get_weather", name)
	toolText, _ := spans[0].tag("llm.input_messages.2.message.content")
	assert.Equal(t, "4C", toolText)
}
