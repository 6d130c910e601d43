package opikexporter

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mdgen/mdschema"
	"github.com/mlx-otelcol/mlx-otelcol/internal/opikid"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/span/spankey"
	"github.com/mlx-otelcol/mlx-otelcol/standins/opiktest"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/configtest"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/doccheck"
)

func TestDefaultConfig(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	require.NoError(t, componenttest.CheckConfigStruct(cfg))
	require.NoError(t, confmap.Validate(cfg))
	assert.Equal(t, "mlx", cfg.Project, "the original's project")
	assert.Empty(t, cfg.Endpoint, "off until an endpoint is set")
	assert.True(t, cfg.FeedbackScores.Enabled)
	assert.Equal(t, 1000, cfg.FeedbackScores.BatchSize)
	assert.Equal(t, 100, cfg.BatchSize)
	assert.Equal(t, 10, cfg.ReadBack.Every)
	assert.Equal(t, 5*time.Second, cfg.ReadBack.Delay)
}

func TestConfigs(t *testing.T) {
	cfg, err := configtest.Load[*Config](t, NewFactory(), "cloud")
	require.NoError(t, err)
	assert.Equal(t, "https://www.comet.com/opik/api/v1/private/otel/v1/traces", cfg.tracesURL())
	assert.Equal(t, map[string]string{"projectName": "serving", "Comet-Workspace": "team", "Authorization": "key-123"}, cfg.headers())
	assert.False(t, cfg.FeedbackScores.Enabled)
	assert.Equal(t, 50, cfg.BatchSize)
	assert.Zero(t, cfg.ReadBack.Every, "read-back off")
	assert.Equal(t, time.Second, cfg.ReadBack.Delay)
	_, err = configtest.Load[*Config](t, NewFactory(), "bad")
	require.Error(t, err)
	for _, want := range []string{
		`endpoint: "opik-host:5173" is not an http(s) URL`,
		"project: must not be empty",
		"timeout: must be positive, got 0s",
		"feedback_scores.batch_size: must be 1 to 1000 (Opik's limit), got 1001",
		"batch_size: must be 1 to 1000 (Opik's limit), got 0",
		"read_back.every: must be 0 (off) or more, got -1",
		"read_back.delay: must not be negative, got -1s",
	} {
		assert.ErrorContains(t, err, want)
	}
}

func startOpik(t *testing.T) *opiktest.Server {
	opik := opiktest.New()
	require.NoError(t, opik.Listen("127.0.0.1:0"))
	t.Cleanup(opik.Close)
	return opik
}

// proxySpan is a span as the mlx_proxy receiver emits it.
func proxySpan(td ptrace.Traces, traceID byte, scored bool) ptrace.Span {
	s := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	s.SetName("chat mlx-community/Qwen3-4B-4bit")
	s.SetTraceID(pcommon.TraceID{traceID, 0xaa})
	s.SetSpanID(pcommon.SpanID{traceID})
	start := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	s.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	s.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Second)))
	at := s.Attributes()
	at.PutStr("mlx.model", "m")
	at.PutDouble("mlx.hallucination_risk", 0.25)
	at.PutBool("mlx.hallucination_flagged", false)
	if scored {
		at.PutDouble("mlx.confidence_mean", 0.91234)
		at.PutInt("mlx.scored_tokens", 42)
		at.PutStr("mlx.logprobs_source", "injected")
	}
	return s
}

func startExporter(t *testing.T, cfg *Config) *opikExporter {
	t.Helper()
	exp, err := NewFactory().CreateTraces(context.Background(), exportertest.NewNopSettings(componentType), cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { assert.NoError(t, exp.Shutdown(context.Background())) })
	return exp.(*opikExporter)
}

func TestARequestAsOpikShowsIt(t *testing.T) {
	opik := startOpik(t)
	cfg := createDefaultConfig().(*Config)
	cfg.Endpoint = opik.URL()
	cfg.APIKey = "secret-key"
	cfg.Workspace = "ws"
	exp := startExporter(t, cfg)

	td := ptrace.NewTraces()
	scored := readableSpan(td, 1, false)
	scored.Attributes().PutStr("input.value", `{"model":"m","messages":[{"role":"user","content":"What is a cache?"}],"metadata":{"session_id":"conv-7"}}`)
	scored.Attributes().PutInt("llm.token_count.prompt_details.cache_read", 4)
	plain := proxySpan(td, 2, false)
	plain.Attributes().PutStr(spankey.SessionId, "thread-9") // the proxy's X-Session-Id
	want1 := opikid.Trace(scored.TraceID(), scored.SpanID(), scored.StartTimestamp().AsTime())
	want2 := opikid.Trace(plain.TraceID(), plain.SpanID(), plain.StartTimestamp().AsTime())
	require.NoError(t, exp.ConsumeTraces(context.Background(), td))

	require.Eventually(t, func() bool {
		return len(opik.Traces("mlx")) == 2 && len(opik.Scores(want1)) == 3 && len(opik.Scores(want2)) == 2
	}, 10*time.Second, 10*time.Millisecond)
	tr, ok := opik.Trace(want1)
	require.True(t, ok, "the trace is under the minted id")
	assert.Equal(t, "chat m", tr.Name)
	assert.Equal(t, map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": "What is a cache?"}},
		"metadata": map[string]any{"session_id": "conv-7"}}, tr.Input, "the request as sent")
	assert.Equal(t, map[string]any{"role": "assistant", "content": "It keeps values.", "reasoning": "think"}, tr.Output, "the assistant's message")
	meta := tr.Metadata.(map[string]any)
	for k, v := range map[string]any{"otel_trace_id": scored.TraceID().String(), "otel_span_id": scored.SpanID().String(),
		"model": "m", "node": "mac1", "mlx.ttft_seconds": 0.12, "http.response.status_code": float64(200), "mlx.hallucination_risk": 0.25} {
		assert.Equal(t, v, meta[k], k)
	}
	for k := range meta {
		assert.False(t, strings.HasPrefix(k, "input.") || strings.HasPrefix(k, "llm.token_count") || strings.HasPrefix(k, "gen_ai.usage"), "%s in metadata", k)
	}
	assert.Equal(t, []string{"m", "mac1", "chat"}, tr.Tags)
	assert.Equal(t, "conv-7", tr.ThreadID, "metadata.session_id groups the conversation")
	assert.Nil(t, tr.ErrorInfo)
	assert.Equal(t, map[string]int64{"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17, "prompt_tokens_details.cached_tokens": 4}, tr.Usage,
		"usage once, from the LLM span")
	assert.Equal(t, 1, tr.SpanCount)
	assert.ElementsMatch(t, []opiktest.Score{
		{Name: "hallucination_quality", Value: 0.75, CategoryName: "quality", Source: "sdk",
			Reason: "proxy heuristic (repetition/refusal/hedging/ungrounded signals), higher is better"},
		{Name: "hallucination_flagged", Value: 1, CategoryName: "safety", Source: "sdk",
			Reason: "1.0 == proxy heuristics did NOT flag the output for hallucination risk"},
		{Name: "token_confidence", Value: 0.912, CategoryName: "quality", Source: "sdk",
			Reason: "mean probability of the sampled tokens (42 scored, source=injected), higher is better"},
	}, tr.FeedbackScores)
	names := map[string]bool{}
	for _, s := range opik.Scores(want2) {
		names[s.Name] = true
	}
	assert.Equal(t, map[string]bool{"hallucination_quality": true, "hallucination_flagged": true}, names, "no token_confidence unscored")
	tr2, ok := opik.Trace(want2)
	require.True(t, ok)
	assert.Equal(t, "thread-9", tr2.ThreadID, "the span's session.id groups the conversation")
	spans := opik.Spans("mlx")
	require.Len(t, spans, 2)
	for _, sp := range spans {
		assert.Equal(t, "llm", sp.Type)
		assert.Equal(t, "m", sp.Model)
	}

	for _, r := range opik.Requests() {
		assert.Equal(t, "mlx", r.Header.Get("projectName"), r.Path)
		assert.Equal(t, "secret-key", r.Header.Get("Authorization"), "the key, raw")
		assert.Equal(t, "ws", r.Header.Get("Comet-Workspace"))
	}
}

func TestAFailedRequestCarriesErrorInfo(t *testing.T) {
	opik := startOpik(t)
	cfg := createDefaultConfig().(*Config)
	cfg.Endpoint = opik.URL()
	exp := startExporter(t, cfg)
	td := ptrace.NewTraces()
	s := proxySpan(td, 1, false)
	s.Attributes().Remove("mlx.hallucination_risk") // no answer, no scores
	s.Attributes().PutStr("error.type", "504")
	s.Attributes().PutInt("http.response.status_code", 504)
	s.Status().SetCode(ptrace.StatusCodeError)
	s.Status().SetMessage("the engine did not answer in 300s")
	require.NoError(t, exp.ConsumeTraces(context.Background(), td))
	id := opikid.Trace(s.TraceID(), s.SpanID(), s.StartTimestamp().AsTime())
	require.Eventually(t, func() bool { _, ok := opik.Trace(id); return ok }, 5*time.Second, 10*time.Millisecond)
	tr, _ := opik.Trace(id)
	assert.Equal(t, &opiktest.ErrorInfo{ExceptionType: "504", Message: "the engine did not answer in 300s", Traceback: "the engine did not answer in 300s"}, tr.ErrorInfo)
	assert.Empty(t, opik.Scores(id))
}

// A score is sent only once Opik took its trace: while trace batches
// fail, no score is written, and once they pass the trace carries them.
func TestScoresOnlyAfterTheirTrace(t *testing.T) {
	opik := startOpik(t)
	opik.FailNext(http.MethodPost, "/v1/private/traces/batch", http.StatusServiceUnavailable, 3)
	opik.FailNext(http.MethodPost, "/v1/private/spans/batch", http.StatusInternalServerError, 1)
	cfg := createDefaultConfig().(*Config)
	cfg.Endpoint = opik.URL()
	cfg.RetryConfig.InitialInterval = 20 * time.Millisecond
	cfg.RetryConfig.MaxInterval = 50 * time.Millisecond
	exp := startExporter(t, cfg)
	td := ptrace.NewTraces()
	s := proxySpan(td, 1, true)
	require.NoError(t, exp.ConsumeTraces(context.Background(), td))
	id := opikid.Trace(s.TraceID(), s.SpanID(), s.StartTimestamp().AsTime())
	require.Eventually(t, func() bool { return len(opik.Scores(id)) == 3 }, 10*time.Second, 10*time.Millisecond)
	var order []string
	for _, r := range opik.Requests() {
		order = append(order, r.Method+" "+strings.TrimPrefix(r.Path, "/api/v1/private/"))
	}
	assert.Equal(t, []string{"POST traces/batch", "POST traces/batch", "POST traces/batch", "POST traces/batch",
		"POST spans/batch", "POST traces/batch", "POST spans/batch", "PUT traces/feedback-scores"}, order[:8],
		"a push is retried whole, scores last")
	assert.Zero(t, opik.OrphanScores())
	assert.Len(t, opik.Traces("mlx"), 1, "written twice, one trace")
}

// The read-back counts the scores Opik took on a trace it does not show.
func TestReadBackCountsUnseenScores(t *testing.T) {
	opik := startOpik(t)
	cfg := createDefaultConfig().(*Config)
	cfg.Endpoint = opik.URL()
	cfg.ReadBack.Every = 2
	cfg.ReadBack.Delay = 0
	exp := startExporter(t, cfg)
	send := func(from byte) {
		td := ptrace.NewTraces()
		for n := from; n < from+4; n++ {
			proxySpan(td, n, n%2 == 0) // 3 scores when scored, else 2
		}
		require.NoError(t, exp.ConsumeTraces(context.Background(), td))
	}
	send(1)
	require.Eventually(t, func() bool { return exp.w.readBacks.Load() == 2 }, 5*time.Second, 10*time.Millisecond)
	assert.Zero(t, exp.w.unseen.Load(), "Opik shows what it took")

	opik.LoseTraces(true)
	send(11)
	require.Eventually(t, func() bool { return exp.w.readBacks.Load() == 4 }, 5*time.Second, 10*time.Millisecond)
	// The 2nd and 4th of the batch are read back: spans 12 (3 scores)
	// and 14 (3 scores).
	assert.Equal(t, int64(6), exp.w.unseen.Load())
	assert.Equal(t, 2+3+2+3, opik.OrphanScores(), "what Opik took and shows nowhere")
}

// Spans of other clients in the pipeline go to Opik's OTLP endpoint as
// they are: Opik makes its own trace of a root span.
func TestOtherSpansGoByOTLP(t *testing.T) {
	opik := startOpik(t)
	cfg := createDefaultConfig().(*Config)
	cfg.Endpoint = opik.URL()
	exp := startExporter(t, cfg)
	td := ptrace.NewTraces()
	proxySpan(td, 1, true)
	other := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	other.SetName("agent step")
	other.SetTraceID(pcommon.TraceID{0xee})
	other.SetSpanID(pcommon.SpanID{0xee})
	start := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	other.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	other.Attributes().PutStr("input.value", "hello")
	require.NoError(t, exp.ConsumeTraces(context.Background(), td))
	tid := other.TraceID()
	id := opiktest.ConvertOtelIDToUUIDv7(tid[:], start.UnixMilli())
	require.Eventually(t, func() bool { _, ok := opik.Trace(id); return ok }, 5*time.Second, 10*time.Millisecond)
	tr, _ := opik.Trace(id)
	assert.Equal(t, "agent step", tr.Name)
	assert.Len(t, opik.Traces("mlx"), 2)
}
func TestScoresGoInBatchesOfTheConfiguredSize(t *testing.T) {
	opik := startOpik(t)
	cfg := createDefaultConfig().(*Config)
	cfg.Endpoint = opik.URL()
	cfg.FeedbackScores.BatchSize = 4
	exp := startExporter(t, cfg)
	td := ptrace.NewTraces()
	for i := 1; i <= 5; i++ {
		proxySpan(td, byte(i), true) // 3 scores each: 15 scores, 4 PUTs
	}
	require.NoError(t, exp.ConsumeTraces(context.Background(), td))
	puts := func() int {
		n := 0
		for _, r := range opik.Requests() {
			if r.Path == "/api/v1/private/traces/feedback-scores" {
				n++
			}
		}
		return n
	}
	require.Eventually(t, func() bool { return puts() == 4 }, 10*time.Second, 10*time.Millisecond)
}

// Opik down: spans and scores wait in their queues and arrive when it is
// back, with nothing else to do.
func TestOpikDownThenBack(t *testing.T) {
	opik := startOpik(t)
	cfg := createDefaultConfig().(*Config)
	cfg.Endpoint = opik.URL()
	cfg.RetryConfig.InitialInterval = 50 * time.Millisecond
	cfg.RetryConfig.MaxInterval = 100 * time.Millisecond
	exp := startExporter(t, cfg)
	opik.Down()
	td := ptrace.NewTraces()
	s := proxySpan(td, 7, true)
	id := opikid.Trace(s.TraceID(), s.SpanID(), s.StartTimestamp().AsTime())
	start := time.Now()
	require.NoError(t, exp.ConsumeTraces(context.Background(), td))
	assert.Less(t, time.Since(start), time.Second, "the pipeline is not held up")
	time.Sleep(300 * time.Millisecond)
	require.NoError(t, opik.Up())
	require.Eventually(t, func() bool { _, ok := opik.Trace(id); return ok && len(opik.Scores(id)) == 3 }, 10*time.Second, 20*time.Millisecond)
}

func TestOffWithoutEndpoint(t *testing.T) {
	exp, err := NewFactory().CreateTraces(context.Background(), exportertest.NewNopSettings(componentType), createDefaultConfig())
	require.NoError(t, err)
	require.NoError(t, exp.Shutdown(context.Background()), "safe without Start")
	require.NoError(t, exp.Start(context.Background(), componenttest.NewNopHost()))
	td := ptrace.NewTraces()
	proxySpan(td, 1, true)
	require.NoError(t, exp.ConsumeTraces(context.Background(), td))
	require.NoError(t, exp.Shutdown(context.Background()))
}

func TestShutdownWithoutStart(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Endpoint = "http://127.0.0.1:1/api"
	exp, err := NewFactory().CreateTraces(context.Background(), exportertest.NewNopSettings(componentType), cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Shutdown(context.Background()))
}

// The exporter reads the proxy's keys through spankey, generated from
// the proxy's metadata.yaml, so none can be missing there. The fixture the
// exporter's tests read is a proxy span as the schema has it: every key it
// sets is the proxy's, with the schema's type, so that a key retyped there
// fails here, not silently in Opik.
func TestTheFixtureIsAProxySpan(t *testing.T) {
	proxy, err := mdschema.Load("../../receiver/proxyreceiver/metadata.yaml")
	require.NoError(t, err)
	td := ptrace.NewTraces()
	sp := readableSpan(td, 1, false)
	at := sp.Attributes()
	at.PutStr(spankey.ErrorType, "504")
	at.PutStr(spankey.LlmProvider, "mlx")
	at.PutStr(spankey.GenAiOperationName, "chat")
	at.PutStr(spankey.SessionId, "conv-7")
	at.PutDouble(spankey.GenAiResponseTimeToFirstChunk, 0.1)
	at.PutInt(spankey.LlmTokenCountPromptDetailsCacheRead, 1)
	at.PutInt(spankey.LlmTokenCountCompletionDetailsReasoning, 1)
	known := map[string]bool{}
	for _, k := range proxy.SpanAttributes.Keys() {
		known[k] = true
	}
	var read mdschema.RecordAttributes
	for _, e := range proxy.SpanAttributes {
		if _, ok := at.Get(e.Key); ok {
			read = append(read, e)
		}
	}
	at.Range(func(k string, _ pcommon.Value) bool {
		assert.Truef(t, known[k], "%s: the fixture sets it, the proxy's metadata.yaml does not list it", k)
		return true
	})
	assert.NoError(t, doccheck.CheckAttributes(read, at))
}

// What the exporter counts is as metadata.yaml says (names, help texts,
// labels), and an Opik that shows no trace makes the unseen count grow.
func TestCountsAsInMetadata(t *testing.T) {
	schema, err := mdschema.Load("metadata.yaml")
	require.NoError(t, err)
	opik := startOpik(t)
	opik.LoseTraces(true)
	cfg := createDefaultConfig().(*Config)
	cfg.Endpoint = opik.URL()
	cfg.ReadBack.Every = 1
	cfg.ReadBack.Delay = 50 * time.Millisecond
	reader := sdkmetric.NewManualReader()
	set := exportertest.NewNopSettings(componentType)
	set.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	exp, err := NewFactory().CreateTraces(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { assert.NoError(t, exp.Shutdown(context.Background())) })
	td := ptrace.NewTraces()
	proxySpan(td, 1, true)
	require.NoError(t, exp.ConsumeTraces(context.Background(), td))

	var values map[string]int64
	require.Eventually(t, func() bool {
		var rm metricdata.ResourceMetrics
		require.NoError(t, reader.Collect(context.Background(), &rm))
		values = map[string]int64{}
		for _, sm := range rm.ScopeMetrics {
			if sm.Scope.Name != meterName {
				continue // the exporter helper's otelcol_*
			}
			for _, m := range sm.Metrics {
				meta, ok := schema.Metrics.Get(m.Name)
				require.True(t, ok, "%s: not in metadata.yaml", m.Name)
				assert.Equal(t, meta.Description, m.Description, m.Name)
				sum, ok := m.Data.(metricdata.Sum[int64])
				require.True(t, ok, "%s: an int sum", m.Name)
				assert.True(t, sum.IsMonotonic, m.Name)
				for _, dp := range sum.DataPoints {
					var keys []string
					for _, kv := range dp.Attributes.ToSlice() {
						keys = append(keys, string(kv.Key))
					}
					assert.ElementsMatch(t, meta.Attributes, keys, m.Name)
					values[m.Name] += dp.Value
				}
			}
		}
		return values[metricMlxOpikScoresUnseenTotal] > 0
	}, 5*time.Second, 20*time.Millisecond)
	assert.Equal(t, int64(3), values[metricMlxOpikScoresUnseenTotal], "the three scores of a trace Opik does not show")
	assert.Equal(t, int64(1), values[metricMlxOpikReadbacksTotal])
}

// A REST call carries at most batch_size requests, and about 8 MiB: three
// requests of 3 MiB of content each go in two calls.
func TestRESTCallsAreBoundedInBytes(t *testing.T) {
	opik := startOpik(t)
	cfg := createDefaultConfig().(*Config)
	cfg.Endpoint = opik.URL()
	exp := startExporter(t, cfg)
	td := ptrace.NewTraces()
	big := `{"messages":[{"role":"user","content":"` + strings.Repeat("a", 3<<20) + `"}]}`
	for n := byte(1); n <= 3; n++ {
		proxySpan(td, n, false).Attributes().PutStr("input.value", big)
	}
	require.NoError(t, exp.ConsumeTraces(context.Background(), td))
	require.Eventually(t, func() bool { return len(opik.Traces("mlx")) == 3 }, 2*time.Minute, 20*time.Millisecond)
	calls := 0
	for _, r := range opik.Requests() {
		if r.Path == "/api/v1/private/traces/batch" {
			calls++
		}
	}
	assert.Equal(t, 3, calls, "each request's trace and span weigh 6 MiB: one per call")
}
