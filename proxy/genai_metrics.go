package proxy

import "github.com/prometheus/client_golang/prometheus"

// OpenTelemetry GenAI's server metrics (semantic conventions v1.41.0,
// gen-ai-metrics.md), as Envoy AI Gateway and LiteLLM emit them and GenAI
// dashboards read them, in the names OTel's Prometheus mapping gives them
// (extension/proxyextension/metadata.yaml). The mlx_* histograms are kept
// beside them.
type genAIMetrics struct {
	duration, ttft, tpot *prometheus.HistogramVec
}

// The labels of the GenAI histograms, in metadata.yaml's order; origin
// (origin.go) as on every request series.
var genAILabels = []string{"gen_ai_operation_name", "gen_ai_provider_name", "gen_ai_request_model", "gen_ai_response_model", "origin"}

func newGenAIMetrics(r registrar) genAIMetrics {
	return genAIMetrics{
		duration: r.histogramOf(metricGenAiServerRequestDurationSeconds, metricGenAiServerRequestDurationSecondsHelp,
			metricGenAiServerRequestDurationSecondsBuckets, "gen_ai_operation_name", "gen_ai_provider_name",
			"gen_ai_request_model", "gen_ai_response_model", "error_type", "origin"),
		ttft: r.histogramOf(metricGenAiServerTimeToFirstTokenSeconds, metricGenAiServerTimeToFirstTokenSecondsHelp,
			metricGenAiServerTimeToFirstTokenSecondsBuckets, genAILabels...),
		tpot: r.histogramOf(metricGenAiServerTimePerOutputTokenSeconds, metricGenAiServerTimePerOutputTokenSecondsHelp,
			metricGenAiServerTimePerOutputTokenSecondsBuckets, genAILabels...),
	}
}

// observe records a finished request. model and answerModel are bounded
// labels; complete: answered 2xx in full.
func (g genAIMetrics) observe(rec *Record, model, answerModel, origin string, complete bool) {
	op := operationName(rec.Route)
	g.duration.WithLabelValues(op, Provider, model, answerModel, errorTypeOf(rec.Outcome, rec.Status), origin).
		Observe(rec.End.Sub(rec.Start).Seconds())
	// "For successful responses", and only a relayed stream has a moment
	// its first token came.
	if !complete || !rec.Streaming || rec.Destreamed || rec.FirstChunk.IsZero() {
		return
	}
	g.ttft.WithLabelValues(op, Provider, model, answerModel, origin).Observe(rec.FirstChunk.Sub(rec.Start).Seconds())
	if u := rec.Usage; u != nil && u.CompletionTokens > 1 {
		g.tpot.WithLabelValues(op, Provider, model, answerModel, origin).
			Observe(rec.End.Sub(rec.FirstChunk).Seconds() / float64(u.CompletionTokens-1))
	}
}
