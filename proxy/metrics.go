package proxy

import (
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/otlptranslator"

	"github.com/mlx-otelcol/mlx-otelcol/internal/modelconfig"
)

// Metrics are the proxy's series, in a registry of its own (no Go runtime
// or process collectors: those belong to the collector's own telemetry).
// Names, types, labels and buckets are those of the original proxy.
type Metrics struct {
	Registry *prometheus.Registry
	families             // generated_metrics.go, from metadata.yaml
	vllm     *vllmGauges // nil without compat [vllm]

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
		tools:     newToolLabels(cfg),
		modelName: cfg.modelLabel(),
		maxCtx:    map[string]int{},
	}
	r := registrar{m.Registry}
	m.register(r)
	atZero(m.mlxProxyPanicsTotal, labelValuesWhere)
	atZero(m.mlxProxyBufferCutsTotal, labelValuesBuffer)
	atZero(m.mlxStreamStallsTotal, labelValuesSide)
	atZero(m.mlxLiveRecordsDroppedTotal, labelValuesLiveReason)
	atZero(m.mlxProxyConnectionsRefusedTotal, labelValuesConnReason)
	atZero(m.mlxUserFeedbackTotal, []string{verdictUp, verdictDown})
	if hasCompat(cfg, CompatVLLM) {
		m.vllm = newVLLMGauges(r, m.modelName)
	}

	// The configured model's counters exist from the start at 0, so that
	// rate() and increase() see the first request and the first error.
	model := m.modelName
	for _, kind := range labelValuesKind {
		for _, streaming := range labelValuesStreaming {
			m.mlxRequestsTotal.WithLabelValues(model, streaming, kind, OriginUser)
		}
		m.mlxTokensPromptTotal.WithLabelValues(model, kind, OriginUser)
		m.mlxTokensCompletionTotal.WithLabelValues(model, kind, OriginUser)
		m.mlxPromptCachedTokensTotal.WithLabelValues(model, kind, OriginUser)
		for _, class := range labelValuesStatus {
			m.mlxErrorTotal.WithLabelValues(model, class, kind, OriginUser)
		}
	}
	m.mlxInFlight.WithLabelValues(model)
	for _, route := range routeLabels {
		for _, status := range []string{"400", "401", "403", "404", "408", "415", "429"} {
			m.mlxHttpRefusalsTotal.WithLabelValues(route, status)
		}
	}
	for _, status := range []string{"401", "403", "404", "429"} {
		m.mlxHttpRefusalsTotal.WithLabelValues(routeOtherLabel, status)
	}
	return m
}

// atZero creates v's series of each value (its one label), so that they
// are served at 0 from the start and rate() sees the first event.
func atZero(v *prometheus.CounterVec, values []string) {
	for _, x := range values {
		v.WithLabelValues(x)
	}
}

// registrar creates families in one registry (the generated register
// methods of generated_metrics.go call it with metadata.yaml's names, help
// texts, buckets and labels).
type registrar struct{ reg *prometheus.Registry }

func (r registrar) counter(name, help string, labels ...string) *prometheus.CounterVec {
	v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help, Unit: openMetricsUnit(name)}, labels)
	r.reg.MustRegister(v)
	return v
}

func (r registrar) gauge(name, help string, labels ...string) *prometheus.GaugeVec {
	v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help, Unit: openMetricsUnit(name)}, labels)
	r.reg.MustRegister(v)
	return v
}

func (r registrar) histogramOf(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	v := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Unit: openMetricsUnit(name), Buckets: buckets}, labels)
	r.reg.MustRegister(v)
	return v
}

// openMetricsUnit is the unit an OpenMetrics scrape shows for the metric
// name: its metadata.yaml unit (UCUM) in Prometheus' words, as the
// collector's exporters translate units (otlptranslator: s is seconds,
// {token}/s is per_second, {token} and 1 are none). OpenMetrics requires the
// name (less a counter's _total) to end with the unit, and Prometheus refuses
// a scrape where it does not, so a unit the name does not end with is left
// out. The classic text format, which VictoriaMetrics asks for, has no units.
func openMetricsUnit(name string) string {
	u := (&otlptranslator.UnitNamer{}).Build(metricUnits[name])
	if u == "" || !strings.HasSuffix(strings.TrimSuffix(name, "_total"), "_"+u) {
		return ""
	}
	return u
}

// setUp sets mlx_up.
func (m *Metrics) setUp(up bool) {
	if up {
		m.mlxUp.Set(1)
	} else {
		m.mlxUp.Set(0)
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
		m.mlxProxyBufferCutsTotal.WithLabelValues(cutSSEEvent).Inc()
	}
	var args, text bool
	for _, ch := range rec.Choices {
		text = text || ch.TextTruncated
		for _, tc := range ch.ToolCalls {
			args = args || tc.ArgumentsCut
		}
	}
	if args {
		m.mlxProxyBufferCutsTotal.WithLabelValues(cutToolArguments).Inc()
	}
	if text {
		m.mlxProxyBufferCutsTotal.WithLabelValues(cutText).Inc()
	}
}

// routeLabels name the completion routes in mlx_http_refusals_total.
var routeLabels = map[Route]string{RouteChat: "chat_completions", RouteText: "completions"}

// routeOtherLabel names every route but the completions in
// mlx_http_refusals_total.
const routeOtherLabel = "other"

// refused counts a request the proxy answered itself, by its route
// (RouteOther: any route but the completions).
func (m *Metrics) refused(route Route, status int) {
	label, ok := routeLabels[route]
	if !ok {
		label = routeOtherLabel
	}
	m.mlxHttpRefusalsTotal.WithLabelValues(label, strconv.Itoa(status)).Inc()
}

// setModelFacts publishes what config.json says about the model.
func (m *Metrics) setModelFacts(model string, info modelconfig.Info) {
	if info.MaxContext > 0 {
		m.mlxContextLengthMaxTokens.WithLabelValues(model).Set(float64(info.MaxContext))
		m.mu.Lock()
		m.maxCtx[model] = info.MaxContext
		m.mu.Unlock()
	}
	if kv := info.KVBytesPerToken(2); kv > 0 {
		m.mlxKvBytesPerToken.WithLabelValues(model).Set(float64(kv))
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
		m.mlxModelInfo.WithLabelValues(model, a.attr).Set(float64(a.value))
	}
	for _, attr := range modelconfig.OptionalAttrs() {
		if v, ok := info.Optional[attr]; ok {
			m.mlxModelInfo.WithLabelValues(model, attr).Set(float64(v))
		}
	}
	arch := first(info.Architecture, info.ModelType, "unknown")
	m.mlxModelArch.WithLabelValues(model, arch, first(info.Dtype, "unknown")).Set(1)
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
	m.mlxInFlight.WithLabelValues(rec.inFlightLabel).Inc()
	if m.vllm != nil {
		m.vllm.begin(rec)
	}
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
	kind, origin := rec.Kind, rec.Origin
	if origin == "" {
		origin = OriginUser // refused before its caller was known
	}
	// The "last request" gauges describe users' requests only (origin.go).
	user := origin == OriginUser
	m.mlxInFlight.WithLabelValues(rec.inFlightLabel).Dec()
	if m.vllm != nil {
		m.vllm.end(rec)
	}
	m.countCuts(rec)
	if rec.Stalled != "" {
		m.mlxStreamStallsTotal.WithLabelValues(rec.Stalled).Inc()
	}
	m.mlxRequestsTotal.WithLabelValues(model, strconv.FormatBool(rec.Streaming), kind, origin).Inc()
	if class, isErr := rec.Err(); isErr {
		m.mlxErrorTotal.WithLabelValues(model, class, kind, origin).Inc()
	}
	if user && rec.HasTemperature && rec.RequestParsed && rec.Outcome != OutcomeRefused {
		m.mlxTemperature.WithLabelValues(model, kind).Set(rec.Temperature)
	}

	if !rec.Sent.IsZero() {
		m.mlxQueueWaitSeconds.WithLabelValues(model, origin).Observe(rec.Sent.Sub(rec.Start).Seconds())
	}
	// A destreamed request's headers came with the whole answer: no
	// admission moment to time.
	if rec.Streaming && !rec.Destreamed && !rec.Headers.IsZero() {
		m.mlxAdmissionWaitSeconds.WithLabelValues(model, origin).Observe(rec.Headers.Sub(rec.Start).Seconds())
	}
	if !rec.FirstContent.IsZero() {
		m.mlxTtftSeconds.WithLabelValues(model, origin).Observe(rec.FirstContent.Sub(rec.Start).Seconds())
	}
	ok := rec.Outcome == OutcomeComplete && rec.Status >= 200 && rec.Status < 300
	if ok {
		m.mlxGenerationSeconds.WithLabelValues(model, origin).Observe(rec.End.Sub(rec.Start).Seconds())
	}
	m.observeLatency(rec, model, origin, ok)
	m.observeGenAI(rec, model, m.responseModelLabel(rec, model), origin, ok)

	for _, ch := range rec.Choices {
		if ch.FinishReason != "" {
			m.mlxFinishReasonTotal.WithLabelValues(model, finishReasonLabel(ch.FinishReason), kind, origin).Inc()
		}
		for _, tc := range ch.ToolCalls {
			name := tc.Name
			if name == "" {
				name = "unknown"
			}
			m.mlxToolCallsTotal.WithLabelValues(model, kind, m.toolLabel(name, ok), toolTypeLabel(tc.Type), origin).Inc()
		}
	}

	m.countClient(rec)
	u := rec.Usage
	if u == nil {
		return
	}
	m.mlxTokensPromptTotal.WithLabelValues(model, kind, origin).Add(float64(max(u.PromptTokens, 0)))
	m.mlxTokensCompletionTotal.WithLabelValues(model, kind, origin).Add(float64(max(u.CompletionTokens, 0)))
	if u.HasCached && u.CachedTokens > 0 {
		m.mlxPromptCachedTokensTotal.WithLabelValues(model, kind, origin).Add(float64(u.CachedTokens))
	}
	if ok {
		if rate, okRate := tokenRate(rec); okRate {
			m.mlxTokenRateTokensPerSecond.WithLabelValues(model, origin).Observe(rate)
		}
	}
	if !user {
		return
	}
	if u.PromptTokens > 0 {
		m.mlxPromptCacheRatio.WithLabelValues(model).Set(min(1, float64(max(u.CachedTokens, 0))/float64(u.PromptTokens)))
	}
	used := max(u.PromptTokens, 0) + max(u.CompletionTokens, 0)
	m.mlxContextUsedTokens.WithLabelValues(model).Set(float64(used))
	m.mu.RLock()
	mc := m.maxCtx[model]
	m.mu.RUnlock()
	if mc > 0 {
		m.mlxContextUtilization.WithLabelValues(model).Set(min(1, float64(used)/float64(mc)))
	}
}

// responseModelLabel is gen_ai.response.model as a bounded label: the
// request's label when the answer names the same model (or none, or mlx_lm's
// "default_model"), a kept model's name, else "other"; "" without an answer.
func (m *Metrics) responseModelLabel(rec *Record, model string) string {
	switch {
	case rec.ResponseModel == "":
		return ""
	case rec.ResponseModel == rec.Model || rec.ResponseModel == defaultModelName:
		return model
	}
	return m.models.lookup(rec.ResponseModel)
}

// countClient counts a request and its tokens under its caller. A request
// refused before its caller was known has none, and is counted only in
// mlx_http_refusals_total.
func (m *Metrics) countClient(rec *Record) {
	if rec.Client == "" {
		return
	}
	class := "2xx"
	if c, isErr := rec.Err(); isErr {
		class = c
	}
	m.mlxClientRequestsTotal.WithLabelValues(rec.Client, class).Inc()
	if u := rec.Usage; u != nil {
		m.mlxClientTokensTotal.WithLabelValues(rec.Client, "prompt").Add(float64(max(u.PromptTokens, 0)))
		m.mlxClientTokensTotal.WithLabelValues(rec.Client, "completion").Add(float64(max(u.CompletionTokens, 0)))
	}
}

// newToolLabels bounds the tool label: the names in tool_labels when it is
// set (every other name is "other"), else the first max_tool_label_values
// names of complete 2xx answers.
func newToolLabels(cfg Config) *labelSet {
	if len(cfg.ToolLabels) == 0 {
		return newLabelSet(cfg.MaxToolLabelValues)
	}
	s := newLabelSet(len(cfg.ToolLabels), cfg.ToolLabels...)
	s.closed = true
	return s
}

// toolLabel is a tool name's label value: a name takes a slot only from a
// whole 2xx answer.
func (m *Metrics) toolLabel(name string, complete bool) string {
	if complete {
		return m.tools.value(name)
	}
	return m.tools.lookup(name)
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
