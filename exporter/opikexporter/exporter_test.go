package opikexporter

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mlx-otelcol/mlx-otelcol/internal/configtest"
	"github.com/mlx-otelcol/mlx-otelcol/internal/doccheck"
	"github.com/mlx-otelcol/mlx-otelcol/internal/mdschema"
	"github.com/mlx-otelcol/mlx-otelcol/internal/opikid"
	"github.com/mlx-otelcol/mlx-otelcol/internal/opiktest"
	"github.com/mlx-otelcol/mlx-otelcol/internal/spanwalk"
)

func TestDefaultConfig(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	require.NoError(t, componenttest.CheckConfigStruct(cfg))
	require.NoError(t, confmap.Validate(cfg))
	assert.Equal(t, "mlx", cfg.Project, "the original's project")
	assert.Empty(t, cfg.Endpoint, "off until an endpoint is set")
	assert.True(t, cfg.FeedbackScores.Enabled)
	assert.Equal(t, 1000, cfg.FeedbackScores.BatchSize)
}

func TestConfigs(t *testing.T) {
	cfg, err := configtest.Load[*Config](t, NewFactory(), "cloud")
	require.NoError(t, err)
	assert.Equal(t, "https://www.comet.com/opik/api/v1/private/otel/v1/traces", cfg.tracesURL())
	assert.Equal(t, map[string]string{"projectName": "serving", "Comet-Workspace": "team", "Authorization": "key-123"}, cfg.headers())
	assert.False(t, cfg.FeedbackScores.Enabled)
	_, err = configtest.Load[*Config](t, NewFactory(), "bad")
	require.Error(t, err)
	for _, want := range []string{
		`endpoint: "opik-host:5173" is not an http(s) URL`,
		"project: must not be empty",
		"timeout: must be positive, got 0s",
		"feedback_scores.batch_size: must be 1 to 1000 (Opik's limit), got 1001",
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
	s.SetName("mlx.chat.completions")
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

func TestSpansAndScoresLandOnTheSameOpikTrace(t *testing.T) {
	opik := startOpik(t)
	cfg := createDefaultConfig().(*Config)
	cfg.Endpoint = opik.URL()
	cfg.APIKey = "secret-key"
	cfg.Workspace = "ws"
	exp := startExporter(t, cfg)

	td := ptrace.NewTraces()
	scored := proxySpan(td, 1, true)
	plain := proxySpan(td, 2, false)
	want1 := opikid.TraceID(scored.TraceID(), scored.StartTimestamp().AsTime())
	want2 := opikid.TraceID(plain.TraceID(), plain.StartTimestamp().AsTime())
	require.NoError(t, exp.ConsumeTraces(context.Background(), td))

	require.Eventually(t, func() bool {
		return len(opik.Traces("mlx")) == 2 && len(opik.Scores(want1)) == 3 && len(opik.Scores(want2)) == 2
	}, 10*time.Second, 10*time.Millisecond)
	tr, ok := opik.Trace(want1)
	require.True(t, ok, "the trace is under the derived id")
	assert.Equal(t, "mlx.chat.completions", tr.Name)
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

	for _, r := range opik.Requests() {
		assert.Equal(t, "mlx", r.Header.Get("projectName"), r.Path)
		assert.Equal(t, "secret-key", r.Header.Get("Authorization"), "the key, raw")
		assert.Equal(t, "ws", r.Header.Get("Comet-Workspace"))
	}
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
	id := opikid.TraceID(s.TraceID(), s.StartTimestamp().AsTime())
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

func TestStampsRootsAndProxySpansOnly(t *testing.T) {
	td := ptrace.NewTraces()
	proxy := proxySpan(td, 1, false)
	proxy.SetParentSpanID(pcommon.SpanID{9}) // continues a client's trace
	child := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().AppendEmpty()
	child.SetTraceID(proxy.TraceID())
	child.SetParentSpanID(pcommon.SpanID{1})
	stampTraceIDs(td)
	id, ok := proxy.Attributes().Get(attrOpikTraceId)
	require.True(t, ok)
	assert.True(t, opikid.IsV7(id.Str()))
	_, ok = child.Attributes().Get(attrOpikTraceId)
	assert.False(t, ok, "only roots and proxy spans are stamped")
}

// What the exporter adds to a span is as metadata.yaml says: every key in
// it, with its type.
func TestStampedKeysAsInMetadata(t *testing.T) {
	schema, err := mdschema.Load("metadata.yaml")
	require.NoError(t, err)
	td := ptrace.NewTraces()
	proxySpan(td, 1, true)
	td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().AppendEmpty().SetTraceID(pcommon.TraceID{2}) // a root
	before := ptrace.NewTraces()
	td.CopyTo(before)
	stampTraceIDs(td)
	var was, now []ptrace.Span
	spanwalk.Each(before, func(s ptrace.Span) { was = append(was, s) })
	spanwalk.Each(td, func(s ptrace.Span) { now = append(now, s) })
	require.Len(t, now, 2)
	for i, s := range now {
		added := pcommon.NewMap()
		for k, v := range s.Attributes().All() {
			if _, ok := was[i].Attributes().Get(k); !ok {
				v.CopyTo(added.PutEmpty(k))
			}
		}
		assert.Equal(t, 1, added.Len(), "span %d is stamped", i)
		assert.NoError(t, doccheck.CheckAttributes(schema.SpanAttributes, added), "span %d", i)
	}
}

// The proxy's keys the exporter reads, as proxySpan sets them, are in the
// proxy's metadata.yaml with the same types: a key renamed or retyped
// there fails here, not silently in Opik.
func TestReadKeysAreTheProxys(t *testing.T) {
	proxy, err := mdschema.Load("../../receiver/proxyreceiver/metadata.yaml")
	require.NoError(t, err)
	td := ptrace.NewTraces()
	at := proxySpan(td, 1, true).Attributes()
	var read mdschema.RecordAttributes
	for _, e := range proxy.SpanAttributes {
		if _, ok := at.Get(e.Key); ok {
			read = append(read, e)
		}
	}
	assert.NoError(t, doccheck.CheckAttributes(read, at))
	for _, key := range []string{attrModel, attrRisk, attrFlagged, attrConfidence, attrTokens, attrSource} {
		_, ok := at.Get(key)
		assert.Truef(t, ok, "%s: the exporter reads it, the fixture does not set it", key)
		assert.Truef(t, slices.ContainsFunc(read, func(e mdschema.Entry[mdschema.RecordAttribute]) bool { return e.Key == key }),
			"%s: the exporter reads it, the proxy's metadata.yaml does not list it", key)
	}
}
