package proxy

import (
	"context"
	"sort"
	"strconv"

	"go.opentelemetry.io/otel/trace"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/confidence"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/heuristics"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/span"
)

// The proxy's side of its spans: the one place a Record becomes the span's
// input (factsOf), and the pending span until the scorer or the tracer's
// worker builds it (proxy/span, off the request path).

// The span's plain data, which the collector side (receiver/proxyreceiver)
// turns into pdata.
type (
	Span       = span.Span
	SpanEvent  = span.SpanEvent
	SpanSource = span.SpanSource
	HideConfig = span.Hide
)

// Provider is gen_ai.provider.name and llm.provider (span.Provider).
const Provider = span.Provider

// pendingSpan is a started span and what its attributes are made of.
type pendingSpan struct {
	t    *tracer
	span *Span // its context and start; the rest is filled by finish
	f    span.Facts
	held int64 // request bytes counted against maxHeldRequestBytes
}

// start begins the span of a request that has ended: on the request's
// goroutine, so the access log knows its IDs; the rest is done by finish.
func (t *tracer) start(rec *Record) *pendingSpan {
	sc, psc, ok := newSpanContext(rec.parent)
	if !ok {
		return nil // the client's traceparent said not sampled
	}
	f := factsOf(rec)
	sp := &Span{Context: sc, Parent: psc, Name: span.Name(f.Operation, rec.Model), Kind: trace.SpanKindServer, Start: rec.Start, Source: t.source}
	ps := &pendingSpan{t: t, span: sp, f: f}
	ps.f.Request, ps.held = t.keep(rec.request)
	return ps
}

// factsOf is what the span needs of a record: its facts, and what is
// derived from them once the request has ended.
func factsOf(rec *Record) span.Facts {
	f := rec.Facts
	f.AnswerModel = answerModelOf(rec)
	f.ErrorType, f.ErrorMessage = spanErrorOf(rec)
	chs := append([]*Choice(nil), rec.Choices...)
	sort.Slice(chs, func(i, j int) bool { return chs[i].Index < chs[j].Index })
	for _, c := range chs {
		f.Outputs = append(f.Outputs, span.Output{Text: c.Text.String(), Reasoning: c.Reasoning.String(), FinishReason: c.FinishReason,
			ToolCalls: c.ToolCalls, Truncated: c.TextTruncated})
	}
	return f
}

// answerModelOf is the model that answered: the answer's model, else
// (none, or mlx_lm's "default_model" for a request that names none: the
// model it serves is the configured one) the request's. llm.model_name and
// gen_ai.response.model say the same.
func answerModelOf(rec *Record) string {
	if rec.ResponseModel == "" || rec.ResponseModel == defaultModelName {
		return rec.Model
	}
	return rec.ResponseModel
}

// spanErrorOf is the span's error.type and status message; "" when the
// request did not fail: the engine's own 4xx/5xx answers, a stream cut
// short, a client that went away, and the proxy's own refusals (413) and
// upstream failures (502/503/504) are errors.
func spanErrorOf(rec *Record) (string, string) {
	errType := errorTypeOf(rec.Outcome, rec.Status)
	switch rec.Outcome {
	case OutcomeClientGone:
		return errType, "the client went away before the answer was complete"
	case OutcomeIncomplete:
		return errType, "the engine ended the answer before it was complete"
	case OutcomeUnavailable, OutcomeBadGateway, OutcomeTimeout, OutcomeTooLarge, OutcomeRefused:
		return errType, "the proxy answered " + strconv.Itoa(rec.Status) + " (" + rec.Outcome.String() + ")"
	}
	if errType != "" {
		msg := "the engine answered " + strconv.Itoa(rec.Status)
		if rec.EngineError != "" {
			msg += ": " + rec.EngineError
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

// finish gives the span its attributes and ends it with the request's end
// time. h and sc are the answer's scores (nil when it was not scored).
func (ps *pendingSpan) finish(h *heuristics.Result, sc *confidence.Score) {
	defer ps.release()
	span.Build(ps.span, &ps.f, &ps.t.spanCfg, h, sc)
	ps.t.outbox.offer(ps.span)
}

// drop abandons the span unended: it is never exported.
func (ps *pendingSpan) drop() {
	ps.release()
	ps.t.outbox.drop(dropQueueFull, 1)
}

// maxHeldRequestBytes bounds the request bytes all pending spans keep
// together; a span that would pass it keeps no request content (and says
// so with mlx.content_truncated), so that no client can make the spans
// waiting in the queues hold its bodies.
const maxHeldRequestBytes = 64 << 20

// keep picks what the span needs from a request's members, and holds the
// bytes against the tracer's bound. It runs on the request path: it only
// measures and picks; with content it copies nothing.
func (t *tracer) keep(req requestBody) (span.Request, int64) {
	rf := span.NewRequest(req.raw, req.fields, t.cfg.CaptureContent)
	size := int64(rf.Size())
	if t.held.Add(size) > maxHeldRequestBytes {
		t.held.Add(-size)
		return span.NumbersOnly(req.fields, t.cfg.CaptureContent), 0
	}
	return rf, size
}

// release gives the bytes the span kept back to the bound.
func (ps *pendingSpan) release() {
	if ps.held != 0 {
		ps.t.held.Add(-ps.held)
		ps.held = 0
	}
}

// newSpanContext is the context of a request's span, as the SDK's
// ParentBased(AlwaysSample) sampler and the ids chosen on arrival (idsFor) made
// it: a child of the client's span when the request came with a valid
// traceparent, else a root; ok is false when the client said not sampled
// (no span is made).
func newSpanContext(parent context.Context) (sc, psc trace.SpanContext, ok bool) {
	if parent == nil {
		parent = context.Background()
	}
	psc = trace.SpanContextFromContext(parent)
	if psc.IsValid() && !psc.IsSampled() {
		return trace.SpanContext{}, psc, false
	}
	cfg := trace.SpanContextConfig{TraceFlags: psc.TraceFlags() | trace.FlagsSampled, TraceState: psc.TraceState()}
	var traceID trace.TraceID // a new trace, unless the client continues one
	if psc.IsValid() {
		traceID = psc.TraceID()
	}
	cfg.TraceID, cfg.SpanID = idsFor(parent, traceID)
	return trace.NewSpanContext(cfg), psc, true
}
