package opikexporter

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// readableSpan is a proxy span with its content, as the mlx_proxy
// receiver emits it; parent set means it continues a client's trace.
func readableSpan(td ptrace.Traces, n byte, parent bool) ptrace.Span {
	s := proxySpan(td, n, true)
	if parent {
		s.SetParentSpanID(pcommon.SpanID{0xcc, n})
	}
	rs := td.ResourceSpans().At(td.ResourceSpans().Len() - 1)
	rs.Resource().Attributes().PutStr("mlx.node.name", "mac1")
	rs.ScopeSpans().At(0).Scope().SetName("mlx.proxy")
	at := s.Attributes()
	at.PutStr("mlx.kind", "chat")
	at.PutDouble("mlx.ttft_seconds", 0.12)
	at.PutStr("http.request.method", "POST")
	at.PutInt("http.response.status_code", 200)
	at.PutStr("input.value", `{"model":"m","messages":[{"role":"user","content":"What is a cache?"}],"temperature":0.2}`)
	at.PutStr("output.value", `{"role":"assistant","content":"It keeps values.","reasoning":"think"}`)
	at.PutStr("metadata", `{"node":"mac1","otel_trace_id":"`+s.TraceID().String()+`","otel_span_id":"`+s.SpanID().String()+`"}`)
	at.PutStr("llm.model_name", "m")
	at.PutInt("llm.token_count.prompt", 12)
	at.PutInt("llm.token_count.completion", 5)
	at.PutInt("llm.token_count.total", 17)
	at.PutInt("gen_ai.usage.input_tokens", 12)
	at.PutInt("gen_ai.usage.output_tokens", 5)
	return s
}

// What a user of Opik sees: one trace per proxied request, a client's
// trace continued included, its input the request and not the proxy's
// figures, and its scores on it; no score on an id Opik shows nowhere.
func TestEachRequestIsAReadableOpikTraceWithItsScores(t *testing.T) {
	opik := startOpik(t)
	cfg := createDefaultConfig().(*Config)
	cfg.Endpoint = opik.URL()
	exp := startExporter(t, cfg)

	td := ptrace.NewTraces()
	for n := byte(1); n <= 3; n++ {
		readableSpan(td, n, n == 3)
	}
	require.NoError(t, exp.ConsumeTraces(context.Background(), td))

	scoresLanded := func() bool {
		traces := opik.Traces("mlx")
		if len(traces) != 3 {
			return false
		}
		for _, tr := range traces {
			if len(tr.FeedbackScores) != 3 {
				return false
			}
		}
		return true
	}
	assert.Eventually(t, scoresLanded, 5*time.Second, 20*time.Millisecond, "3 requests, 3 traces with 3 scores each; Opik has %d traces", len(opik.Traces("mlx")))
	assert.Zero(t, opik.OrphanScores(), "scores on ids Opik has no trace of")
	for _, tr := range opik.Traces("mlx") {
		in, _ := tr.Input.(map[string]any)
		assert.Contains(t, in, "messages", "the input is the request")
		for k := range in {
			assert.False(t, strings.HasPrefix(k, "mlx.") || strings.HasPrefix(k, "http."), "%s in the input", k)
		}
	}
}

// Opik 2.x's fields: ttft in milliseconds on the trace and the LLM span
// (a relayed stream's first chunk, else the original's ttft), model and
// provider on the span, the configured environment on both, and no
// total_estimated_cost.
func TestOpik2Fields(t *testing.T) {
	opik := startOpik(t)
	cfg := createDefaultConfig().(*Config)
	cfg.Endpoint = opik.URL()
	cfg.Environment = "staging"
	exp := startExporter(t, cfg)

	td := ptrace.NewTraces()
	readableSpan(td, 1, false).Attributes().PutStr("llm.provider", "mlx")
	streamed := readableSpan(td, 2, false)
	streamed.Attributes().PutDouble("gen_ai.response.time_to_first_chunk", 0.05)
	// The engine's error answer: mlx.ttft_seconds is its whole time, but
	// no token came.
	readableSpan(td, 3, false).Attributes().PutStr("error.type", "404")
	require.NoError(t, exp.ConsumeTraces(context.Background(), td))
	require.Eventually(t, func() bool { return len(opik.Spans("mlx")) == 3 && len(opik.Traces("mlx")) == 3 },
		5*time.Second, 20*time.Millisecond)

	ttft := map[string]float64{}
	for _, tr := range opik.Traces("mlx") {
		assert.Equal(t, "staging", tr.Environment)
		if tr.TTFT != nil {
			ttft[tr.ID] = *tr.TTFT
		}
	}
	assert.ElementsMatch(t, []float64{120, 50}, values(ttft), "ms: the original's ttft, the first chunk's; none for the third")
	for _, sp := range opik.Spans("mlx") {
		assert.Equal(t, "staging", sp.Environment)
		assert.Equal(t, "m", sp.Model)
		assert.Nil(t, sp.TotalEstimatedCost, "a local model has no price")
		if tr, ok := ttft[sp.TraceID]; ok {
			require.NotNil(t, sp.TTFT)
			assert.Equal(t, tr, *sp.TTFT, "the span's ttft is the trace's")
		} else {
			assert.Nil(t, sp.TTFT)
		}
	}
}

func values(m map[string]float64) []float64 {
	var out []float64
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
