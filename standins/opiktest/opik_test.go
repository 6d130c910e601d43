package opiktest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/mlx-otelcol/mlx-otelcol/internal/opikid"
)

func start(t *testing.T) *Server {
	s := New()
	require.NoError(t, s.Listen("127.0.0.1:0"))
	t.Cleanup(s.Close)
	return s
}

var t0 = time.Unix(1700000000, 0)

// traces is one root span and one child.
func traces(override string) ptrace.Traces {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	ss.Scope().SetName("mlx.proxy")
	spans := ss.Spans()
	root := spans.AppendEmpty()
	root.SetName("chat mlx-community/Qwen3-4B-4bit")
	root.SetTraceID(pcommon.TraceID{1, 2, 3})
	root.SetSpanID(pcommon.SpanID{1})
	root.SetStartTimestamp(pcommon.NewTimestampFromTime(t0))
	root.Attributes().PutStr("input.value", `{"messages": []}`)
	root.Attributes().PutStr("mlx.kind", "chat")
	root.Attributes().PutStr("metadata", `{"otel_trace_id":"x"}`)
	root.Attributes().PutStr("llm.invocation_parameters", `{"top_p":1}`)
	root.Attributes().PutStr("output.value", `{"role":"assistant"}`)
	root.Attributes().PutStr("llm.output_messages.0.message.role", "assistant")
	root.Attributes().PutDouble("gen_ai.request.temperature", 0.5)
	root.Attributes().PutInt("llm.token_count.prompt", 7)
	root.Attributes().PutInt("gen_ai.usage.input_tokens", 7)
	root.Attributes().PutInt("gen_ai.usage.output_tokens", 3)
	root.Attributes().PutStr("session.id", "s1")
	if override != "" {
		root.Attributes().PutStr("opik.trace_id", override)
	}
	child := spans.AppendEmpty()
	child.SetName("child")
	child.SetTraceID(pcommon.TraceID{1, 2, 3})
	child.SetSpanID(pcommon.SpanID{2})
	child.SetParentSpanID(pcommon.SpanID{1})
	child.SetStartTimestamp(pcommon.NewTimestampFromTime(t0.Add(-time.Second)))
	return td
}

func send(t *testing.T, method, url, contentType string, body []byte, header ...string) (int, string) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", contentType)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out bytes.Buffer
	_, _ = out.ReadFrom(resp.Body)
	return resp.StatusCode, out.String()
}

func sendJSON(t *testing.T, method, url string, body any) (int, string) {
	b, err := json.Marshal(body)
	require.NoError(t, err)
	return send(t, method, url, "application/json", b)
}

// Rules 1, 2, 4, 5, 6: a root span without override makes a trace with
// Opik's derived id, every attribute under its full key.
func TestOTLPRootSpanMakesATraceWithOpiksID(t *testing.T) {
	s := start(t)
	pb, err := ptraceotlp.NewExportRequestFromTraces(traces("")).MarshalProto()
	require.NoError(t, err)
	status, _ := send(t, http.MethodPost, s.URL()+"/v1/private/otel/v1/traces", "application/x-protobuf", pb, "projectName", "mlx")
	require.Equal(t, http.StatusOK, status)
	other := traces("")
	spans := other.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := range spans.Len() {
		spans.At(i).SetTraceID(pcommon.TraceID{4, 5, 6})
		spans.At(i).SetSpanID(pcommon.SpanID{byte(10 + i)})
	}
	spans.At(1).SetParentSpanID(pcommon.SpanID{10})
	js, err := ptraceotlp.NewExportRequestFromTraces(other).MarshalJSON()
	require.NoError(t, err)
	// Straight at the backend, without /api, and without a project.
	status, _ = send(t, http.MethodPost, strings.TrimSuffix(s.URL(), "/api")+"/v1/private/otel/v1/traces", "application/json", js)
	assert.Equal(t, http.StatusOK, status)
	status, _ = send(t, http.MethodPost, s.URL()+"/v1/private/otel/v1/traces", "text/plain", js)
	assert.Equal(t, http.StatusUnsupportedMediaType, status)

	mlx := s.Traces("mlx")
	require.Len(t, mlx, 1, "the root span is a trace, the child is not")
	tr := mlx[0]
	// Opik's formula with the earliest start of the trace in the batch
	// (the child's, a second before the root's).
	assert.Equal(t, ConvertOtelIDToUUIDv7([]byte{1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, t0.Add(-time.Second).UnixMilli()), tr.ID)
	assert.True(t, opikid.IsV7(tr.ID))
	assert.Equal(t, map[string]any{
		"input.value":               map[string]any{"messages": []any{}},
		"mlx.kind":                  "chat",
		"metadata":                  map[string]any{"otel_trace_id": "x"},
		"llm.invocation_parameters": map[string]any{"top_p": float64(1)},
	}, tr.Input, "full keys; unmatched keys (mlx.*, metadata, a flat llm.invocation_parameters) in input")
	assert.Equal(t, map[string]any{"output.value": map[string]any{"role": "assistant"}, "llm.output_messages.0.message.role": "assistant"}, tr.Output)
	assert.Equal(t, map[string]any{"integration": "mlx.proxy", "gen_ai.request.temperature": 0.5}, tr.Metadata)
	assert.Equal(t, "s1", tr.ThreadID)
	assert.Equal(t, map[string]int64{"prompt": 7, "prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}, tr.Usage,
		"both usage families, each under its own keys")
	assert.Equal(t, 2, tr.SpanCount)
	assert.Len(t, s.Traces(DefaultProject), 1)
}

// Rules 2, 3: opik.trace_id on a root span drops its trace's creation.
func TestOverrideDropsTraceCreation(t *testing.T) {
	s := start(t)
	id := opikid.New(t0)
	s.Store("mlx", traces(id))
	assert.Empty(t, s.Traces("mlx"), "the override attaches to a trace that must already exist")
	spans := s.Spans("mlx")
	require.Len(t, spans, 2)
	for _, sp := range spans {
		if sp.Name == "chat mlx-community/Qwen3-4B-4bit" {
			assert.Equal(t, id, sp.TraceID, "the span is kept under the override")
			assert.NotContains(t, sp.Input, "opik.trace_id", "the key is dropped")
		}
	}
	// A value that is not a UUIDv7 is ignored: the trace is made under
	// Opik's own id.
	s.Store("other", traces("not-a-uuid"))
	assert.Len(t, s.Traces("other"), 1)
}

func TestOTLPMappingIsKeptPerTrace(t *testing.T) {
	s := start(t)
	td := traces("")
	s.Store("mlx", td)
	first := s.Traces("mlx")[0].ID
	// A later batch of the same trace id (a child that arrived late)
	// lands under the same mapped id.
	late := ptrace.NewTraces()
	sp := late.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(pcommon.TraceID{1, 2, 3})
	sp.SetSpanID(pcommon.SpanID{3})
	sp.SetParentSpanID(pcommon.SpanID{1})
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(t0.Add(time.Hour)))
	s.Store("mlx", late)
	tr, _ := s.Trace(first)
	assert.Equal(t, 3, tr.SpanCount)
}

// Rule 7, 8: REST creation.
func TestRESTBatchCreation(t *testing.T) {
	s := start(t)
	id := opikid.New(time.Now())
	tr := map[string]any{"id": id, "project_name": "mlx", "name": "chat m", "start_time": time.Now(),
		"input": map[string]any{"messages": []any{}}, "metadata": map[string]any{"otel_trace_id": "ab"}, "tags": []string{"m"}, "thread_id": "s1"}
	status, _ := sendJSON(t, http.MethodPost, s.URL()+"/v1/private/traces/batch", map[string]any{"traces": []any{tr}})
	require.Equal(t, http.StatusNoContent, status)
	status, _ = sendJSON(t, http.MethodPost, s.URL()+"/v1/private/traces/batch", map[string]any{"traces": []any{tr}})
	assert.Equal(t, http.StatusNoContent, status, "a batch with an id that exists is written again (no existence check)")
	status, body := sendJSON(t, http.MethodPost, s.URL()+"/v1/private/traces", tr)
	assert.Equal(t, http.StatusConflict, status, "one trace with an id that exists")
	assert.JSONEq(t, `{"errors":["Trace already exists"]}`, body)
	status, body = sendJSON(t, http.MethodPost, s.URL()+"/v1/private/traces/batch", map[string]any{"traces": []any{tr, tr}})
	assert.Equal(t, http.StatusUnprocessableEntity, status)
	assert.Contains(t, body, "Duplicate trace id")

	v4 := map[string]any{"id": "6f1c2b9e-1d2c-4a6b-8a6b-2f0e9c1d2e3f", "start_time": time.Now()}
	status, body = sendJSON(t, http.MethodPost, s.URL()+"/v1/private/traces/batch", map[string]any{"traces": []any{v4}})
	assert.Equal(t, http.StatusBadRequest, status)
	assert.JSONEq(t, `{"code":400,"message":"Invalid UUID for id","details":"Trace id must be a version 7 UUID"}`, body)
	status, body = sendJSON(t, http.MethodPost, s.URL()+"/v1/private/traces/batch", map[string]any{"traces": []any{map[string]any{"id": id}}})
	assert.Equal(t, http.StatusUnprocessableEntity, status)
	assert.Contains(t, body, "startTime must not be null")
	status, _ = sendJSON(t, http.MethodPost, s.URL()+"/v1/private/traces/batch", map[string]any{"traces": []any{}})
	assert.Equal(t, http.StatusUnprocessableEntity, status)
	status, body = send(t, http.MethodPost, s.URL()+"/v1/private/traces/batch", "application/json", []byte("{"))
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, body, "Unable to process JSON")

	spanID := opikid.New(time.Now())
	sp := map[string]any{"id": spanID, "trace_id": id, "project_name": "mlx", "type": "llm", "start_time": time.Now(),
		"usage": map[string]int{"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}
	status, _ = sendJSON(t, http.MethodPost, s.URL()+"/v1/private/spans/batch", map[string]any{"spans": []any{sp}})
	require.Equal(t, http.StatusNoContent, status)
	bad := map[string]any{"id": opikid.New(time.Now()), "trace_id": "6f1c2b9e-1d2c-4a6b-8a6b-2f0e9c1d2e3f", "start_time": time.Now()}
	status, body = sendJSON(t, http.MethodPost, s.URL()+"/v1/private/spans/batch", map[string]any{"spans": []any{bad}})
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, body, "Trace id must be a version 7 UUID")

	got, ok := s.Trace(id)
	require.True(t, ok)
	assert.Equal(t, map[string]any{"messages": []any{}}, got.Input, "the input as written")
	assert.Equal(t, "s1", got.ThreadID)
	assert.Equal(t, "ab", got.OTelTraceID)
	assert.Equal(t, map[string]int64{"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}, got.Usage, "the trace's usage is its spans'")
	assert.Equal(t, 1, got.SpanCount)
}

// Rule 9: scores are upserted by (id, name), with no existence check.
func TestFeedbackScores(t *testing.T) {
	s := start(t)
	url := s.URL() + "/v1/private/traces/feedback-scores"
	id := opikid.New(time.Now())
	item := func(id, name string, v float64) map[string]any {
		return map[string]any{"id": id, "project_name": "mlx", "name": name, "value": v, "source": "sdk"}
	}
	status, _ := sendJSON(t, http.MethodPut, url, map[string]any{"scores": []any{item(id, "a", 0.5), item(id, "b", 1)}})
	assert.Equal(t, http.StatusNoContent, status, "no trace with that id: accepted all the same")
	status, _ = sendJSON(t, http.MethodPut, url, map[string]any{"scores": []any{item(id, "a", 0.25)}})
	assert.Equal(t, http.StatusNoContent, status)
	assert.Equal(t, []Score{{Name: "a", Value: 0.25, Source: "sdk"}, {Name: "b", Value: 1, Source: "sdk"}}, s.Scores(id), "a score written again is replaced")
	assert.Equal(t, 2, s.OrphanScores(), "and they show on no trace")

	status, body := sendJSON(t, http.MethodPut, url, map[string]any{"scores": []any{item("6f1c2b9e-1d2c-4a6b-8a6b-2f0e9c1d2e3f", "a", 1)}})
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, body, "version 7 UUID")
	status, _ = sendJSON(t, http.MethodPut, url, map[string]any{"scores": []any{}})
	assert.Equal(t, http.StatusUnprocessableEntity, status)
	many := make([]any, 1001)
	for i := range many {
		many[i] = item(id, "a", 1)
	}
	status, body = sendJSON(t, http.MethodPut, url, map[string]any{"scores": many})
	assert.Equal(t, http.StatusUnprocessableEntity, status)
	assert.Contains(t, body, "between 1 and 1000")
	bad := item(id, "a", 1)
	bad["source"] = "proxy"
	status, _ = sendJSON(t, http.MethodPut, url, map[string]any{"scores": []any{bad}})
	assert.Equal(t, http.StatusUnprocessableEntity, status)
}

// Rule 10: the list is newest first by id, paged.
func TestListPaging(t *testing.T) {
	s := start(t)
	var ids []string
	for i := range 3 {
		tr := ProxyTrace{TraceID: pcommon.TraceID{byte(i + 1)}, SpanID: pcommon.SpanID{1}, Start: t0.Add(time.Duration(i) * time.Second), Model: "m"}
		s.Put(tr.Trace("mlx"))
		ids = append(ids, tr.OpikID())
	}
	get := func(q string) (page struct {
		Page, Size, Total int
		Content           []Trace
	}) {
		resp, err := http.Get(s.URL() + "/v1/private/traces?" + q)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&page))
		return page
	}
	p1 := get("project_name=mlx&page=1&size=2")
	assert.Equal(t, 3, p1.Total)
	require.Len(t, p1.Content, 2)
	assert.Equal(t, []string{ids[2], ids[1]}, []string{p1.Content[0].ID, p1.Content[1].ID}, "newest first")
	p2 := get("project_name=mlx&page=2&size=2")
	require.Len(t, p2.Content, 1)
	assert.Equal(t, ids[0], p2.Content[0].ID)
	assert.Len(t, get("project_name=mlx").Content, 3, "size 10 by default")

	status, body := send(t, http.MethodGet, s.URL()+"/v1/private/traces/"+opikid.New(t0), "", nil)
	assert.Equal(t, http.StatusNotFound, status)
	assert.JSONEq(t, `{"code":404,"message":"Trace not found"}`, body)
}

func TestDownAndUp(t *testing.T) {
	s := start(t)
	url := s.URL() + "/v1/private/traces?project_name=mlx"
	s.Down()
	_, err := http.Get(url)
	require.Error(t, err, "a stopped Opik refuses connections")
	require.NoError(t, s.Up())
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	var page struct {
		Total   int     `json:"total"`
		Content []Trace `json:"content"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&page))
	assert.Zero(t, page.Total)
}

// Rules 13, 14, 15: reads without project_name or a zero end_time, Opik
// 2.x's write fields, and the PATCH the SDK sends for end().
func TestReadsWriteFieldsAndPatch(t *testing.T) {
	s := start(t)
	id := opikid.New(time.Now())
	tr := map[string]any{"id": id, "project_name": "mlx", "name": "chat m", "start_time": time.Now(), "ttft": 12.5, "environment": "staging"}
	status, _ := sendJSON(t, http.MethodPost, s.URL()+"/v1/private/traces/batch", map[string]any{"traces": []any{tr}})
	require.Equal(t, http.StatusNoContent, status)
	status, body := send(t, http.MethodGet, s.URL()+"/v1/private/traces/"+id, "", nil)
	require.Equal(t, http.StatusOK, status)
	var read map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &read))
	assert.NotContains(t, read, "project_name", "write-only in Opik's Trace")
	assert.NotContains(t, read, "end_time", "no end time: none read back, not year 1")
	assert.Equal(t, 12.5, read["ttft"])
	assert.Equal(t, "staging", read["environment"])
	_, list := send(t, http.MethodGet, s.URL()+"/v1/private/traces?project_name=mlx", "", nil)
	assert.NotContains(t, list, "project_name")

	end := time.Now().Add(time.Second).UTC().Truncate(time.Millisecond)
	status, _ = sendJSON(t, http.MethodPatch, s.URL()+"/v1/private/traces/"+id, map[string]any{"project_name": "mlx", "end_time": end, "ttft": 20.0})
	require.Equal(t, http.StatusNoContent, status)
	got, ok := s.Trace(id)
	require.True(t, ok)
	assert.True(t, got.EndTime.Equal(end))
	assert.Equal(t, 20.0, *got.TTFT)
	assert.Equal(t, "chat m", got.Name, "what the update leaves out is kept")
	assert.Equal(t, "staging", got.Environment)

	status, _ = sendJSON(t, http.MethodPatch, s.URL()+"/v1/private/traces/"+id, map[string]any{"project_name": "other"})
	assert.Equal(t, http.StatusConflict, status, "a trace of another project")
	status, _ = sendJSON(t, http.MethodPatch, s.URL()+"/v1/private/traces/6f1c2b9e-1d2c-4a6b-8a6b-2f0e9c1d2e3f", map[string]any{})
	assert.Equal(t, http.StatusBadRequest, status)
	absent := opikid.New(time.Now())
	status, _ = sendJSON(t, http.MethodPatch, s.URL()+"/v1/private/traces/"+absent, map[string]any{"project_name": "mlx", "name": "late"})
	assert.Equal(t, http.StatusNoContent, status)
	partial, ok := s.Trace(absent)
	require.True(t, ok, "an update before its create is kept")
	assert.Equal(t, "late", partial.Name)

	spanID := opikid.New(time.Now())
	sp := map[string]any{"id": spanID, "trace_id": id, "project_name": "mlx", "type": "llm", "start_time": time.Now(),
		"model": "m", "provider": "mlx", "ttft": 12.5, "environment": "staging"}
	status, _ = sendJSON(t, http.MethodPost, s.URL()+"/v1/private/spans/batch", map[string]any{"spans": []any{sp}})
	require.Equal(t, http.StatusNoContent, status)
	spans := s.Spans("mlx")
	require.Len(t, spans, 1)
	assert.Equal(t, 12.5, *spans[0].TTFT)
	assert.Equal(t, "mlx", spans[0].Provider)
	assert.Nil(t, spans[0].TotalEstimatedCost)
}
