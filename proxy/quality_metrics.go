package proxy

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/confidence"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/heuristics"
)

// newQualityMetrics registers the series of the confidence and heuristics
// scoring (metadata.yaml's group quality) in reg.
func newQualityMetrics(reg *prometheus.Registry, model string) *qualityFamilies {
	q := &qualityFamilies{}
	q.register(registrar{reg})
	// Counters of the configured model start at 0 so that rate() and
	// increase() see the first event.
	for _, src := range labelValuesSource {
		q.mlxConfidenceScoredTotal.WithLabelValues(model, src)
		q.mlxConfidenceUnscoredTotal.WithLabelValues(model, src)
	}
	q.mlxLowConfidenceResponseTotal.WithLabelValues(model)
	q.mlxHallucinationFlagTotal.WithLabelValues(model)
	return q
}

// observeConfidence publishes the score of one answer. Figures that do not
// exist for it (margin and entropy without top-N lists) are left as they
// were.
func (q *qualityFamilies) observeConfidence(model, source string, s *confidence.Score) {
	if !s.OK {
		q.mlxConfidenceUnscoredTotal.WithLabelValues(model, source).Inc()
		return
	}
	q.mlxConfidenceScoredTotal.WithLabelValues(model, source).Inc()
	q.mlxOutputPerplexity.WithLabelValues(model).Set(s.Perplexity)
	q.mlxOutputPerplexityHistogram.WithLabelValues(model).Observe(s.Perplexity)
	q.mlxTokenConfidenceMean.WithLabelValues(model).Set(s.ConfidenceMean)
	q.mlxTokenConfidenceMin.WithLabelValues(model).Set(s.ConfidenceMin)
	q.mlxTokenConfidenceStd.WithLabelValues(model).Set(s.ConfidenceStd)
	q.mlxLowConfidenceTokenRatio.WithLabelValues(model).Set(s.LowConfidenceRatio)
	if s.LowConfidence {
		q.mlxLowConfidenceResponseTotal.WithLabelValues(model).Inc()
	}
	if s.HasMargin() {
		q.mlxTokenMarginMean.WithLabelValues(model).Set(s.MarginMean)
	}
	if s.HasEntropy() {
		q.mlxTokenEntropyNats.WithLabelValues(model).Set(s.EntropyMean)
		q.mlxTokenEntropyHistogram.WithLabelValues(model).Observe(s.EntropyMean)
	}
}

// observeHeuristics publishes the text heuristics of one answer.
func (q *qualityFamilies) observeHeuristics(model, kind string, r *heuristics.Result) {
	q.mlxHeuristicRepetition.WithLabelValues(model).Set(r.Repetition)
	q.mlxHeuristicRefusal.WithLabelValues(model).Set(r.Refusal)
	q.mlxHeuristicHedging.WithLabelValues(model).Set(r.Hedging)
	q.mlxHeuristicUngrounded.WithLabelValues(model).Set(r.Ungrounded)
	q.mlxHallucinationRisk.WithLabelValues(model, kind).Set(r.Risk)
	q.mlxHallucinationRiskHistogram.WithLabelValues(model).Observe(r.Risk)
	if r.Flagged {
		q.mlxHallucinationFlagTotal.WithLabelValues(model).Inc()
	}
}
