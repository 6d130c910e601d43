package opikexporter

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mlx-otelcol/mlx-otelcol/internal/opikid"
	"github.com/mlx-otelcol/mlx-otelcol/standins/opiktest"
)

// evaluation is an evaluation event as the mlx_proxy receiver (scope
// mlx.proxy.feedback) or another component emits it.
func evaluation(ld plog.Logs, scope, opikID, name string, value float64, reason string) {
	sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	sl.Scope().SetName(scope)
	lr := sl.LogRecords().AppendEmpty()
	lr.SetEventName("gen_ai.evaluation.result")
	at := lr.Attributes()
	at.PutStr("gen_ai.evaluation.name", name)
	at.PutDouble("gen_ai.evaluation.score.value", value)
	if reason != "" {
		at.PutStr("gen_ai.evaluation.explanation", reason)
	}
	if opikID != "" {
		at.PutStr("opik.trace_id", opikID)
	}
}

// A person's feedback event, in a logs pipeline, becomes the score of the
// Opik trace the traces half made of the request: on that trace, with
// source ui and the comment as its reason. Other records are left alone.
func TestFeedbackEventsBecomeScoresOnTheirTrace(t *testing.T) {
	opik := startOpik(t)
	cfg := createDefaultConfig().(*Config)
	cfg.Endpoint = opik.URL()
	traces := startExporter(t, cfg)
	td := ptrace.NewTraces()
	span := proxySpan(td, 7, false)
	id := opikid.Trace(span.TraceID(), span.SpanID(), span.StartTimestamp().AsTime())
	require.NoError(t, traces.ConsumeTraces(context.Background(), td))
	require.Eventually(t, func() bool { return len(opik.Scores(id)) == 2 }, 10*time.Second, 10*time.Millisecond)

	logs, err := NewFactory().CreateLogs(context.Background(), exportertest.NewNopSettings(componentType), cfg)
	require.NoError(t, err)
	require.NoError(t, logs.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { assert.NoError(t, logs.Shutdown(context.Background())) })
	ld := plog.NewLogs()
	evaluation(ld, "mlx.proxy.feedback", id, "user_feedback", 0, "wrong river")
	evaluation(ld, "mlx.proxy.feedback", "", "user_feedback", 1, "")                                       // names no trace
	ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().AppendEmpty().Body().SetStr("a plain log line") // not an event
	require.NoError(t, logs.ConsumeLogs(context.Background(), ld))

	require.Eventually(t, func() bool { return len(opik.Scores(id)) == 3 }, 10*time.Second, 10*time.Millisecond)
	var got opiktest.Score
	for _, s := range opik.Scores(id) {
		if s.Name == "user_feedback" {
			got = s
		}
	}
	assert.Equal(t, opiktest.Score{Name: "user_feedback", Value: 0, Reason: "wrong river", CategoryName: "user", Source: "ui"}, got)
	assert.Zero(t, opik.OrphanScores())
}

func TestEvaluationScoresOfOtherComponents(t *testing.T) {
	ld := plog.NewLogs()
	evaluation(ld, "mlx.judge", "0192f1b0-0000-7000-8000-000000000001", "correctness", 0.8, "LLM-as-judge")
	lr := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	lr.SetTimestamp(pcommon.NewTimestampFromTime(time.Now()))
	got := evaluationScores(ld, "mlx")
	require.Len(t, got, 1)
	assert.Equal(t, "sdk", got[0].Source, "not a person's")
	assert.Equal(t, 0.8, got[0].Value)
}

// A reason past maxScoreReasonLen is cut at a rune's start: a multi-byte
// rune across the limit is left out whole, never halved into invalid UTF-8.
func TestScoreReasonCutAtARuneStart(t *testing.T) {
	for _, pad := range []int{1, 2, 3} { // the limit falls 1, 2 or 3 bytes into a 4-byte rune
		reason := strings.Repeat("a", maxScoreReasonLen-pad) + strings.Repeat("😀", 4)
		ld := plog.NewLogs()
		evaluation(ld, "mlx.proxy.feedback", "trace", "user_feedback", 1, reason)
		s, ok := scoreOf(ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0), "p", sourcePerson, feedbackCategory)
		require.True(t, ok)
		assert.True(t, utf8.ValidString(s.Reason), "pad %d: the reason's tail is %q", pad, s.Reason[len(s.Reason)-4:])
		assert.LessOrEqual(t, len(s.Reason), maxScoreReasonLen)
		assert.Equal(t, maxScoreReasonLen-pad, len(s.Reason), "pad %d: the whole ASCII prefix, no part of the rune", pad)
	}
	// At the limit exactly, nothing is cut.
	reason := strings.Repeat("a", maxScoreReasonLen-4) + "😀"
	ld := plog.NewLogs()
	evaluation(ld, "mlx.proxy.feedback", "trace", "user_feedback", 1, reason)
	s, ok := scoreOf(ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0), "p", sourcePerson, feedbackCategory)
	require.True(t, ok)
	assert.True(t, reason == s.Reason, "a reason of maxScoreReasonLen bytes was cut to %d", len(s.Reason))
}
