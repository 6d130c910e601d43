package opiktest

import (
	"encoding/json"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mlx-otelcol/mlx-otelcol/internal/opikapi"
	"github.com/mlx-otelcol/mlx-otelcol/internal/opikid"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/span/spankey"
)

// ProxyTrace is one proxied chat completion, for tests of what reads
// traces back: as the opik exporter writes it through REST (Trace), or as
// another client's OpenInference instrumentation sends it by OTLP (OTLP).
type ProxyTrace struct {
	TraceID          pcommon.TraceID
	SpanID           pcommon.SpanID
	Start            time.Time
	Model            string
	Question, Answer string
}

// OpikID is the trace's Opik id, as the exporter mints it.
func (p ProxyTrace) OpikID() string { return opikid.Trace(p.TraceID, p.SpanID, p.Start) }

// Trace is the trace as the opik exporter creates it
// (exporter/opikexporter/documentation.md): input the request, output
// the assistant message, the OTel ids in metadata.
func (p ProxyTrace) Trace(project string) Trace {
	return Trace{ID: p.OpikID(), ProjectName: project, Name: "chat " + p.Model, StartTime: p.Start.UTC(),
		EndTime: p.Start.Add(time.Second).UTC(),
		Input:   map[string]any{"model": p.Model, "messages": []any{map[string]any{"role": "user", "content": p.Question}}},
		Output:  map[string]any{"role": "assistant", "content": p.Answer},
		Metadata: map[string]any{"node": "mac", "otel_trace_id": p.TraceID.String(), "otel_span_id": p.SpanID.String(),
			"model": p.Model},
		Tags: []string{p.Model, "mac", "chat"}, OTelTraceID: p.TraceID.String()}
}

// Write is Trace as the create body the exporter sends (POST
// /v1/private/traces/batch): with project_name, which reads leave out.
func (p ProxyTrace) Write(project string) opikapi.NewTrace {
	t := p.Trace(project)
	return opikapi.NewTrace{ID: t.ID, ProjectName: project, Name: t.Name, StartTime: t.StartTime, EndTime: t.EndTime,
		Input: t.Input, Output: t.Output, Metadata: t.Metadata.(map[string]any), Tags: t.Tags}
}

// OTLP is the request as another client's OpenInference instrumentation
// sends it to Opik's OTLP endpoint: a root span with input.value,
// output.value (the OpenAI completion), the flattened llm.* messages and
// an OpenInference metadata JSON with its ids. Opik makes a trace of it
// with an id of its own (Store, rule 4), which OTLPOpikID computes.
func (p ProxyTrace) OTLP() ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(spankey.ServiceName, "some-agent")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("openinference.instrumentation.openai")
	sp := ss.Spans().AppendEmpty()
	sp.SetName("ChatCompletion")
	sp.SetTraceID(p.TraceID)
	sp.SetSpanID(p.SpanID)
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(p.Start))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(p.Start.Add(time.Second)))
	at := sp.Attributes()
	at.PutStr(spankey.OpeninferenceSpanKind, "LLM")
	at.PutStr(spankey.LlmModelName, p.Model)
	at.PutStr(spankey.InputValue, `{"model":"`+p.Model+`","messages":[{"role":"user","content":`+quote(p.Question)+`}]}`)
	at.PutStr(spankey.InputMimeType, "application/json")
	at.PutStr(spankey.LlmInputMessagesMessageRole(0), "user")
	at.PutStr(spankey.LlmInputMessagesMessageContent(0), p.Question)
	at.PutStr(spankey.OutputValue, `{"id":"chatcmpl-1","choices":[{"index":0,"message":{"role":"assistant","content":`+quote(p.Answer)+`}}]}`)
	at.PutStr(spankey.LlmOutputMessagesMessageRole(0), "assistant")
	at.PutStr(spankey.LlmOutputMessagesMessageContent(0), p.Answer)
	at.PutStr(spankey.Metadata, `{"otel_trace_id":"`+p.TraceID.String()+`","otel_span_id":"`+p.SpanID.String()+`"}`)
	return td
}

// OTLPOpikID is the id Opik gives the trace OTLP sends (rule 4).
func (p ProxyTrace) OTLPOpikID() string {
	return ConvertOtelIDToUUIDv7(p.TraceID[:], p.Start.UnixMilli())
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
