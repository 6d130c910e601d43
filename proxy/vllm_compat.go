package proxy

import (
	"math"

	"github.com/prometheus/client_golang/prometheus"
)

// CompatVLLM in Config.Compat serves vLLM's scheduler and KV-cache gauges
// beside the proxy's own: llm-d's router and the Gateway API Inference
// Extension's endpoint picker balance on them, benchmark tools read them
// (vllm/v1/metrics/loggers.py names them; the endpoint picker's vLLM
// defaults read vllm:num_requests_waiting, vllm:num_requests_running and
// vllm:kv_cache_usage_perc). Off by default: the scrape is unchanged.
const CompatVLLM = "vllm"

// The phase a request is counted in among vLLM's gauges (Record.vllmPhase).
const (
	vllmUncounted = iota
	vllmWaiting
	vllmRunning
)

// vllmGauges are vLLM's gauges, as the proxy can know them. Waiting is a
// stream sent to the engine without its response headers yet: mlx_lm
// (v0.31.3 server.py, handle_completion) sends a stream's headers once its
// batch has admitted the request, so until then it is queued in the
// engine. The proxy holds no queue of its own (past max_concurrent_requests
// it answers 429). A non-streamed request shows no admission (mlx_lm sends
// its headers with the whole answer), so it counts as running once sent:
// counting it as waiting would show a busy engine as idle.
type vllmGauges struct {
	vllmFamilies // metadata.yaml's group vllm
	model        string
}

func newVLLMGauges(r registrar, model string) *vllmGauges {
	g := &vllmGauges{model: model}
	g.register(r)
	// vLLM makes its series for the served model when it starts
	// (make_per_engine; request_success for every finish reason), so a
	// rate over a run sees the first request as an increase from 0.
	for _, vec := range []*prometheus.GaugeVec{g.vllmNumRequestsWaiting, g.vllmNumRequestsRunning} {
		vec.WithLabelValues(model)
	}
	for _, vec := range []*prometheus.HistogramVec{g.vllmE2eRequestLatencySeconds, g.vllmTimeToFirstTokenSeconds,
		g.vllmInterTokenLatencySeconds, g.vllmRequestTimePerOutputTokenSeconds, g.vllmRequestQueueTimeSeconds,
		g.vllmRequestPrefillTimeSeconds, g.vllmRequestDecodeTimeSeconds, g.vllmRequestInferenceTimeSeconds,
		g.vllmRequestPromptTokens, g.vllmRequestGenerationTokens} {
		vec.WithLabelValues(model)
	}
	g.vllmPromptTokensTotal.WithLabelValues(model)
	g.vllmGenerationTokensTotal.WithLabelValues(model)
	for _, reason := range vllmFinishReasons {
		g.vllmRequestSuccessTotal.WithLabelValues(model, reason)
	}
	return g
}

// setKVUsage serves vllm:kv_cache_usage_perc only while a value is known:
// a missing cache state is no series, not a 0.
func (g *vllmGauges) setKVUsage(u float64, known bool) {
	if known && !math.IsNaN(u) && !math.IsInf(u, 0) {
		g.vllmKvCacheUsagePerc.WithLabelValues(g.model).Set(u)
		return
	}
	g.vllmKvCacheUsagePerc.DeleteLabelValues(g.model)
}

// begin counts a request sent to the engine: waiting when it goes as a
// stream, running otherwise.
func (g *vllmGauges) begin(rec *Record) {
	if rec.Streaming && !rec.Destreamed {
		rec.vllmPhase = vllmWaiting
		g.vllmNumRequestsWaiting.WithLabelValues(rec.inFlightLabel).Inc()
		return
	}
	rec.vllmPhase = vllmRunning
	g.vllmNumRequestsRunning.WithLabelValues(rec.inFlightLabel).Inc()
}

// admitted moves a waiting request to running: the engine's headers came.
// The relay's response hook and end run on the request's goroutine, so
// the phase needs no lock.
func (g *vllmGauges) admitted(rec *Record) {
	if rec.vllmPhase != vllmWaiting {
		return
	}
	rec.vllmPhase = vllmRunning
	g.vllmNumRequestsWaiting.WithLabelValues(rec.inFlightLabel).Dec()
	g.vllmNumRequestsRunning.WithLabelValues(rec.inFlightLabel).Inc()
}

// end lowers the request's gauge and records it in vLLM's request
// series.
func (g *vllmGauges) end(rec *Record) {
	switch rec.vllmPhase {
	case vllmWaiting:
		g.vllmNumRequestsWaiting.WithLabelValues(rec.inFlightLabel).Dec()
	case vllmRunning:
		g.vllmNumRequestsRunning.WithLabelValues(rec.inFlightLabel).Dec()
	}
	rec.vllmPhase = vllmUncounted
	g.observe(rec)
}

// SetKVCacheUsage gives the proxy the KV-cache receiver's latest
// utilisation (0-1; known false: no cache state), served as
// vllm:kv_cache_usage_perc with compat [vllm]. Without it, a no-op.
func (p *Proxy) SetKVCacheUsage(u float64, known bool) {
	if g := p.metrics.vllm; g != nil {
		g.setKVUsage(u, known)
	}
}

func hasCompat(cfg Config, name string) bool {
	for _, c := range cfg.Compat {
		if c == name {
			return true
		}
	}
	return false
}
