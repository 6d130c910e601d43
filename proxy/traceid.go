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
// the answer (feedback.go) or find it in Jaeger and Opik. The span takes
// the ids the request carries in its context (idsFor).

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

// idsFor are the ids of the span of a request whose trace is traceID
// (zero for a new trace): those assignIDs put in ctx when they are of that
// trace, else new ones (a span started without them).
func idsFor(ctx context.Context, traceID trace.TraceID) (trace.TraceID, trace.SpanID) {
	ids, ok := ctx.Value(requestIDsKey{}).(requestIDs)
	switch {
	case ok && (!traceID.IsValid() || ids.trace == traceID):
		return ids.trace, ids.span
	case traceID.IsValid():
		return traceID, newSpanID()
	}
	return newTraceID(), newSpanID()
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
