package span

import (
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
// and the attributes are bounded (MaxAttributes).
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
