package proxy

import (
	"context"
	"encoding/binary"
	"math/rand/v2"

	"go.opentelemetry.io/otel/trace"
)

// A request's span ids are chosen when it arrives, not when its span is
// made (as it ends): the client gets them in TraceIDHeader and
// SpanIDHeader with the answer's headers, so that it can give feedback on
// the answer (feedback.go) or find it in Jaeger and Opik. The tracer's id generator
// takes the ids the request carries in its context.

// TraceIDHeader is the answer's header with the request's trace id (32
// hex digits), when the request is traced.
const TraceIDHeader = "X-Mlx-Trace-Id"

// SpanIDHeader is the answer's header with the request's span id (16 hex
// digits), beside TraceIDHeader. The trace id is the client's own when it
// sent a traceparent, so the turns of an agent's run share it: the span
// id tells them apart.
const SpanIDHeader = "X-Mlx-Span-Id"

// requestIDs are a request's trace and span ids, chosen on arrival.
type requestIDs struct {
	trace trace.TraceID
	span  trace.SpanID
}

type requestIDsKey struct{}

// assignIDs gives a traced request its ids: the client's trace id when it
// continues a trace, else a new one. None (zero) when the client's
// traceparent says not sampled: no span will be made.
func assignIDs(parent context.Context) (context.Context, requestIDs) {
	psc := trace.SpanContextFromContext(parent)
	if psc.IsValid() && !psc.IsSampled() {
		return parent, requestIDs{}
	}
	ids := requestIDs{trace: psc.TraceID(), span: newSpanID()}
	if !psc.IsValid() {
		ids.trace = newTraceID()
	}
	return context.WithValue(parent, requestIDsKey{}, ids), ids
}

// presetIDs gives a span its ids (newSpanContext): the ids assignIDs put
// in the context, else new ones (a span started without them).
type presetIDs struct{}

func (presetIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if ids, ok := ctx.Value(requestIDsKey{}).(requestIDs); ok {
		return ids.trace, ids.span
	}
	return newTraceID(), newSpanID()
}

func (presetIDs) NewSpanID(ctx context.Context, traceID trace.TraceID) trace.SpanID {
	if ids, ok := ctx.Value(requestIDsKey{}).(requestIDs); ok && ids.trace == traceID {
		return ids.span
	}
	return newSpanID()
}

// newTraceID and newSpanID are random and never zero, as the SDK's own
// generator makes them (math/rand: ids are not secrets).
func newTraceID() trace.TraceID {
	var t trace.TraceID
	for !t.IsValid() {
		binary.BigEndian.PutUint64(t[:8], rand.Uint64())
		binary.BigEndian.PutUint64(t[8:], rand.Uint64())
	}
	return t
}

func newSpanID() trace.SpanID {
	var s trace.SpanID
	for !s.IsValid() {
		binary.BigEndian.PutUint64(s[:], rand.Uint64())
	}
	return s
}
