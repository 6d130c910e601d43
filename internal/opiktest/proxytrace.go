package opiktest

import (
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mlx-otelcol/mlx-otelcol/internal/opikid"
)

// ProxyTrace is a chat completion span as the proxy makes it and the opik
// exporter sends it (receiver/proxyreceiver/documentation.md), for tests
// of what reads traces back.
type ProxyTrace struct {
	TraceID          pcommon.TraceID
	SpanID           pcommon.SpanID
	Start            time.Time
	Model            string
	Question, Answer string
}

// OpikID is the trace's Opik id, as the exporter stamps it.
func (p ProxyTrace) OpikID() string { return opikid.TraceID(p.TraceID, p.Start) }

// Traces is the span, with the proxy's resource and the exporter's
// opik.trace_id.
func (p ProxyTrace) Traces() ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "mlx-metrics-proxy")
	sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetName("mlx.chat.completions")
	sp.SetTraceID(p.TraceID)
	sp.SetSpanID(p.SpanID)
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(p.Start))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(p.Start.Add(time.Second)))
	at := sp.Attributes()
	at.PutStr("input.value", fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":%q}]}`, p.Model, p.Question))
	at.PutStr("output.value", fmt.Sprintf(`{"role":"assistant","content":%q}`, p.Answer))
	at.PutStr("metadata", fmt.Sprintf(`{"node":"mac","otel_trace_id":"%s","otel_span_id":"%s"}`, p.TraceID, p.SpanID))
	at.PutStr("opik.trace_id", p.OpikID())
	return td
}

// Store keeps td's spans as if they had been sent to project by OTLP.
func (s *Server) Store(project string, td ptrace.Traces) { s.store(project, td) }
