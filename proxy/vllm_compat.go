package proxy

import (
	"math"
	"sync/atomic"

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
	waiting, running *prometheus.GaugeVec
	model            string
	// kvUsage is the KV-cache receiver's latest utilisation (float64
	// bits); kvKnown whether there is one.
	kvUsage atomic.Uint64
	kvKnown atomic.Bool
	kvDesc  *prometheus.Desc
	// requests are vLLM's request histograms and token counters
	// (vllm_compat_requests.go).
	requests *vllmRequests
}

func newVLLMGauges(r registrar, model string) *vllmGauges {
	g := &vllmGauges{
		waiting: r.gauge(metricVllmNumRequestsWaiting, metricVllmNumRequestsWaitingHelp, "model_name"),
		running: r.gauge(metricVllmNumRequestsRunning, metricVllmNumRequestsRunningHelp, "model_name"),
		model:   model,
		kvDesc:  prometheus.NewDesc(metricVllmKvCacheUsagePerc, metricVllmKvCacheUsagePercHelp, []string{"model_name"}, nil),
	}
	g.requests = newVLLMRequests(r, model)
	// The configured model's gauges exist from the start at 0, as vLLM
	// serves them before the first request.
	g.waiting.WithLabelValues(model)
	g.running.WithLabelValues(model)
	r.reg.MustRegister(g)
	return g
}

// Describe and Collect serve vllm:kv_cache_usage_perc only while a value
// is known: a missing cache state is no series, not a 0.
func (g *vllmGauges) Describe(ch chan<- *prometheus.Desc) { ch <- g.kvDesc }

func (g *vllmGauges) Collect(ch chan<- prometheus.Metric) {
	if !g.kvKnown.Load() {
		return
	}
	ch <- prometheus.MustNewConstMetric(g.kvDesc, prometheus.GaugeValue, math.Float64frombits(g.kvUsage.Load()), g.model)
}

func (g *vllmGauges) setKVUsage(u float64, known bool) {
	if known && !math.IsNaN(u) && !math.IsInf(u, 0) {
		g.kvUsage.Store(math.Float64bits(u))
		g.kvKnown.Store(true)
		return
	}
	g.kvKnown.Store(false)
}

// begin counts a request sent to the engine: waiting when it goes as a
// stream, running otherwise.
func (g *vllmGauges) begin(rec *Record) {
	if rec.Streaming && !rec.Destreamed {
		rec.vllmPhase = vllmWaiting
		g.waiting.WithLabelValues(rec.inFlightLabel).Inc()
		return
	}
	rec.vllmPhase = vllmRunning
	g.running.WithLabelValues(rec.inFlightLabel).Inc()
}

// admitted moves a waiting request to running: the engine's headers came.
// The relay's response hook and end run on the request's goroutine, so
// the phase needs no lock.
func (g *vllmGauges) admitted(rec *Record) {
	if rec.vllmPhase != vllmWaiting {
		return
	}
	rec.vllmPhase = vllmRunning
	g.waiting.WithLabelValues(rec.inFlightLabel).Dec()
	g.running.WithLabelValues(rec.inFlightLabel).Inc()
}

// end lowers the request's gauge and records it in vLLM's request
// series.
func (g *vllmGauges) end(rec *Record) {
	switch rec.vllmPhase {
	case vllmWaiting:
		g.waiting.WithLabelValues(rec.inFlightLabel).Dec()
	case vllmRunning:
		g.running.WithLabelValues(rec.inFlightLabel).Dec()
	}
	rec.vllmPhase = vllmUncounted
	g.requests.observe(rec)
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
