package proxy

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/confidence"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/heuristics"
)

// qualityMetrics are the series of the confidence and heuristics scoring,
// in the proxy's registry.
type qualityMetrics struct {
	perplexity       *prometheus.GaugeVec
	perplexityHist   *prometheus.HistogramVec
	entropy          *prometheus.GaugeVec
	entropyHist      *prometheus.HistogramVec
	confMean         *prometheus.GaugeVec
	confMin          *prometheus.GaugeVec
	confStd          *prometheus.GaugeVec
	margin           *prometheus.GaugeVec
	lowRatio         *prometheus.GaugeVec
	scored           *prometheus.CounterVec
	lowResponses     *prometheus.CounterVec
	risk             *prometheus.GaugeVec
	riskHist         *prometheus.HistogramVec
	flagged          *prometheus.CounterVec
	repetition       *prometheus.GaugeVec
	refusal          *prometheus.GaugeVec
	hedging          *prometheus.GaugeVec
	ungrounded       *prometheus.GaugeVec
	scoringDropped   prometheus.Counter
	confidenceFailed *prometheus.CounterVec
}

func newQualityMetrics(reg *prometheus.Registry, model string) *qualityMetrics {
	r := registrar{reg}
	q := &qualityMetrics{
		perplexity:       familyMlxOutputPerplexity.register(r),
		perplexityHist:   familyMlxOutputPerplexityHistogram.register(r),
		entropy:          familyMlxTokenEntropyNats.register(r),
		entropyHist:      familyMlxTokenEntropyHistogram.register(r),
		confMean:         familyMlxTokenConfidenceMean.register(r),
		confMin:          familyMlxTokenConfidenceMin.register(r),
		confStd:          familyMlxTokenConfidenceStd.register(r),
		margin:           familyMlxTokenMarginMean.register(r),
		lowRatio:         familyMlxLowConfidenceTokenRatio.register(r),
		scored:           familyMlxConfidenceScoredTotal.register(r),
		lowResponses:     familyMlxLowConfidenceResponseTotal.register(r),
		risk:             familyMlxHallucinationRisk.register(r),
		riskHist:         familyMlxHallucinationRiskHistogram.register(r),
		flagged:          familyMlxHallucinationFlagTotal.register(r),
		repetition:       familyMlxHeuristicRepetition.register(r),
		refusal:          familyMlxHeuristicRefusal.register(r),
		hedging:          familyMlxHeuristicHedging.register(r),
		ungrounded:       familyMlxHeuristicUngrounded.register(r),
		scoringDropped:   familyMlxScoringDroppedTotal.register(r).WithLabelValues(),
		confidenceFailed: familyMlxConfidenceUnscoredTotal.register(r),
	}
	// Counters of the configured model start at 0 so that rate() and
	// increase() see the first event.
	for _, src := range labelValuesSource {
		q.scored.WithLabelValues(model, src)
		q.confidenceFailed.WithLabelValues(model, src)
	}
	q.lowResponses.WithLabelValues(model)
	q.flagged.WithLabelValues(model)
	return q
}

// observeConfidence publishes the score of one answer. Figures that do not
// exist for it (margin and entropy without top-N lists) are left as they
// were.
func (q *qualityMetrics) observeConfidence(model, source string, s *confidence.Score) {
	if !s.OK {
		q.confidenceFailed.WithLabelValues(model, source).Inc()
		return
	}
	q.scored.WithLabelValues(model, source).Inc()
	q.perplexity.WithLabelValues(model).Set(s.Perplexity)
	q.perplexityHist.WithLabelValues(model).Observe(s.Perplexity)
	q.confMean.WithLabelValues(model).Set(s.ConfidenceMean)
	q.confMin.WithLabelValues(model).Set(s.ConfidenceMin)
	q.confStd.WithLabelValues(model).Set(s.ConfidenceStd)
	q.lowRatio.WithLabelValues(model).Set(s.LowConfidenceRatio)
	if s.LowConfidence {
		q.lowResponses.WithLabelValues(model).Inc()
	}
	if s.HasMargin() {
		q.margin.WithLabelValues(model).Set(s.MarginMean)
	}
	if s.HasEntropy() {
		q.entropy.WithLabelValues(model).Set(s.EntropyMean)
		q.entropyHist.WithLabelValues(model).Observe(s.EntropyMean)
	}
}

// observeHeuristics publishes the text heuristics of one answer.
func (q *qualityMetrics) observeHeuristics(model, kind string, r *heuristics.Result) {
	q.repetition.WithLabelValues(model).Set(r.Repetition)
	q.refusal.WithLabelValues(model).Set(r.Refusal)
	q.hedging.WithLabelValues(model).Set(r.Hedging)
	q.ungrounded.WithLabelValues(model).Set(r.Ungrounded)
	q.risk.WithLabelValues(model, kind).Set(r.Risk)
	q.riskHist.WithLabelValues(model).Observe(r.Risk)
	if r.Flagged {
		q.flagged.WithLabelValues(model).Inc()
	}
}
