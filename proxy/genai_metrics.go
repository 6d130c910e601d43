package proxy

// observeGenAI records a finished request in OpenTelemetry GenAI's server
// metrics (semantic conventions v1.41.0, gen-ai-metrics.md), as Envoy AI
// Gateway and LiteLLM emit them and GenAI dashboards read them, in the
// names OTel's Prometheus mapping gives them (metadata.yaml); the mlx_*
// histograms are kept beside them. model and answerModel are bounded
// labels; complete: answered 2xx in full.
func (g *families) observeGenAI(rec *Record, model, answerModel, origin string, complete bool) {
	op := operationName(rec.Route)
	g.genAiServerRequestDurationSeconds.WithLabelValues(op, Provider, model, answerModel, errorTypeOf(rec.Outcome, rec.Status), origin).
		Observe(rec.End.Sub(rec.Start).Seconds())
	// "For successful responses", and only a relayed stream has a moment
	// its first token came.
	if !complete || !rec.Streaming || rec.Destreamed || rec.FirstChunk.IsZero() {
		return
	}
	g.genAiServerTimeToFirstTokenSeconds.WithLabelValues(op, Provider, model, answerModel, origin).Observe(rec.FirstChunk.Sub(rec.Start).Seconds())
	if u := rec.Usage; u != nil && u.CompletionTokens > 1 {
		g.genAiServerTimePerOutputTokenSeconds.WithLabelValues(op, Provider, model, answerModel, origin).
			Observe(rec.End.Sub(rec.FirstChunk).Seconds() / float64(u.CompletionTokens-1))
	}
}
