package proxyreceiver

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// spansToTraces turns the SDK's ended spans into pdata, one ResourceSpans
// per resource and one ScopeSpans per scope, as an OTLP exporter would.
// Written here because the SDK's own converter (otlptrace's tracetransform)
// is internal and targets the protobuf types, not pdata.
func spansToTraces(spans []sdktrace.ReadOnlySpan) ptrace.Traces {
	td := ptrace.NewTraces()
	type scopeKey struct {
		res   *resource.Resource
		scope instrumentation.Scope
	}
	resources := map[*resource.Resource]ptrace.ResourceSpans{}
	scopes := map[scopeKey]ptrace.SpanSlice{}
	for _, s := range spans {
		res := s.Resource()
		rs, ok := resources[res]
		if !ok {
			rs = td.ResourceSpans().AppendEmpty()
			if res != nil {
				rs.SetSchemaUrl(res.SchemaURL())
				putAttributes(rs.Resource().Attributes(), res.Attributes())
			}
			resources[res] = rs
		}
		key := scopeKey{res, s.InstrumentationScope()}
		ss, ok := scopes[key]
		if !ok {
			sc := rs.ScopeSpans().AppendEmpty()
			sc.Scope().SetName(key.scope.Name)
			sc.Scope().SetVersion(key.scope.Version)
			sc.SetSchemaUrl(key.scope.SchemaURL)
			ss = sc.Spans()
			scopes[key] = ss
		}
		putSpan(ss.AppendEmpty(), s)
	}
	return td
}

func putSpan(out ptrace.Span, s sdktrace.ReadOnlySpan) {
	sc := s.SpanContext()
	out.SetTraceID(pcommon.TraceID(sc.TraceID()))
	out.SetSpanID(pcommon.SpanID(sc.SpanID()))
	out.TraceState().FromRaw(sc.TraceState().String())
	if p := s.Parent(); p.IsValid() {
		out.SetParentSpanID(pcommon.SpanID(p.SpanID()))
	}
	out.SetFlags(uint32(sc.TraceFlags()))
	out.SetName(s.Name())
	out.SetKind(spanKind(s.SpanKind()))
	out.SetStartTimestamp(pcommon.NewTimestampFromTime(s.StartTime()))
	out.SetEndTimestamp(pcommon.NewTimestampFromTime(s.EndTime()))
	putAttributes(out.Attributes(), s.Attributes())
	out.SetDroppedAttributesCount(uint32(max(s.DroppedAttributes(), 0)))
	for _, e := range s.Events() {
		ev := out.Events().AppendEmpty()
		ev.SetName(e.Name)
		ev.SetTimestamp(pcommon.NewTimestampFromTime(e.Time))
		putAttributes(ev.Attributes(), e.Attributes)
		ev.SetDroppedAttributesCount(uint32(max(e.DroppedAttributeCount, 0)))
	}
	out.SetDroppedEventsCount(uint32(max(s.DroppedEvents(), 0)))
	for _, l := range s.Links() {
		ln := out.Links().AppendEmpty()
		ln.SetTraceID(pcommon.TraceID(l.SpanContext.TraceID()))
		ln.SetSpanID(pcommon.SpanID(l.SpanContext.SpanID()))
		putAttributes(ln.Attributes(), l.Attributes)
	}
	switch st := s.Status(); st.Code {
	case codes.Error:
		out.Status().SetCode(ptrace.StatusCodeError)
		out.Status().SetMessage(st.Description)
	case codes.Ok:
		out.Status().SetCode(ptrace.StatusCodeOk)
	}
}

func spanKind(k trace.SpanKind) ptrace.SpanKind {
	switch k {
	case trace.SpanKindServer:
		return ptrace.SpanKindServer
	case trace.SpanKindClient:
		return ptrace.SpanKindClient
	case trace.SpanKindProducer:
		return ptrace.SpanKindProducer
	case trace.SpanKindConsumer:
		return ptrace.SpanKindConsumer
	case trace.SpanKindInternal:
		return ptrace.SpanKindInternal
	}
	return ptrace.SpanKindUnspecified
}

// putAttributes copies OTel API attributes into a pdata map.
func putAttributes(m pcommon.Map, kvs []attribute.KeyValue) {
	m.EnsureCapacity(m.Len() + len(kvs))
	for _, kv := range kvs {
		k := string(kv.Key)
		switch kv.Value.Type() {
		case attribute.BOOL:
			m.PutBool(k, kv.Value.AsBool())
		case attribute.INT64:
			m.PutInt(k, kv.Value.AsInt64())
		case attribute.FLOAT64:
			m.PutDouble(k, kv.Value.AsFloat64())
		case attribute.STRING:
			m.PutStr(k, kv.Value.AsString())
		case attribute.BOOLSLICE:
			putSlice(m, k, kv.Value.AsBoolSlice(), pcommon.Value.SetBool)
		case attribute.INT64SLICE:
			putSlice(m, k, kv.Value.AsInt64Slice(), pcommon.Value.SetInt)
		case attribute.FLOAT64SLICE:
			putSlice(m, k, kv.Value.AsFloat64Slice(), pcommon.Value.SetDouble)
		case attribute.STRINGSLICE:
			putSlice(m, k, kv.Value.AsStringSlice(), pcommon.Value.SetStr)
		default:
			m.PutStr(k, kv.Value.Emit())
		}
	}
}

// putSlice puts vs under k as a slice, each element set by set.
func putSlice[T any](m pcommon.Map, k string, vs []T, set func(pcommon.Value, T)) {
	s := m.PutEmptySlice(k)
	s.EnsureCapacity(len(vs))
	for _, v := range vs {
		set(s.AppendEmpty(), v)
	}
}
