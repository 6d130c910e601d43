package proxy

import "github.com/prometheus/client_golang/prometheus"

// Latency and length distributions as vLLM users know them (its /metrics
// and dashboard): time per output token, inter-token latency, prompt and
// generation lengths, prefill and decode, and TTFT and end-to-end latency
// in buckets long enough for reasoning models. The original's histograms
// keep their own buckets beside these.
type latencyMetrics struct {
	ttftLong, e2eLong       *prometheus.HistogramVec
	tpot, itl               *prometheus.HistogramVec
	promptTokens, genTokens *prometheus.HistogramVec
	prefill, decode         *prometheus.HistogramVec
}

func newLatencyMetrics(r registrar) latencyMetrics {
	return latencyMetrics{
		ttftLong:     familyMlxTimeToFirstTokenSeconds.register(r),
		e2eLong:      familyMlxRequestLatencySeconds.register(r),
		tpot:         familyMlxTimePerOutputTokenSeconds.register(r),
		itl:          familyMlxInterTokenLatencySeconds.register(r),
		promptTokens: familyMlxPromptTokens.register(r),
		genTokens:    familyMlxGenerationTokens.register(r),
		prefill:      familyMlxPrefillSeconds.register(r),
		decode:       familyMlxDecodeSeconds.register(r),
	}
}

// observe records a finished request; complete: answered 2xx in full.
func (l latencyMetrics) observe(rec *Record, model, origin string, complete bool) {
	if !rec.FirstContent.IsZero() {
		l.ttftLong.WithLabelValues(model, origin).Observe(rec.FirstContent.Sub(rec.Start).Seconds())
	}
	if !complete {
		return
	}
	l.e2eLong.WithLabelValues(model, origin).Observe(rec.End.Sub(rec.Start).Seconds())
	if u := rec.Usage; u != nil {
		l.promptTokens.WithLabelValues(model, origin).Observe(float64(max(u.PromptTokens, 0)))
		l.genTokens.WithLabelValues(model, origin).Observe(float64(max(u.CompletionTokens, 0)))
	}
	if !rec.Streaming || rec.Destreamed || rec.FirstOutput.IsZero() {
		return // no moment the first token came: prefill and decode are one
	}
	if !rec.Sent.IsZero() {
		l.prefill.WithLabelValues(model, origin).Observe(rec.FirstOutput.Sub(rec.Sent).Seconds())
	}
	decode := rec.End.Sub(rec.FirstOutput).Seconds()
	l.decode.WithLabelValues(model, origin).Observe(decode)
	if u := rec.Usage; u != nil && u.CompletionTokens > 1 {
		l.tpot.WithLabelValues(model, origin).Observe(decode / float64(u.CompletionTokens-1))
	}
	if len(rec.gaps) > 0 {
		itl := l.itl.WithLabelValues(model, origin)
		for _, g := range rec.gaps {
			itl.Observe(float64(g))
		}
	}
}
