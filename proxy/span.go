package proxy

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/confidence"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/heuristics"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/jsonedit"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/span/spankey"
)

// pendingSpan is a started span and what its attributes are made of: a
// copy of the record's facts (the record does not outlive End), so that
// the attributes can be built off the request path.
type pendingSpan struct {
	t    *tracer
	span *Span // its context and start; the rest is filled by finish
	f    spanFacts
}

// spanFacts is what the span needs of a record.
type spanFacts struct {
	route                     Route
	path, model, kind, source string
	streaming, destreamed     bool
	toolsOffered, hasTemp     bool
	temperature               float64
	start, end                time.Time
	headers                   time.Time
	firstChunk, firstContent  time.Time
	status                    int
	outcome                   Outcome
	engineError               string // the engine's error message (tap_error.go)
	usage                     *Usage
	respID, respModel         string
	out                       *outputFacts   // the first choice; nil without one
	outs                      []*outputFacts // every choice, by index
	finishReasons             []string
	request                   requestFacts
	session                   string // X-Session-Id
	client                    string // the caller's client label (caller.go)
	origin                    string // origin.go
}

type outputFacts struct {
	text, reasoning string
	finish          string
	toolCalls       []ToolCall
	truncated       bool
}

// start begins the span of a request that has ended: on the request's
// goroutine, so the access log knows its IDs; the rest is done by finish.
func (t *tracer) start(rec *Record) *pendingSpan {
	sc, psc, ok := newSpanContext(rec.parent)
	if !ok {
		return nil // the client's traceparent said not sampled
	}
	span := &Span{Context: sc, Parent: psc, Name: spanName(rec.Route, rec.Model), Kind: trace.SpanKindServer, Start: rec.Start, Source: t.source}
	f := spanFacts{
		route: rec.Route, path: rec.Path, model: rec.Model, kind: rec.Kind, source: rec.LogprobsSource,
		streaming: rec.Streaming, destreamed: rec.Destreamed,
		toolsOffered: rec.ToolsOffered, hasTemp: rec.HasTemperature, temperature: rec.Temperature,
		start: rec.Start, end: rec.End, headers: rec.Headers,
		firstChunk: rec.FirstChunk, firstContent: rec.FirstContent,
		status: rec.Status, outcome: rec.Outcome, engineError: rec.EngineError, usage: rec.Usage,
		respID: rec.ResponseID, respModel: rec.ResponseModel, request: t.keep(rec.request),
		session: headerSessionOf(rec.parent),
		client:  rec.Client,
		origin:  rec.Origin,
	}
	chs := append([]*Choice(nil), rec.Choices...)
	sort.Slice(chs, func(i, j int) bool { return chs[i].Index < chs[j].Index })
	for _, c := range chs {
		if c.FinishReason != "" {
			f.finishReasons = append(f.finishReasons, ident(c.FinishReason))
		}
	}
	for _, c := range chs {
		f.outs = append(f.outs, &outputFacts{text: c.Text.String(), reasoning: c.Reasoning.String(), finish: c.FinishReason,
			toolCalls: append([]ToolCall(nil), c.ToolCalls...), truncated: c.TextTruncated})
	}
	if len(f.outs) > 0 {
		f.out = f.outs[0]
	}
	return &pendingSpan{t: t, span: span, f: f}
}

// finish gives the span its attributes and ends it with the request's end
// time. h and sc are the answer's scores (nil when it was not scored).
func (ps *pendingSpan) finish(h *heuristics.Result, sc *confidence.Score) {
	f := &ps.f
	defer ps.t.release(&f.request)
	// The status and the figures first, the content last: the attribute
	// cap cuts only content. One slot stays for mlx.content_truncated.
	b := &attrs{kv: make([]attribute.KeyValue, 0, typicalSpanAttributes), budget: ps.t.cfg.MaxContentBytes, room: maxSpanAttributes - 1}
	span := ps.span
	if errType, msg := f.errorType(); errType != "" {
		b.add(attribute.String(spankey.ErrorType, errType))
		span.Status, span.StatusMessage = codes.Error, msg
		// OpenInference records errors as an exception event as well;
		// its message is the engine's own when it sent one.
		excMsg := msg
		if f.engineError != "" {
			excMsg = f.engineError
		}
		span.Events = append(span.Events, SpanEvent{Name: spankey.EventException, Time: f.end, Attributes: []attribute.KeyValue{
			attribute.String("exception.type", errType), attribute.String("exception.message", excMsg)}})
	}
	ps.originalAttrs(b, h, sc)
	ps.genAIAttrs(b)
	ps.openInferenceAttrs(b, h, sc)
	if b.truncated || f.request.cut {
		b.kv = append(b.kv, attribute.Bool(spankey.MlxContentTruncated, true))
	}
	span.Attributes = b.kv
	// The event at the first streamed chunk with text, reasoning or a
	// tool call, named as Envoy AI Gateway's OpenInference spans name it.
	if !f.firstChunk.IsZero() && f.streaming && !f.destreamed {
		span.Events = append(span.Events, SpanEvent{Name: spankey.EventFirstTokenStreamEvent, Time: f.firstChunk})
	}
	span.End = f.end
	ps.t.outbox.offer(span)
}

// drop abandons the span unended: it is never exported.
func (ps *pendingSpan) drop() {
	ps.t.release(&ps.f.request)
	ps.t.outbox.drop(dropQueueFull, 1)
}

// originalAttrs are the original proxy's span attributes.
func (ps *pendingSpan) originalAttrs(b *attrs, h *heuristics.Result, sc *confidence.Score) {
	f := &ps.f
	b.add(
		attribute.String(spankey.HttpRequestMethod, http.MethodPost),
		attribute.String(spankey.UrlPath, f.path),
		attribute.String(spankey.MlxModel, ident(f.model)),
		attribute.Bool(spankey.MlxStreaming, f.streaming),
		attribute.String(spankey.MlxKind, f.kind),
		attribute.Bool(spankey.MlxToolsProvided, f.toolsOffered),
		attribute.String(spankey.MlxOrigin, f.originLabel()),
	)
	if f.status != 0 {
		b.add(attribute.Int(spankey.HttpResponseStatusCode, f.status))
	}
	if f.hasTemp {
		b.add(attribute.Float64(spankey.MlxTemperature, f.temperature))
	}
	gen := f.end.Sub(f.start).Seconds()
	b.add(attribute.Float64(spankey.MlxGenSeconds, gen))
	if ttft, ok := f.ttft(); ok {
		b.add(attribute.Float64(spankey.MlxTtftSeconds, ttft))
	}
	if u := f.usage; u != nil {
		b.add(attribute.Int(spankey.MlxTokensPrompt, u.PromptTokens), attribute.Int(spankey.MlxTokensCompletion, u.CompletionTokens))
	}
	if f.out != nil {
		b.add(attribute.Int(spankey.MlxToolCalls, len(f.out.toolCalls)))
	}
	if h != nil {
		b.add(attribute.Float64(spankey.MlxHallucinationRisk, h.Risk), attribute.Bool(spankey.MlxHallucinationFlagged, h.Flagged))
	}
	if sc != nil && sc.OK {
		b.add(
			attribute.String(spankey.MlxLogprobsSource, f.source),
			attribute.Int(spankey.MlxScoredTokens, sc.Tokens),
			attribute.Float64(spankey.MlxPerplexity, round4(sc.Perplexity)),
			attribute.Float64(spankey.MlxConfidenceMean, round4(sc.ConfidenceMean)),
			attribute.Float64(spankey.MlxConfidenceMin, round4(sc.ConfidenceMin)),
			attribute.Float64(spankey.MlxLowConfidenceTokenRatio, round4(sc.LowConfidenceRatio)),
		)
		if sc.HasEntropy() {
			b.add(attribute.Float64(spankey.MlxTokenEntropy, round4(sc.EntropyMean)))
		}
	}
}

// originLabel is the request's origin; one refused before its caller was
// known is a user's, as its metrics count it.
func (f *spanFacts) originLabel() string {
	if f.origin == "" {
		return OriginUser
	}
	return f.origin
}

// ttft is the original's mlx.ttft_seconds: to the first streamed content,
// or the whole generation when there was none (non-streamed, destreamed);
// absent when the engine never answered.
func (f *spanFacts) ttft() (float64, bool) {
	switch {
	case !f.firstContent.IsZero():
		return f.firstContent.Sub(f.start).Seconds(), true
	case !f.headers.IsZero():
		return f.end.Sub(f.start).Seconds(), true
	}
	return 0, false
}

// genAIAttrs are the OTel GenAI semantic conventions' span attributes.
func (ps *pendingSpan) genAIAttrs(b *attrs) {
	f := &ps.f
	b.add(
		attribute.String(spankey.GenAiOperationName, operationName(f.route)),
		attribute.String(spankey.GenAiProviderName, Provider),
		attribute.String(spankey.GenAiRequestModel, ident(f.model)),
	)
	// "If and only if the request is streaming" (gen-ai-spans.md, note 8).
	if f.streaming {
		b.add(attribute.Bool(spankey.GenAiRequestStream, true))
	}
	b.add(ps.t.server...)
	rf := &f.request
	for _, p := range [...][2]string{{"temperature", spankey.GenAiRequestTemperature}, {"top_p", spankey.GenAiRequestTopP},
		{"frequency_penalty", spankey.GenAiRequestFrequencyPenalty}, {"presence_penalty", spankey.GenAiRequestPresencePenalty},
		{"top_k", spankey.GenAiRequestTopK}} {
		if v, ok := rf.number(p[0]); ok {
			b.add(attribute.Float64(p[1], v))
		}
	}
	// The conditionally required ones, when the request has them.
	if v, ok := rf.number("seed"); ok {
		b.add(attribute.Int64(spankey.GenAiRequestSeed, int64(v)))
	}
	if v, ok := rf.number("n"); ok && v != 1 {
		b.add(attribute.Int64(spankey.GenAiRequestChoiceCount, int64(v)))
	}
	if t := rf.outputType(); t != "" {
		b.add(attribute.String(spankey.GenAiOutputType, t))
	}
	if stop := rf.stopSequences(); len(stop) > 0 {
		for i := range stop {
			stop[i] = ident(stop[i])
		}
		b.add(attribute.StringSlice(spankey.GenAiRequestStopSequences, stop))
	}
	for _, k := range []string{"max_completion_tokens", "max_tokens"} {
		if v, ok := rf.number(k); ok {
			b.add(attribute.Int64(spankey.GenAiRequestMaxTokens, int64(v)))
			break
		}
	}
	if f.respID != "" {
		b.add(attribute.String(spankey.GenAiResponseId, ident(f.respID)))
	}
	if f.respModel != "" {
		b.add(attribute.String(spankey.GenAiResponseModel, ident(f.answerModel())))
	}
	if len(f.finishReasons) > 0 {
		b.add(attribute.StringSlice(spankey.GenAiResponseFinishReasons, f.finishReasons))
	}
	if !f.firstChunk.IsZero() && f.streaming && !f.destreamed {
		b.add(attribute.Float64(spankey.GenAiResponseTimeToFirstChunk, f.firstChunk.Sub(f.start).Seconds()))
	}
	if u := f.usage; u != nil {
		b.add(attribute.Int(spankey.GenAiUsageInputTokens, u.PromptTokens), attribute.Int(spankey.GenAiUsageOutputTokens, u.CompletionTokens))
		if u.HasCached {
			b.add(attribute.Int(spankey.GenAiUsageCacheReadInputTokens, u.CachedTokens))
		}
		if u.HasReasoning {
			b.add(attribute.Int(spankey.GenAiUsageReasoningOutputTokens, u.ReasoningTokens))
		}
	}
}

// Provider is gen_ai.provider.name and llm.provider of the proxy's spans
// (the original's llm.provider).
const Provider = "mlx"

// System is llm.system: the API the proxy speaks.
const System = "openai"

// answerModel is the model that answered: the answer's model, else (none,
// or mlx_lm's "default_model" for a request that names none: the model it
// serves is the configured one) the request's. llm.model_name and
// gen_ai.response.model say the same.
func (f *spanFacts) answerModel() string {
	if f.respModel == "" || f.respModel == defaultModelName {
		return f.model
	}
	return f.respModel
}

// errorType is the span's error.type and status message; "" when the
// request did not fail: the engine's own 4xx/5xx answers, a stream cut
// short, a client that went away, and the proxy's own refusals (413) and
// upstream failures (502/503/504) are errors.
func (f *spanFacts) errorType() (string, string) {
	errType := errorTypeOf(f.outcome, f.status)
	switch f.outcome {
	case OutcomeClientGone:
		return errType, "the client went away before the answer was complete"
	case OutcomeIncomplete:
		return errType, "the engine ended the answer before it was complete"
	case OutcomeUnavailable, OutcomeBadGateway, OutcomeTimeout, OutcomeTooLarge, OutcomeRefused:
		return errType, "the proxy answered " + strconv.Itoa(f.status) + " (" + f.outcome.String() + ")"
	}
	if errType != "" {
		msg := "the engine answered " + strconv.Itoa(f.status)
		if f.engineError != "" {
			msg += ": " + f.engineError
		}
		return errType, msg
	}
	return "", ""
}

// errorTypeOf is a request's error.type (spans and the GenAI metrics): what
// failed, or the engine's HTTP status; "" when it did not fail.
func errorTypeOf(outcome Outcome, status int) string {
	switch outcome {
	case OutcomeClientGone, OutcomeIncomplete, OutcomeUnavailable, OutcomeBadGateway, OutcomeTimeout, OutcomeTooLarge, OutcomeRefused:
		return outcome.String()
	}
	if status >= 400 {
		return strconv.Itoa(status)
	}
	return ""
}

// number reads a JSON number (nil or another type: false), as
// json.Unmarshal into a float64 reads it (FuzzNumberMatchesEncodingJSON),
// without its reflection: a span reads up to ten of them.
func number(raw json.RawMessage) (float64, bool) {
	lit := bytes.TrimFunc(raw, func(r rune) bool { return r < utf8.RuneSelf && jsonedit.IsSpace(byte(r)) })
	if !isJSONNumber(lit) {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(lit), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// isJSONNumber: b is a number as JSON spells it,
// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?.
func isJSONNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(b)
}

func round4(v float64) float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}
	return math.Round(v*1e4) / 1e4
}

// attrs collects a span's attributes, with a byte budget for content and
// room for a number of attributes; what does not fit is left out and
// truncated is set.
type attrs struct {
	kv        []attribute.KeyValue
	budget    int
	room      int
	truncated bool
}

// typicalSpanAttributes is room for a chat span's attributes (about 50 for
// a short conversation), so that collecting them rarely grows the slice:
// growing it was a tenth of the bytes the collector allocated under load.
const typicalSpanAttributes = 64

func (b *attrs) add(kv ...attribute.KeyValue) {
	for _, a := range kv {
		if len(b.kv) >= b.room {
			b.truncated = true
			return
		}
		b.kv = append(b.kv, a)
	}
}

// ident bounds a short string a client or the engine chose (a model name,
// a role, an id): past maxIdentBytes it is cut, outside the content budget.
func ident(s string) string { return cutAt(s, maxIdentBytes) }

// cutAt is s cut to at most n bytes, at a UTF-8 boundary.
func cutAt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n]
}

const maxIdentBytes = 256

// content spends the budget on s, cutting it (at a UTF-8 boundary) when
// the budget is short.
func (b *attrs) content(s string) string {
	if len(s) <= b.budget {
		b.budget -= len(s)
		return s
	}
	b.truncated = true
	s = cutAt(s, b.budget)
	b.budget = 0
	return s
}

func utf8Start(c byte) bool { return c&0xC0 != 0x80 }
