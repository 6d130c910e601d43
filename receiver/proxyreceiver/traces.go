package proxyreceiver

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mlx-otelcol/mlx-otelcol/proxy"
)

// spansToTraces turns the proxy's ended spans into pdata: one
// ResourceSpans and one ScopeSpans per source (a proxy has one), as an
// OTLP exporter would write them.
func spansToTraces(spans []*proxy.Span) ptrace.Traces {
	td := ptrace.NewTraces()
	scopes := map[*proxy.SpanSource]ptrace.SpanSlice{}
	for _, s := range spans {
		ss, ok := scopes[s.Source]
		if !ok {
			rs := td.ResourceSpans().AppendEmpty()
			sc := rs.ScopeSpans().AppendEmpty()
			if s.Source != nil {
				putAttributes(rs.Resource().Attributes(), s.Source.Resource)
				sc.Scope().SetName(s.Source.Scope)
			}
			ss = sc.Spans()
			ss.EnsureCapacity(len(spans))
			scopes[s.Source] = ss
		}
		putSpan(ss.AppendEmpty(), s)
	}
	return td
}

func putSpan(out ptrace.Span, s *proxy.Span) {
	sc := s.Context
	out.SetTraceID(pcommon.TraceID(sc.TraceID()))
	out.SetSpanID(pcommon.SpanID(sc.SpanID()))
	if ts := sc.TraceState(); ts.Len() > 0 {
		out.TraceState().FromRaw(ts.String())
	}
	if s.Parent.IsValid() {
		out.SetParentSpanID(pcommon.SpanID(s.Parent.SpanID()))
	}
	out.SetFlags(uint32(sc.TraceFlags()))
	out.SetName(s.Name)
	out.SetKind(spanKind(s.Kind))
	out.SetStartTimestamp(pcommon.NewTimestampFromTime(s.Start))
	out.SetEndTimestamp(pcommon.NewTimestampFromTime(s.End))
	putAttributes(out.Attributes(), s.Attributes)
	for _, e := range s.Events {
		ev := out.Events().AppendEmpty()
		ev.SetName(e.Name)
		ev.SetTimestamp(pcommon.NewTimestampFromTime(e.Time))
		putAttributes(ev.Attributes(), e.Attributes)
	}
	switch s.Status {
	case codes.Error:
		out.Status().SetCode(ptrace.StatusCodeError)
		out.Status().SetMessage(s.StatusMessage)
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
