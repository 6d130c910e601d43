package span

import (
	"encoding/json"
	"math"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/confidence"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/heuristics"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/jsonedit"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/span/spankey"
)

// Build gives sp its attributes, status and events from f, and its end
// time; h and sc are the answer's scores (nil when it was not scored).
// It runs off the request path.
func Build(sp *Span, f *Facts, cfg *Config, h *heuristics.Result, sc *confidence.Score) {
	bd := &builder{f: f, cfg: cfg, span: sp}
	for _, o := range f.Outputs {
		if o.FinishReason != "" {
			bd.finishReasons = append(bd.finishReasons, Ident(o.FinishReason))
		}
	}
	if len(f.Outputs) > 0 {
		bd.out = &f.Outputs[0]
	}
	// The status and the figures first, the content last: the attribute
	// cap cuts only content. One slot stays for mlx.content_truncated.
	b := &attrs{kv: make([]attribute.KeyValue, 0, typicalSpanAttributes), budget: cfg.MaxContentBytes, room: MaxAttributes - 1}
	if f.ErrorType != "" {
		b.add(attribute.String(spankey.ErrorType, f.ErrorType))
		sp.Status, sp.StatusMessage = codes.Error, f.ErrorMessage
		// OpenInference records errors as an exception event as well;
		// its message is the engine's own when it sent one.
		excMsg := f.ErrorMessage
		if f.EngineError != "" {
			excMsg = f.EngineError
		}
		sp.Events = append(sp.Events, SpanEvent{Name: spankey.EventException, Time: f.End, Attributes: []attribute.KeyValue{
			attribute.String("exception.type", f.ErrorType), attribute.String("exception.message", excMsg)}})
	}
	bd.originalAttrs(b, h, sc)
	bd.genAIAttrs(b)
	bd.openInferenceAttrs(b, h, sc)
	if b.truncated || f.Request.cut {
		b.kv = append(b.kv, attribute.Bool(spankey.MlxContentTruncated, true))
	}
	sp.Attributes = b.kv
	// The event at the first streamed chunk with text, reasoning or a
	// tool call, named as Envoy AI Gateway's OpenInference spans name it.
	if !f.FirstChunk.IsZero() && f.Streaming && !f.Destreamed {
		sp.Events = append(sp.Events, SpanEvent{Name: spankey.EventFirstTokenStreamEvent, Time: f.FirstChunk})
	}
	sp.End = f.End
}

// builder is one span being built.
type builder struct {
	f    *Facts
	cfg  *Config
	span *Span
	// out is the first choice (nil without one); finishReasons are the
	// choices' finish reasons, by index.
	out           *Output
	finishReasons []string
}

// originalAttrs are the original proxy's span attributes.
func (bd *builder) originalAttrs(b *attrs, h *heuristics.Result, sc *confidence.Score) {
	f := bd.f
	b.add(
		attribute.String(spankey.HttpRequestMethod, http.MethodPost),
		attribute.String(spankey.UrlPath, f.Path),
		attribute.String(spankey.MlxModel, Ident(f.Model)),
		attribute.Bool(spankey.MlxStreaming, f.Streaming),
		attribute.String(spankey.MlxKind, f.Kind),
		attribute.Bool(spankey.MlxToolsProvided, f.ToolsOffered),
		attribute.String(spankey.MlxOrigin, f.Origin),
	)
	if f.Status != 0 {
		b.add(attribute.Int(spankey.HttpResponseStatusCode, f.Status))
	}
	if f.HasTemperature {
		b.add(attribute.Float64(spankey.MlxTemperature, f.Temperature))
	}
	gen := f.End.Sub(f.Start).Seconds()
	b.add(attribute.Float64(spankey.MlxGenSeconds, gen))
	if ttft, ok := f.ttft(); ok {
		b.add(attribute.Float64(spankey.MlxTtftSeconds, ttft))
	}
	if u := f.Usage; u != nil {
		b.add(attribute.Int(spankey.MlxTokensPrompt, u.PromptTokens), attribute.Int(spankey.MlxTokensCompletion, u.CompletionTokens))
	}
	if bd.out != nil {
		b.add(attribute.Int(spankey.MlxToolCalls, len(bd.out.ToolCalls)))
	}
	if h != nil {
		b.add(attribute.Float64(spankey.MlxHallucinationRisk, h.Risk), attribute.Bool(spankey.MlxHallucinationFlagged, h.Flagged))
	}
	if sc != nil && sc.OK {
		b.add(
			attribute.String(spankey.MlxLogprobsSource, f.LogprobsSource),
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

// ttft is the original's mlx.ttft_seconds: to the first streamed content,
// or the whole generation when there was none (non-streamed, destreamed);
// absent when the engine never answered.
func (f *Facts) ttft() (float64, bool) {
	switch {
	case !f.FirstContent.IsZero():
		return f.FirstContent.Sub(f.Start).Seconds(), true
	case !f.Headers.IsZero():
		return f.End.Sub(f.Start).Seconds(), true
	}
	return 0, false
}

// genAIAttrs are the OTel GenAI semantic conventions' span attributes.
func (bd *builder) genAIAttrs(b *attrs) {
	f := bd.f
	b.add(
		attribute.String(spankey.GenAiOperationName, f.Operation),
		attribute.String(spankey.GenAiProviderName, Provider),
		attribute.String(spankey.GenAiRequestModel, Ident(f.Model)),
	)
	// "If and only if the request is streaming" (gen-ai-spans.md, note 8).
	if f.Streaming {
		b.add(attribute.Bool(spankey.GenAiRequestStream, true))
	}
	if f.ServerAddress != "" {
		b.add(attribute.String(spankey.ServerAddress, f.ServerAddress), attribute.Int(spankey.ServerPort, f.ServerPort))
	} else {
		b.add(bd.cfg.Server...)
	}
	if f.Upstream != "" {
		b.add(attribute.String(spankey.MlxUpstream, f.Upstream), attribute.String(spankey.MlxRoute, f.Chosen))
		if f.UpstreamNode != "" {
			b.add(attribute.String(spankey.MlxNode, f.UpstreamNode))
		}
	}
	rf := &f.Request
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
			stop[i] = Ident(stop[i])
		}
		b.add(attribute.StringSlice(spankey.GenAiRequestStopSequences, stop))
	}
	for _, k := range []string{"max_completion_tokens", "max_tokens"} {
		if v, ok := rf.number(k); ok {
			b.add(attribute.Int64(spankey.GenAiRequestMaxTokens, int64(v)))
			break
		}
	}
	if f.ResponseID != "" {
		b.add(attribute.String(spankey.GenAiResponseId, Ident(f.ResponseID)))
	}
	if f.ResponseModel != "" {
		b.add(attribute.String(spankey.GenAiResponseModel, Ident(f.AnswerModel)))
	}
	if len(bd.finishReasons) > 0 {
		b.add(attribute.StringSlice(spankey.GenAiResponseFinishReasons, bd.finishReasons))
	}
	if !f.FirstChunk.IsZero() && f.Streaming && !f.Destreamed {
		b.add(attribute.Float64(spankey.GenAiResponseTimeToFirstChunk, f.FirstChunk.Sub(f.Start).Seconds()))
	}
	if u := f.Usage; u != nil {
		b.add(attribute.Int(spankey.GenAiUsageInputTokens, u.PromptTokens), attribute.Int(spankey.GenAiUsageOutputTokens, u.CompletionTokens))
		if u.HasCached {
			b.add(attribute.Int(spankey.GenAiUsageCacheReadInputTokens, u.CachedTokens))
		}
		if u.HasReasoning {
			b.add(attribute.Int(spankey.GenAiUsageReasoningOutputTokens, u.ReasoningTokens))
		}
	}
}

// number reads a JSON number (nil or another type: false), as
// json.Unmarshal into a float64 reads it (FuzzNumberMatchesEncodingJSON),
// without its reflection: a span reads up to ten of them.
func number(raw json.RawMessage) (float64, bool) { return jsonedit.Float(raw) }

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
// a role, an id): past MaxIdentBytes it is cut, outside the content budget.
func Ident(s string) string { return CutAt(s, MaxIdentBytes) }

// cutAt is s cut to at most n bytes, at a UTF-8 boundary.
func CutAt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n]
}

const MaxIdentBytes = 256

// content spends the budget on s, cutting it (at a UTF-8 boundary) when
// the budget is short.
func (b *attrs) content(s string) string {
	if len(s) <= b.budget {
		b.budget -= len(s)
		return s
	}
	b.truncated = true
	s = CutAt(s, b.budget)
	b.budget = 0
	return s
}

func utf8Start(c byte) bool { return c&0xC0 != 0x80 }
