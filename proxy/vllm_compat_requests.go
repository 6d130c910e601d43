package proxy

// vLLM's finish reasons (vllm/v1/engine/__init__.py, FINISH_REASON_STRINGS;
// "repetition" is a sampler's, which mlx_lm has not).
const (
	vllmFinishStop   = "stop"
	vllmFinishLength = "length"
	vllmFinishAbort  = "abort"
	vllmFinishError  = "error"
)

var vllmFinishReasons = []string{vllmFinishStop, vllmFinishLength, vllmFinishAbort, vllmFinishError}

// vllmFinish is why a request the engine took ended, in vLLM's words, and
// whether the engine took it at all (sent, and answered 2xx): vLLM counts
// only requests that reached its engine, not those refused before.
func vllmFinish(rec *Record) (string, bool) {
	if rec.Sent.IsZero() || rec.Status < 200 || rec.Status > 299 {
		return "", false
	}
	switch rec.Outcome {
	case OutcomeComplete:
		if rec.Stalled == "engine" {
			return vllmFinishError, true
		}
		for _, c := range rec.Choices {
			if c.FinishReason == "length" {
				return vllmFinishLength, true
			}
		}
		return vllmFinishStop, true
	case OutcomeClientGone:
		return vllmFinishAbort, true
	default:
		return vllmFinishError, true
	}
}

// observe records a request when it ends, under the model label its
// gauges were raised with, in vLLM's request histograms and token counters
// (compat [vllm]): the series kubernetes-sigs/inference-perf reads from a vLLM server
// (inference_perf/client/modelserver/vllm_client.py, v0.6.1). vLLM
// observes them when a request finishes (vllm/v1/metrics/loggers.py,
// PrometheusStatLogger.record; the intervals from
// vllm/v1/metrics/stats.py, update_from_finished_request):
//
//	e2e       arrival to finish
//	queue     queued to scheduled (WAITING)
//	prefill   scheduled to first token
//	decode    first token to last token
//	inference scheduled to last token (RUNNING)
//	tpot      decode / (generation tokens - 1), 0 without a second token
//
// The proxy's moments stand in for the engine's: arrival is Start, queued
// is Sent, scheduled is the engine's response headers (mlx_lm v0.31.3
// server.py, handle_completion, sends a stream's headers once its batch
// admits the request), the first token is the first chunk with one
// (FirstChunk), the last token is the last byte (End). A non-streamed
// answer comes whole, with none of these moments in between: it gets the
// end-to-end latency, the token counts and its finish only.
func (v *vllmFamilies) observe(rec *Record) {
	reason, took := vllmFinish(rec)
	if !took {
		return
	}
	model := rec.inFlightLabel
	v.vllmRequestSuccessTotal.WithLabelValues(model, reason).Inc()
	v.vllmE2eRequestLatencySeconds.WithLabelValues(model).Observe(rec.End.Sub(rec.Start).Seconds())
	if u := rec.Usage; u != nil {
		prompt, generated := float64(max(u.PromptTokens, 0)), float64(max(u.CompletionTokens, 0))
		v.vllmPromptTokensTotal.WithLabelValues(model).Add(prompt)
		v.vllmGenerationTokensTotal.WithLabelValues(model).Add(generated)
		v.vllmRequestPromptTokens.WithLabelValues(model).Observe(prompt)
		v.vllmRequestGenerationTokens.WithLabelValues(model).Observe(generated)
	}
	if !rec.Streaming || rec.Destreamed || rec.Headers.IsZero() {
		return // no admission or first token seen
	}
	v.vllmRequestQueueTimeSeconds.WithLabelValues(model).Observe(rec.Headers.Sub(rec.Sent).Seconds())
	v.vllmRequestInferenceTimeSeconds.WithLabelValues(model).Observe(rec.End.Sub(rec.Headers).Seconds())
	if rec.FirstChunk.IsZero() {
		return
	}
	v.vllmTimeToFirstTokenSeconds.WithLabelValues(model).Observe(rec.FirstChunk.Sub(rec.Start).Seconds())
	v.vllmRequestPrefillTimeSeconds.WithLabelValues(model).Observe(rec.FirstChunk.Sub(rec.Headers).Seconds())
	decode := rec.End.Sub(rec.FirstChunk).Seconds()
	v.vllmRequestDecodeTimeSeconds.WithLabelValues(model).Observe(decode)
	if u := rec.Usage; u != nil {
		tpot := 0.0
		if u.CompletionTokens > 1 {
			tpot = decode / float64(u.CompletionTokens-1)
		}
		v.vllmRequestTimePerOutputTokenSeconds.WithLabelValues(model).Observe(tpot)
	}
	if len(rec.gaps) > 0 {
		itl := v.vllmInterTokenLatencySeconds.WithLabelValues(model)
		for _, g := range rec.gaps {
			itl.Observe(float64(g))
		}
	}
}
