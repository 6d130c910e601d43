package judge

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/mlx-otelcol/mlx-otelcol/internal/opikapi"
	"github.com/mlx-otelcol/mlx-otelcol/standins/opiktest"
)

// The Opik source reads what Opik returns: the opik exporter's traces
// (created by REST) and another client's traces made by Opik's OTLP
// mapping (input under "input.value" and the flattened llm.* keys), each
// with its question, answer, model and OTel ids.
func TestOpikSourceReadsRESTAndOTLPTraces(t *testing.T) {
	opik := opiktest.New()
	require.NoError(t, opik.Listen("127.0.0.1:0"))
	t.Cleanup(opik.Close)
	start := time.Now().Add(-time.Minute)
	ours := opiktest.ProxyTrace{TraceID: pcommon.TraceID{1}, SpanID: pcommon.SpanID{1}, Start: start, Model: "m",
		Question: "What is a cache?", Answer: "It keeps values."}
	theirs := opiktest.ProxyTrace{TraceID: pcommon.TraceID{2}, SpanID: pcommon.SpanID{2}, Start: start.Add(time.Second), Model: "gpt",
		Question: "What is a queue?", Answer: "A line."}
	opik.Put(ours.Trace("mlx"))
	opik.Store("mlx", theirs.OTLP())
	tr, ok := opik.Trace(theirs.OTLPOpikID())
	require.True(t, ok, "Opik made a trace of the other client's root span")
	assert.Contains(t, tr.Input, "input.value", "as Opik stores it: full keys")

	src := OpikSource{API: &opikapi.Client{Base: opik.URL(), Project: "mlx", HTTP: http.DefaultClient}}
	cands, err := src.Recent(context.Background(), 10)
	require.NoError(t, err)
	require.Len(t, cands, 2)
	byID := map[string]Candidate{}
	for _, c := range cands {
		byID[c.OpikID] = c
	}
	for _, want := range []struct {
		id string
		p  opiktest.ProxyTrace
	}{{ours.OpikID(), ours}, {theirs.OTLPOpikID(), theirs}} {
		c, ok := byID[want.id]
		require.True(t, ok, want.id)
		assert.Equal(t, want.p.Question, c.Question, want.id)
		assert.Equal(t, want.p.Answer, c.Answer, want.id)
		assert.Equal(t, want.p.Model, c.Model, want.id)
		assert.True(t, c.HasIDs, want.id)
		assert.Equal(t, [16]byte(want.p.TraceID), c.TraceID, want.id)
		assert.Equal(t, [8]byte(want.p.SpanID), c.SpanID, want.id)
	}
}

// Only the flattened messages (a client that sends no input.value).
func TestQuestionAndAnswerFromFlattenedKeys(t *testing.T) {
	in := `{"llm.input_messages.0.message.role":"system","llm.input_messages.0.message.content":"Be terse.",` +
		`"llm.input_messages.1.message.role":"user","llm.input_messages.1.message.content":"first",` +
		`"llm.input_messages.2.message.role":"assistant","llm.input_messages.2.message.content":"ok",` +
		`"llm.input_messages.10.message.role":"user","llm.input_messages.10.message.content":" last "}`
	q, _ := questionOf([]byte(in))
	assert.Equal(t, "last", q, "the last user message, by index not by text order")
	assert.Equal(t, "A line.", answerOf([]byte(`{"llm.output_messages.0.message.content":"A line.","llm.output_messages.0.message.role":"assistant"}`)))
	assert.Equal(t, "done", answerOf([]byte(`{"output.value":"{\"choices\":[{\"text\":\"done\"}]}"}`)), "a text completion kept as a string")
}

func TestJudgePromptsAreNotJudged(t *testing.T) {
	prompt, err := Render(DefaultPrompt, "What is a cache?", "It keeps values.")
	require.NoError(t, err)
	assert.True(t, isJudgePrompt(DefaultPrompt, prompt))
	assert.False(t, isJudgePrompt(DefaultPrompt, "What is a cache?"))
	assert.False(t, isJudgePrompt("{question}", "anything"), "a prompt with no text before its field marks nothing")
}
