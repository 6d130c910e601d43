package proxy

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/span"
)

func finishedRecord(text string, logprobs string) *Record {
	rec := &Record{Route: RouteChat, Outcome: OutcomeComplete, Facts: span.Facts{Model: "m", Kind: KindChat, Status: 200, HasTemperature: true}}
	ch := rec.choice(0)
	ch.appendText(text)
	if logprobs != "" {
		ch.addLogprobs(json.RawMessage(logprobs), nil)
		rec.LogprobsSource = SourceInjected
	}
	return rec
}

// A full queue drops the answer and counts it; the request is not held.
// Queued answers are scored once the worker runs, and stop scores what is
// left.
func TestScorerDropsWhenTheQueueIsFull(t *testing.T) {
	reg := prometheus.NewRegistry()
	cfg := DefaultConfig()
	cfg.ScoringQueue = 1
	q := newQualityMetrics(reg, "m")
	s := newScorer(cfg, q, newLabelSet(8, "m"), nil)

	s.End(finishedRecord("I cannot help with that.", ""))
	s.End(finishedRecord("Hello there.", "")) // the queue holds one: dropped
	assert.Equal(t, 1.0, testutil.ToFloat64(q.mlxScoringDroppedTotal))

	s.start()
	waitIdle(t, s)
	s.stop()
	s.stop() // twice is fine
	assert.Equal(t, 1.0, testutil.ToFloat64(q.mlxHeuristicRefusal.WithLabelValues("m")), "the queued answer was scored")
	assert.Equal(t, 1, testutil.CollectAndCount(q.mlxHallucinationRiskHistogram), "one answer observed")
}

// Certain tokens give perplexity 1 and confidence 1; two 50/50 tokens give
// perplexity 2 and a low-confidence response at the default threshold
// (0.5 is not below 0.5: the ratio is 0, the mean is not low).
func TestScorerConfidenceFigures(t *testing.T) {
	reg := prometheus.NewRegistry()
	q := newQualityMetrics(reg, "m")
	s := newScorer(DefaultConfig(), q, newLabelSet(8, "m"), nil)
	s.start()
	defer s.stop()

	s.End(finishedRecord("ab", `{"content": [{"id": 1, "logprob": 0.0}, {"id": 2, "logprob": 0.0}]}`))
	waitIdle(t, s)
	assert.Equal(t, 1.0, testutil.ToFloat64(q.mlxOutputPerplexity.WithLabelValues("m")))
	assert.Equal(t, 1.0, testutil.ToFloat64(q.mlxTokenConfidenceMean.WithLabelValues("m")))

	s.End(finishedRecord("ab", `{"content": [{"id": 1, "logprob": -0.6931471805599453}, {"id": 2, "logprob": -0.6931471805599453}]}`))
	waitIdle(t, s)
	assert.InDelta(t, 2.0, testutil.ToFloat64(q.mlxOutputPerplexity.WithLabelValues("m")), 1e-9)
	assert.InDelta(t, 0.5, testutil.ToFloat64(q.mlxTokenConfidenceMean.WithLabelValues("m")), 1e-9)
	assert.Equal(t, 0.0, testutil.ToFloat64(q.mlxLowConfidenceTokenRatio.WithLabelValues("m")), "exactly at the threshold is not low")
	assert.Equal(t, 0.0, testutil.ToFloat64(q.mlxLowConfidenceResponseTotal.WithLabelValues("m")))
	assert.Equal(t, 2.0, testutil.ToFloat64(q.mlxConfidenceScoredTotal.WithLabelValues("m", SourceInjected)))

	// Logprobs asked for but unusable: nothing reported, counted unscored.
	s.End(finishedRecord("ab", `{"content": [{"id": 1, "logprob": "x"}]}`))
	waitIdle(t, s)
	assert.Equal(t, 1.0, testutil.ToFloat64(q.mlxConfidenceUnscoredTotal.WithLabelValues("m", SourceInjected)))
	assert.Equal(t, 2.0, testutil.ToFloat64(q.mlxConfidenceScoredTotal.WithLabelValues("m", SourceInjected)))
	assert.InDelta(t, 2.0, testutil.ToFloat64(q.mlxOutputPerplexity.WithLabelValues("m")), 1e-9, "the last scored answer stays")
}

// Answers that did not reach the client whole, or were errors, are not
// scored.
func TestScorerSkipsFailedAnswers(t *testing.T) {
	q := newQualityMetrics(prometheus.NewRegistry(), "m")
	s := newScorer(DefaultConfig(), q, newLabelSet(8, "m"), nil)
	for _, mut := range []func(*Record){
		func(r *Record) { r.Outcome = OutcomeIncomplete },
		func(r *Record) { r.Outcome = OutcomeClientGone },
		func(r *Record) { r.Status = 404 },
		func(r *Record) { r.Choices = nil },
	} {
		rec := finishedRecord("I cannot.", "")
		mut(rec)
		s.End(rec)
	}
	s.start()
	waitIdle(t, s)
	s.stop()
	require.Equal(t, 0, testutil.CollectAndCount(q.mlxHallucinationRiskHistogram))
}

// waitIdle waits until the scorer has taken every queued record, for 10 s
// at most.
func waitIdle(t testing.TB, s *scorer) {
	t.Helper()
	require.Eventually(t, s.idle, 10*time.Second, time.Millisecond, "the scorer never went idle")
}
