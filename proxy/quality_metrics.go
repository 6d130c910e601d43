package proxy

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/confidence"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/heuristics"
)

// Buckets of the original proxy's quality histograms.
var (
	perplexityBuckets = []float64{1.05, 1.1, 1.25, 1.5, 2, 3, 5, 8, 13, 21, 50}
	entropyBuckets    = []float64{0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1, 1.5, 2, 3}
	// "0.05 0.1 ... 0.9 1.0": read as steps of 0.1 after 0.1, since a step
	// of 0.05 would have ended "0.95 1.0".
	riskBuckets = []float64{0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0}
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
	counter, gauge, histogram := r.counter, r.gauge, r.histogram
	q := &qualityMetrics{
		perplexity:     gauge("mlx_output_perplexity", "exp(-mean logprob of the sampled tokens) of the most recent scored answer; 1 when every token was certain.", "model"),
		perplexityHist: histogram("mlx_output_perplexity_histogram", "Perplexity of scored answers.", perplexityBuckets),
		entropy:        gauge("mlx_token_entropy_nats", "Mean entropy (nats) of the top-N lists renormalised to sum to 1, most recent scored answer: a lower bound of the true entropy.", "model"),
		entropyHist:    histogram("mlx_token_entropy_histogram", "Mean renormalised top-N entropy (nats) of scored answers.", entropyBuckets),
		confMean:       gauge("mlx_token_confidence_mean", "Mean probability of the sampled tokens, most recent scored answer.", "model"),
		confMin:        gauge("mlx_token_confidence_min", "Lowest probability of a sampled token, most recent scored answer.", "model"),
		confStd:        gauge("mlx_token_confidence_std", "Population standard deviation of the sampled tokens' probabilities, most recent scored answer.", "model"),
		margin:         gauge("mlx_token_margin_mean", "Mean top-1 minus top-2 probability of the top-N lists, most recent scored answer.", "model"),
		lowRatio:       gauge("mlx_low_confidence_token_ratio", "Share of sampled tokens with probability below the low-confidence threshold, most recent scored answer.", "model"),
		scored:         counter("mlx_confidence_scored_total", "Answers whose logprobs were scored, by where the logprobs came from (client, injected, destreamed).", "model", "source"),
		lowResponses:   counter("mlx_low_confidence_response_total", "Scored answers whose mean token confidence was below the low-confidence threshold.", "model"),
		risk:           gauge("mlx_hallucination_risk", "Composite hallucination risk (0..1) of the most recent answer, from the text heuristics.", "model", "kind"),
		riskHist:       histogram("mlx_hallucination_risk_histogram", "Hallucination risk of answers.", riskBuckets),
		flagged:        counter("mlx_hallucination_flag_total", "Answers whose hallucination risk was above the flag threshold.", "model"),
		repetition:     gauge("mlx_heuristic_repetition", "Count of the most repeated word trigram over the trigrams of the most recent answer (stopwords dropped).", "model"),
		refusal:        gauge("mlx_heuristic_refusal", "1 if the most recent answer opened with a refusal phrase, else 0.", "model"),
		hedging:        gauge("mlx_heuristic_hedging", "Hedge-phrase density of the most recent answer (5 per 100 words = 1).", "model"),
		ungrounded:     gauge("mlx_heuristic_ungrounded", "Factual-looking content without a tool call when tools were offered, most recent answer (0, 0.5 or 1).", "model"),
		scoringDropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "mlx_scoring_dropped_total", Help: "Finished answers not scored (confidence and heuristics) because the scoring queue was full."}),
		confidenceFailed: counter("mlx_confidence_unscored_total",
			"Answers that should have carried logprobs (by source) but gave no token to score: none sent, or none readable.", "model", "source"),
	}
	reg.MustRegister(q.scoringDropped)
	// Counters of the configured model start at 0 so that rate() and
	// increase() see the first event.
	for _, src := range []string{SourceClient, SourceInjected, SourceDestreamed} {
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
