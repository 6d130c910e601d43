package proxy

// observeLatency records a finished request (complete: answered 2xx in
// full) in the latency and length distributions as vLLM users know them
// (its /metrics and dashboard): time per output token, inter-token latency,
// prompt and generation lengths, prefill and decode, and TTFT and
// end-to-end latency in buckets long enough for reasoning models. The
// original's histograms keep their own buckets beside these.
func (l *families) observeLatency(rec *Record, model, origin string, complete bool) {
	if !rec.FirstContent.IsZero() {
		l.mlxTimeToFirstTokenSeconds.WithLabelValues(model, origin).Observe(rec.FirstContent.Sub(rec.Start).Seconds())
	}
	if !complete {
		return
	}
	l.mlxRequestLatencySeconds.WithLabelValues(model, origin).Observe(rec.End.Sub(rec.Start).Seconds())
	if u := rec.Usage; u != nil {
		l.mlxPromptTokens.WithLabelValues(model, origin).Observe(float64(max(u.PromptTokens, 0)))
		l.mlxGenerationTokens.WithLabelValues(model, origin).Observe(float64(max(u.CompletionTokens, 0)))
	}
	if !rec.Streaming || rec.Destreamed || rec.FirstOutput.IsZero() {
		return // no moment the first token came: prefill and decode are one
	}
	if !rec.Sent.IsZero() {
		l.mlxPrefillSeconds.WithLabelValues(model, origin).Observe(rec.FirstOutput.Sub(rec.Sent).Seconds())
	}
	decode := rec.End.Sub(rec.FirstOutput).Seconds()
	l.mlxDecodeSeconds.WithLabelValues(model, origin).Observe(decode)
	if u := rec.Usage; u != nil && u.CompletionTokens > 1 {
		l.mlxTimePerOutputTokenSeconds.WithLabelValues(model, origin).Observe(decode / float64(u.CompletionTokens-1))
	}
	if len(rec.gaps) > 0 {
		itl := l.mlxInterTokenLatencySeconds.WithLabelValues(model, origin)
		for _, g := range rec.gaps {
			itl.Observe(float64(g))
		}
	}
}
