package opikexporter

import (
	"encoding/json"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mlx-otelcol/mlx-otelcol/internal/opikapi"
	"github.com/mlx-otelcol/mlx-otelcol/internal/opikid"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/span/spankey"
)

// notMetadata are the span's keys that are content or usage, and so are
// not repeated in the trace's metadata: the request and the answer are the
// trace's input and output, the usage is the span's.
var notMetadata = []string{"input.", "output.", "llm.input_messages.", "llm.output_messages.", "llm.prompts",
	"llm.tools.", "llm.choices.", "llm.invocation_parameters", "llm.token_count.", "gen_ai.usage.",
	"gen_ai.input.", "gen_ai.output.", "metadata"}

// request is one proxied request as Opik is to show it: its trace, its
// LLM span and its scores, under ids minted from the span's own.
type request struct {
	trace  opikapi.NewTrace
	span   opikapi.NewSpan
	scores []feedbackScore
	size   int // about what its trace and span weigh as JSON
}

// isProxySpan tells the proxy's spans (they carry mlx.model) from the
// spans of other clients that share the pipeline.
func isProxySpan(s ptrace.Span) bool {
	_, ok := s.Attributes().Get(spankey.MlxModel)
	return ok
}

// requestOf maps one proxy span to Opik (exporter/opikexporter/
// documentation.md, "What Opik shows").
func requestOf(s ptrace.Span, res pcommon.Map, project, environment string, scores bool) request {
	at := s.Attributes()
	str := func(k string) string {
		if v, ok := at.Get(k); ok {
			return v.AsString()
		}
		return ""
	}
	start, end := s.StartTimestamp().AsTime().UTC(), s.EndTimestamp().AsTime().UTC()
	if end.Before(start) {
		end = start
	}
	model := str(spankey.LlmModelName)
	if model == "" {
		model = str(spankey.MlxModel)
	}
	node := ""
	if v, ok := res.Get(spankey.MlxNodeName); ok {
		node = v.AsString()
	}
	op := str(spankey.GenAiOperationName)
	if op == "" {
		op = "chat"
	}

	t := opikapi.NewTrace{
		ID:          opikid.Trace(s.TraceID(), s.SpanID(), start),
		ProjectName: project,
		Name:        op + " " + model,
		StartTime:   start,
		EndTime:     end,
		Input:       jsonValue(str(spankey.InputValue)),
		Output:      jsonValue(str(spankey.OutputValue)),
		Metadata:    metadataOf(s, model, node),
		Tags:        nonEmpty(model, node, str(spankey.MlxKind)),
		ErrorInfo:   errorInfoOf(s),
		ThreadID:    threadOf(str(spankey.SessionId), str(spankey.InputValue)),
		TTFT:        ttftOf(at),
		Environment: environment,
	}
	// No total_estimated_cost: Opik prices a span from its model and
	// provider when it has a price for them, and has none for a local
	// model; 0 would claim a cost nobody measured.
	sp := opikapi.NewSpan{NewTrace: t, TraceID: t.ID, Type: "llm", Model: model, Provider: str(spankey.LlmProvider), Usage: usageOf(at)}
	sp.ID = opikid.Span(s.TraceID(), s.SpanID(), start)
	sp.ThreadID = "" // a span has none
	// The content twice (trace and span), and the rest.
	r := request{trace: t, span: sp, size: 2*(len(str(spankey.InputValue))+len(str(spankey.OutputValue))) + 4<<10}
	if scores {
		r.scores = scoresOf(s, t.ID, project)
	}
	return r
}

// ttftOf is Opik's ttft in milliseconds: to the first streamed chunk with
// a token (gen_ai.response.time_to_first_chunk), else, for a request that
// did not fail, the original's mlx.ttft_seconds (the first content, or the
// whole answer for one that was not streamed: its first token reached the
// client with the rest); nil when no token came.
func ttftOf(at pcommon.Map) *float64 {
	keys := []string{spankey.GenAiResponseTimeToFirstChunk}
	if _, failed := at.Get(spankey.ErrorType); !failed {
		keys = append(keys, spankey.MlxTtftSeconds)
	}
	for _, k := range keys {
		if v, ok := at.Get(k); ok && v.Type() == pcommon.ValueTypeDouble {
			ms := v.Double() * 1000
			return &ms
		}
	}
	return nil
}

// jsonValue is a JSON attribute as the JSON it holds; text that is not
// JSON is kept as {"text": ...}, so the pane still shows it. Absent
// (content not captured) is nil.
func jsonValue(s string) any {
	if s == "" {
		return nil
	}
	var v any
	if json.Unmarshal([]byte(s), &v) == nil {
		if _, isObject := v.(map[string]any); isObject {
			return v
		}
	}
	return map[string]any{"text": s}
}

// metadataOf is the trace's metadata: the proxy's figures (mlx.*), the
// HTTP facts and the GenAI request/response keys under their own keys,
// the members of the OpenInference metadata JSON (the original's: node,
// timings, confidence), and the OTel ids, model and node, by which a
// trace in Opik is found in Jaeger and back.
func metadataOf(s ptrace.Span, model, node string) map[string]any {
	m := map[string]any{}
	if v, ok := s.Attributes().Get(spankey.Metadata); ok {
		var inner map[string]any
		if json.Unmarshal([]byte(v.Str()), &inner) == nil {
			for k, x := range inner {
				m[k] = x
			}
		}
	}
	s.Attributes().Range(func(k string, v pcommon.Value) bool {
		for _, p := range notMetadata {
			if strings.HasPrefix(k, p) {
				return true
			}
		}
		m[k] = v.AsRaw()
		return true
	})
	m["otel_trace_id"] = s.TraceID().String()
	m["otel_span_id"] = s.SpanID().String()
	if !s.ParentSpanID().IsEmpty() {
		m["otel_parent_span_id"] = s.ParentSpanID().String()
	}
	m["model"] = model
	if node != "" {
		m["node"] = node
	}
	return m
}

// usageOf is the span's usage, once: OpenAI's names, from the
// OpenInference counts (the GenAI ones are the same numbers).
func usageOf(at pcommon.Map) map[string]int64 {
	u := map[string]int64{}
	for k, name := range map[string]string{spankey.LlmTokenCountPrompt: "prompt_tokens", spankey.LlmTokenCountCompletion: "completion_tokens",
		spankey.LlmTokenCountTotal: "total_tokens", spankey.LlmTokenCountPromptDetailsCacheRead: "prompt_tokens_details.cached_tokens",
		spankey.LlmTokenCountCompletionDetailsReasoning: "completion_tokens_details.reasoning_tokens"} {
		if v, ok := at.Get(k); ok && v.Type() == pcommon.ValueTypeInt {
			u[name] = v.Int()
		}
	}
	if len(u) == 0 {
		return nil
	}
	return u
}

// errorInfoOf is Opik's error_info for a failed request: error.type as
// the exception type, the span's status message (else the HTTP status)
// as message and traceback (Opik requires one; the proxy has no stack).
func errorInfoOf(s ptrace.Span) *opikapi.ErrorInfo {
	v, ok := s.Attributes().Get(spankey.ErrorType)
	if !ok && s.Status().Code() != ptrace.StatusCodeError {
		return nil
	}
	typ := ""
	if ok {
		typ = v.AsString()
	}
	if typ == "" {
		typ = "error"
	}
	msg := s.Status().Message()
	if msg == "" {
		if code, ok := s.Attributes().Get(spankey.HttpResponseStatusCode); ok {
			msg = "HTTP " + strconv.FormatInt(code.Int(), 10)
		} else {
			msg = typ
		}
	}
	return &opikapi.ErrorInfo{ExceptionType: typ, Message: msg, Traceback: msg}
}

// threadOf is the Opik thread a request belongs to: the span's session.id
// (X-Session-Id), else the body's metadata.session_id.
func threadOf(session, body string) string {
	if session != "" {
		return session
	}
	var b struct {
		Metadata struct {
			SessionID json.RawMessage `json:"session_id"`
		} `json:"metadata"`
	}
	if json.Unmarshal([]byte(body), &b) != nil || len(b.Metadata.SessionID) == 0 {
		return ""
	}
	var sid string
	if json.Unmarshal(b.Metadata.SessionID, &sid) == nil {
		return sid
	}
	return strings.Trim(string(b.Metadata.SessionID), `"`)
}

func nonEmpty(s ...string) []string {
	out := s[:0]
	for _, x := range s {
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}
