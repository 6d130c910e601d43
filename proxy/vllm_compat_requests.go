package proxy

import "github.com/prometheus/client_golang/prometheus"

// vLLM's request histograms and token counters (compat [vllm]), the
// series kubernetes-sigs/inference-perf reads from a vLLM server
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
type vllmRequests struct {
	e2e, ttft, itl, tpot              *prometheus.HistogramVec
	queue, prefill, decode, inference *prometheus.HistogramVec
	promptLen, generationLen          *prometheus.HistogramVec
	promptTokens, generationTokens    *prometheus.CounterVec
	success                           *prometheus.CounterVec
}

// vLLM's finish reasons (vllm/v1/engine/__init__.py, FINISH_REASON_STRINGS;
// "repetition" is a sampler's, which mlx_lm has not).
const (
	vllmFinishStop   = "stop"
	vllmFinishLength = "length"
	vllmFinishAbort  = "abort"
	vllmFinishError  = "error"
)

var vllmFinishReasons = []string{vllmFinishStop, vllmFinishLength, vllmFinishAbort, vllmFinishError}

func newVLLMRequests(r registrar, model string) *vllmRequests {
	h := func(name, help string, buckets []float64) *prometheus.HistogramVec {
		return r.histogramOf(name, help, buckets, "model_name")
	}
	v := &vllmRequests{
		e2e:              h(metricVllmE2eRequestLatencySeconds, metricVllmE2eRequestLatencySecondsHelp, metricVllmE2eRequestLatencySecondsBuckets),
		ttft:             h(metricVllmTimeToFirstTokenSeconds, metricVllmTimeToFirstTokenSecondsHelp, metricVllmTimeToFirstTokenSecondsBuckets),
		itl:              h(metricVllmInterTokenLatencySeconds, metricVllmInterTokenLatencySecondsHelp, metricVllmInterTokenLatencySecondsBuckets),
		tpot:             h(metricVllmRequestTimePerOutputTokenSeconds, metricVllmRequestTimePerOutputTokenSecondsHelp, metricVllmRequestTimePerOutputTokenSecondsBuckets),
		queue:            h(metricVllmRequestQueueTimeSeconds, metricVllmRequestQueueTimeSecondsHelp, metricVllmRequestQueueTimeSecondsBuckets),
		prefill:          h(metricVllmRequestPrefillTimeSeconds, metricVllmRequestPrefillTimeSecondsHelp, metricVllmRequestPrefillTimeSecondsBuckets),
		decode:           h(metricVllmRequestDecodeTimeSeconds, metricVllmRequestDecodeTimeSecondsHelp, metricVllmRequestDecodeTimeSecondsBuckets),
		inference:        h(metricVllmRequestInferenceTimeSeconds, metricVllmRequestInferenceTimeSecondsHelp, metricVllmRequestInferenceTimeSecondsBuckets),
		promptLen:        h(metricVllmRequestPromptTokens, metricVllmRequestPromptTokensHelp, metricVllmRequestPromptTokensBuckets),
		generationLen:    h(metricVllmRequestGenerationTokens, metricVllmRequestGenerationTokensHelp, metricVllmRequestGenerationTokensBuckets),
		promptTokens:     r.counter(metricVllmPromptTokensTotal, metricVllmPromptTokensTotalHelp, "model_name"),
		generationTokens: r.counter(metricVllmGenerationTokensTotal, metricVllmGenerationTokensTotalHelp, "model_name"),
		success:          r.counter(metricVllmRequestSuccessTotal, metricVllmRequestSuccessTotalHelp, "model_name", "finished_reason"),
	}
	// vLLM makes its series for the served model when it starts
	// (make_per_engine; request_success for every finish reason), so a
	// rate over a run sees the first request as an increase from 0.
	for _, vec := range []*prometheus.HistogramVec{v.e2e, v.ttft, v.itl, v.tpot, v.queue, v.prefill, v.decode, v.inference, v.promptLen, v.generationLen} {
		vec.WithLabelValues(model)
	}
	v.promptTokens.WithLabelValues(model)
	v.generationTokens.WithLabelValues(model)
	for _, reason := range vllmFinishReasons {
		v.success.WithLabelValues(model, reason)
	}
	return v
}

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
// gauges were raised with.
func (v *vllmRequests) observe(rec *Record) {
	reason, took := vllmFinish(rec)
	if !took {
		return
	}
	model := rec.inFlightLabel
	v.success.WithLabelValues(model, reason).Inc()
	v.e2e.WithLabelValues(model).Observe(rec.End.Sub(rec.Start).Seconds())
	if u := rec.Usage; u != nil {
		prompt, generated := float64(max(u.PromptTokens, 0)), float64(max(u.CompletionTokens, 0))
		v.promptTokens.WithLabelValues(model).Add(prompt)
		v.generationTokens.WithLabelValues(model).Add(generated)
		v.promptLen.WithLabelValues(model).Observe(prompt)
		v.generationLen.WithLabelValues(model).Observe(generated)
	}
	if !rec.Streaming || rec.Destreamed || rec.Headers.IsZero() {
		return // no admission or first token seen
	}
	v.queue.WithLabelValues(model).Observe(rec.Headers.Sub(rec.Sent).Seconds())
	v.inference.WithLabelValues(model).Observe(rec.End.Sub(rec.Headers).Seconds())
	if rec.FirstChunk.IsZero() {
		return
	}
	v.ttft.WithLabelValues(model).Observe(rec.FirstChunk.Sub(rec.Start).Seconds())
	v.prefill.WithLabelValues(model).Observe(rec.FirstChunk.Sub(rec.Headers).Seconds())
	decode := rec.End.Sub(rec.FirstChunk).Seconds()
	v.decode.WithLabelValues(model).Observe(decode)
	if u := rec.Usage; u != nil {
		tpot := 0.0
		if u.CompletionTokens > 1 {
			tpot = decode / float64(u.CompletionTokens-1)
		}
		v.tpot.WithLabelValues(model).Observe(tpot)
	}
	if len(rec.gaps) > 0 {
		itl := v.itl.WithLabelValues(model)
		for _, g := range rec.gaps {
			itl.Observe(float64(g))
		}
	}
}
