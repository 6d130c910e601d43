package proxy

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mlx-otelcol/mlx-otelcol/internal/modelconfig"
)

// Histogram buckets of the original mlx_metrics_proxy.py: dashboards and
// alert rules read these le values.
var (
	ttftBuckets       = []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
	generationBuckets = []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120}
	tokenRateBuckets  = []float64{1, 2, 5, 10, 20, 40, 80, 160, 320, 640}
	queueWaitBuckets  = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
)

// Metrics are the proxy's series, in a registry of its own (no Go runtime
// or process collectors: those belong to the collector's own telemetry).
// Names, types, labels and buckets are those of the original proxy.
type Metrics struct {
	Registry *prometheus.Registry

	requests        *prometheus.CounterVec
	tokensPrompt    *prometheus.CounterVec
	tokensComp      *prometheus.CounterVec
	ttft            *prometheus.HistogramVec
	generation      *prometheus.HistogramVec
	tokenRate       *prometheus.HistogramVec
	queueWait       *prometheus.HistogramVec
	admissionWait   *prometheus.HistogramVec
	toolCalls       *prometheus.CounterVec
	finishReasons   *prometheus.CounterVec
	temperature     *prometheus.GaugeVec
	up              prometheus.Gauge
	inFlight        *prometheus.GaugeVec
	refusals        *prometheus.CounterVec
	panics          *prometheus.CounterVec
	cuts            *prometheus.CounterVec
	stalls          *prometheus.CounterVec
	errors          *prometheus.CounterVec
	contextMax      *prometheus.GaugeVec
	contextUsed     *prometheus.GaugeVec
	contextUtil     *prometheus.GaugeVec
	kvBytesPerToken *prometheus.GaugeVec
	cachedTokens    *prometheus.CounterVec
	cacheRatio      *prometheus.GaugeVec
	modelInfo       *prometheus.GaugeVec
	modelArch       *prometheus.GaugeVec
	spansDropped    prometheus.Counter
	accessDropped   prometheus.Counter
	liveDropped     *prometheus.CounterVec

	models    *labelSet
	tools     *labelSet
	modelName string // the configured model: its label is always kept

	mu     sync.RWMutex
	maxCtx map[string]int // model label -> max context, once config.json is read
}

func newMetrics(cfg Config) *Metrics {
	m := &Metrics{
		Registry:  prometheus.NewRegistry(),
		models:    newLabelSet(cfg.MaxModelLabelValues, cfg.modelLabel()),
		tools:     newLabelSet(cfg.MaxToolLabelValues),
		modelName: cfg.modelLabel(),
		maxCtx:    map[string]int{},
	}
	r := registrar{m.Registry}
	counter, gauge, histogram := r.counter, r.gauge, r.histogram

	m.requests = counter("mlx_requests_total", "Completion requests (chat and text) the proxy handled, whatever their outcome.", "model", "streaming", "kind")
	m.tokensPrompt = counter("mlx_tokens_prompt_total", "Prompt tokens, from the engine's usage.", "model", "kind")
	m.tokensComp = counter("mlx_tokens_completion_total", "Completion tokens (reasoning included), from the engine's usage.", "model", "kind")
	m.ttft = histogram("mlx_ttft_seconds", "Streamed completions: arrival at the proxy to the first chunk with non-empty content (reasoning excluded).", ttftBuckets)
	m.generation = histogram("mlx_generation_seconds", "Completed completions: arrival at the proxy to the last byte relayed.", generationBuckets)
	m.tokenRate = histogram("mlx_token_rate_tokens_per_second", "Completion tokens per second of decoding.", tokenRateBuckets)
	m.queueWait = histogram("mlx_queue_wait_seconds", "Completions, streamed or not: arrival at the proxy to the request being sent to the engine (the original's meaning).", queueWaitBuckets)
	m.admissionWait = histogram("mlx_admission_wait_seconds", "Streamed completions: arrival at the proxy to the engine's response headers (the engine admitted the request).", queueWaitBuckets)
	m.toolCalls = counter("mlx_tool_calls_total", "Tool calls the model made, by tool name and call type.", "model", "kind", "tool", "type")
	m.finishReasons = counter("mlx_finish_reason_total", "Choices the engine finished, by finish_reason.", "model", "reason", "kind")
	m.temperature = gauge("mlx_temperature", "Sampling temperature of the most recent completion request.", "model", "kind")
	m.up = prometheus.NewGauge(prometheus.GaugeOpts{Name: "mlx_up", Help: "1 if the upstream engine answered its last probe or request, else 0."})
	m.Registry.MustRegister(m.up)
	m.inFlight = gauge("mlx_in_flight", "Completion requests in progress.", "model")
	m.refusals = counter("mlx_http_refusals_total", "Completion requests the proxy answered itself instead of passing them to the engine, by route and status: 404 a model it does not serve, 400 adapters or a draft model, 408 a body too slow, 429 too many requests in progress.", "route", "status")
	m.panics = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mlx_proxy_panics_total",
		Help: "Panics the proxy recovered from, by where: handler (the request's connection is aborted), scorer (the answer is not scored), span, probe, live_status."}, []string{"where"})
	m.Registry.MustRegister(m.panics)
	for _, w := range panicPlaces {
		m.panics.WithLabelValues(w)
	}
	m.cuts = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mlx_proxy_buffer_cuts_total",
		Help: "Completions where a buffer the client's or the engine's input sizes hit its bound, by buffer: sse_event (an event past 1 MiB, relayed unread), tool_arguments (streamed arguments past 1 MiB), text (an answer past 1 MiB of text, for scoring)."}, []string{"buffer"})
	m.Registry.MustRegister(m.cuts)
	for _, b := range []string{cutSSEEvent, cutToolArguments, cutText} {
		m.cuts.WithLabelValues(b)
	}
	m.stalls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mlx_stream_stalls_total",
		Help: "Completions cut because a side stalled: engine (sent nothing for stream_stall; the client's stream was ended with an error event and [DONE]), client (did not read for client_write)."}, []string{"side"})
	m.Registry.MustRegister(m.stalls)
	for _, side := range []string{stallEngine, stallClient} {
		m.stalls.WithLabelValues(side)
	}
	m.errors = counter("mlx_error_total", "Completion requests that failed, by status class (a stream cut short counts as 5xx).", "model", "status", "kind")
	m.contextMax = gauge("mlx_context_length_max_tokens", "The model's maximum context (max_position_embeddings in config.json).", "model")
	m.contextUsed = gauge("mlx_context_used_tokens", "Prompt plus completion tokens of the most recent completion.", "model")
	m.contextUtil = gauge("mlx_context_utilization", "mlx_context_used_tokens / mlx_context_length_max_tokens (0..1).", "model")
	m.kvBytesPerToken = gauge("mlx_kv_bytes_per_token", "KV cache bytes one token takes (2-byte elements, from config.json).", "model")
	m.cachedTokens = counter("mlx_prompt_cached_tokens_total", "Prompt tokens the engine took from its prompt cache (usage.prompt_tokens_details.cached_tokens).", "model", "kind")
	m.cacheRatio = gauge("mlx_prompt_cache_ratio", "cached_tokens / prompt_tokens of the most recent completion (0..1).", "model")
	m.modelInfo = gauge("mlx_model_info", "Model configuration from config.json; value = the attribute (layer_count, kv_heads, head_dim, hidden_size, attention_heads, vocab_size, intermediate_size, quant_bits, quant_group_size; where config.json has them, linear_key_heads, linear_value_heads, linear_key_head_dim, linear_value_head_dim, linear_conv_kernel_dim, mtp_layers, tie_word_embeddings).", "model", "attr")
	m.modelArch = gauge("mlx_model_arch", "Model architecture and dtype from config.json; always 1.", "model", "arch", "dtype")
	m.spansDropped = prometheus.NewCounter(prometheus.CounterOpts{Name: "mlx_spans_dropped_total",
		Help: "Request spans dropped before the collector's traces pipeline took them (a queue was full, or no pipeline took them)."})
	m.accessDropped = prometheus.NewCounter(prometheus.CounterOpts{Name: "mlx_access_log_dropped_total",
		Help: "Access log records dropped before the collector's logs pipeline took them (the queue was full, or no pipeline took them)."})
	m.Registry.MustRegister(m.spansDropped, m.accessDropped)
	m.liveDropped = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mlx_live_records_dropped_total",
		Help: "Live stream records (VeloBenchmark) dropped, by reason: queue_full, no_pipeline, refused, export_failed."}, []string{"reason"})
	m.Registry.MustRegister(m.liveDropped)
	for _, r := range []string{dropQueueFull, dropNoPipeline, dropRefused, dropExportFailed} {
		m.liveDropped.WithLabelValues(r)
	}

	// The configured model's counters exist from the start at 0, so that
	// rate() and increase() see the first request and the first error.
	model := m.modelName
	for _, kind := range []string{KindChat, KindReasoning} {
		for _, streaming := range []string{"true", "false"} {
			m.requests.WithLabelValues(model, streaming, kind)
		}
		m.tokensPrompt.WithLabelValues(model, kind)
		m.tokensComp.WithLabelValues(model, kind)
		m.cachedTokens.WithLabelValues(model, kind)
		for _, class := range []string{"4xx", "5xx"} {
			m.errors.WithLabelValues(model, class, kind)
		}
	}
	m.inFlight.WithLabelValues(model)
	for _, route := range routeLabels {
		for _, status := range []string{"400", "404", "408", "429"} {
			m.refusals.WithLabelValues(route, status)
		}
	}
	return m
}

// registrar creates series in one registry; every histogram of the proxy
// has the single label model.
type registrar struct{ reg *prometheus.Registry }

func (r registrar) counter(name, help string, labels ...string) *prometheus.CounterVec {
	v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	r.reg.MustRegister(v)
	return v
}

func (r registrar) gauge(name, help string, labels ...string) *prometheus.GaugeVec {
	v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
	r.reg.MustRegister(v)
	return v
}

func (r registrar) histogram(name, help string, buckets []float64) *prometheus.HistogramVec {
	v := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, []string{"model"})
	r.reg.MustRegister(v)
	return v
}

// setUp sets mlx_up.
func (m *Metrics) setUp(up bool) {
	if up {
		m.up.Set(1)
	} else {
		m.up.Set(0)
	}
}

// The bounded buffers (mlx_proxy_buffer_cuts_total{buffer}).
const (
	cutSSEEvent      = "sse_event"
	cutToolArguments = "tool_arguments"
	cutText          = "text"
)

// countCuts counts, once per request, each buffer that hit its bound.
func (m *Metrics) countCuts(rec *Record) {
	if rec.EventCut {
		m.cuts.WithLabelValues(cutSSEEvent).Inc()
	}
	var args, text bool
	for _, ch := range rec.Choices {
		text = text || ch.TextTruncated
		for _, tc := range ch.ToolCalls {
			args = args || tc.ArgumentsCut
		}
	}
	if args {
		m.cuts.WithLabelValues(cutToolArguments).Inc()
	}
	if text {
		m.cuts.WithLabelValues(cutText).Inc()
	}
}

// routeLabels name the completion routes in mlx_http_refusals_total.
var routeLabels = map[Route]string{RouteChat: "chat_completions", RouteText: "completions"}

// refused counts a request the proxy answered itself.
func (m *Metrics) refused(route Route, status int) {
	m.refusals.WithLabelValues(routeLabels[route], strconv.Itoa(status)).Inc()
}

// setModelFacts publishes what config.json says about the model.
func (m *Metrics) setModelFacts(model string, info modelconfig.Info) {
	if info.MaxContext > 0 {
		m.contextMax.WithLabelValues(model).Set(float64(info.MaxContext))
		m.mu.Lock()
		m.maxCtx[model] = info.MaxContext
		m.mu.Unlock()
	}
	if kv := info.KVBytesPerToken(2); kv > 0 {
		m.kvBytesPerToken.WithLabelValues(model).Set(float64(kv))
	}
	for _, a := range []struct {
		attr  string
		value int
	}{
		{"layer_count", info.Layers},
		{"kv_heads", info.KVHeads},
		{"head_dim", info.HeadDim},
		{"hidden_size", info.HiddenSize},
		{"attention_heads", info.AttentionHeads},
		{"vocab_size", info.VocabSize},
		{"intermediate_size", info.IntermediateSize},
		{"quant_bits", info.QuantBits},
		{"quant_group_size", info.QuantGroupSize},
	} {
		m.modelInfo.WithLabelValues(model, a.attr).Set(float64(a.value))
	}
	for _, attr := range modelconfig.OptionalAttrs() {
		if v, ok := info.Optional[attr]; ok {
			m.modelInfo.WithLabelValues(model, attr).Set(float64(v))
		}
	}
	arch := first(info.Architecture, info.ModelType, "unknown")
	m.modelArch.WithLabelValues(model, arch, first(info.Dtype, "unknown")).Set(1)
}

func first(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// Begin implements Recorder.
func (m *Metrics) Begin(rec *Record) {
	rec.inFlightLabel = m.models.lookup(rec.Model)
	m.inFlight.WithLabelValues(rec.inFlightLabel).Inc()
}

// End implements Recorder: every series a finished request moves. A model
// takes a label slot only once the engine has answered it 2xx: a name the
// engine refused (or the proxy did) is "other", so junk names cannot use
// up the slots of real models.
func (m *Metrics) End(rec *Record) {
	model := m.models.lookup(rec.Model)
	if rec.Status >= 200 && rec.Status < 300 {
		model = m.models.value(rec.Model)
	}
	kind := rec.Kind
	m.inFlight.WithLabelValues(rec.inFlightLabel).Dec()
	m.countCuts(rec)
	if rec.Stalled != "" {
		m.stalls.WithLabelValues(rec.Stalled).Inc()
	}
	m.requests.WithLabelValues(model, strconv.FormatBool(rec.Streaming), kind).Inc()
	if class, isErr := rec.Err(); isErr {
		m.errors.WithLabelValues(model, class, kind).Inc()
	}
	if rec.HasTemperature && rec.RequestParsed {
		m.temperature.WithLabelValues(model, kind).Set(rec.Temperature)
	}

	if !rec.Sent.IsZero() {
		m.queueWait.WithLabelValues(model).Observe(rec.Sent.Sub(rec.Start).Seconds())
	}
	// A destreamed request's headers came with the whole answer: no
	// admission moment to time.
	if rec.Streaming && !rec.Destreamed && !rec.Headers.IsZero() {
		m.admissionWait.WithLabelValues(model).Observe(rec.Headers.Sub(rec.Start).Seconds())
	}
	if !rec.FirstContent.IsZero() {
		m.ttft.WithLabelValues(model).Observe(rec.FirstContent.Sub(rec.Start).Seconds())
	}
	ok := rec.Outcome == OutcomeComplete && rec.Status >= 200 && rec.Status < 300
	if ok {
		m.generation.WithLabelValues(model).Observe(rec.End.Sub(rec.Start).Seconds())
	}

	for _, ch := range rec.Choices {
		if ch.FinishReason != "" {
			m.finishReasons.WithLabelValues(model, finishReasonLabel(ch.FinishReason), kind).Inc()
		}
		for _, tc := range ch.ToolCalls {
			name := tc.Name
			if name == "" {
				name = "unknown"
			}
			m.toolCalls.WithLabelValues(model, kind, m.tools.value(name), toolTypeLabel(tc.Type)).Inc()
		}
	}

	u := rec.Usage
	if u == nil {
		return
	}
	m.tokensPrompt.WithLabelValues(model, kind).Add(float64(max(u.PromptTokens, 0)))
	m.tokensComp.WithLabelValues(model, kind).Add(float64(max(u.CompletionTokens, 0)))
	if u.HasCached && u.CachedTokens > 0 {
		m.cachedTokens.WithLabelValues(model, kind).Add(float64(u.CachedTokens))
	}
	if u.PromptTokens > 0 {
		m.cacheRatio.WithLabelValues(model).Set(min(1, float64(max(u.CachedTokens, 0))/float64(u.PromptTokens)))
	}
	used := max(u.PromptTokens, 0) + max(u.CompletionTokens, 0)
	m.contextUsed.WithLabelValues(model).Set(float64(used))
	m.mu.RLock()
	mc := m.maxCtx[model]
	m.mu.RUnlock()
	if mc > 0 {
		m.contextUtil.WithLabelValues(model).Set(min(1, float64(used)/float64(mc)))
	}
	if ok {
		if rate, okRate := tokenRate(rec); okRate {
			m.tokenRate.WithLabelValues(model).Observe(rate)
		}
	}
}

// tokenRate is completion tokens per second of decoding. In a stream the
// first chunk with text (content or reasoning: completion tokens count
// both) carries the first token, which ends prefill; the other n-1 tokens
// are decoded between it and the end. A stream whose only output is a
// tool call (mlx_lm sends it whole at the end) and a non-streamed answer
// have no such moment: n tokens over the whole request, as the original
// proxy timed them.
func tokenRate(rec *Record) (float64, bool) {
	n := rec.Usage.CompletionTokens
	from := rec.Start
	if rec.Streaming && !rec.FirstOutput.IsZero() {
		from, n = rec.FirstOutput, n-1
	}
	d := rec.End.Sub(from).Seconds()
	if n <= 0 || d <= 0 {
		return 0, false
	}
	return float64(n) / d, true
}
