package proxy

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Span is one of the proxy's request spans, ended: plain data, which the
// collector side (receiver/proxyreceiver) turns into pdata.
//
// The proxy writes its spans itself rather than through the OTel SDK: a
// span is made whole at once, when its request has been scored, so the
// SDK's locking, attribute normalising and de-duplicating at End (our
// keys are unique: every traced test checks it, tracedRig), its snapshot copy and
// the ReadOnlySpan interface were a third of a span's cost and nothing
// else. What the SDK decided is kept, rule by rule: a client's traceparent
// continues its trace and its sampled flag is honoured (the ParentBased
// AlwaysSample sampler), the ids are those chosen on arrival (traceid.go),
// and the attributes are bounded (maxSpanAttributes).
type Span struct {
	// Context is the span's own: trace and span id, sampled flag, and the
	// client's tracestate.
	Context trace.SpanContext
	// Parent is the client's span when it sent a traceparent (remote);
	// invalid for a root span.
	Parent     trace.SpanContext
	Name       string
	Kind       trace.SpanKind
	Start, End time.Time
	Attributes []attribute.KeyValue
	Events     []SpanEvent
	Status     codes.Code
	// StatusMessage goes with an Error status.
	StatusMessage string
	// Source is the resource and scope every span of this proxy shares.
	Source *SpanSource
}

// SpanEvent is an event on a span.
type SpanEvent struct {
	Name       string
	Time       time.Time
	Attributes []attribute.KeyValue
}

// SpanSource is the resource and instrumentation scope of the proxy's
// spans.
type SpanSource struct {
	Resource []attribute.KeyValue
	Scope    string // TracerName
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
