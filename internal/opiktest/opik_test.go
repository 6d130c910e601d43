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

// traces is one root span and one child.
func traces(override string) ptrace.Traces {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	root := spans.AppendEmpty()
	root.SetName("mlx.chat.completions")
	root.SetTraceID(pcommon.TraceID{1, 2, 3})
	root.SetSpanID(pcommon.SpanID{1})
	root.SetStartTimestamp(pcommon.NewTimestampFromTime(time.Unix(1700000000, 0)))
	root.Attributes().PutStr("input.value", `{"messages": []}`)
	root.Attributes().PutInt("llm.token_count.prompt", 7)
	if override != "" {
		root.Attributes().PutStr("opik.trace_id", override)
	}
	child := spans.AppendEmpty()
	child.SetName("child")
	child.SetTraceID(pcommon.TraceID{1, 2, 3})
	child.SetSpanID(pcommon.SpanID{2})
	child.SetParentSpanID(pcommon.SpanID{1})
	return td
}

func post(t *testing.T, url, contentType string, body []byte, header ...string) int {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", contentType)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

func TestOTLPInProtobufAndJSON(t *testing.T) {
	s := start(t)
	id := opikid.TraceID([16]byte{9}, time.Unix(1700000000, 0))
	req := ptraceotlp.NewExportRequestFromTraces(traces(id))
	pb, err := req.MarshalProto()
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, post(t, s.URL()+"/v1/private/otel/v1/traces", "application/x-protobuf", pb, "projectName", "mlx"))
	js, err := ptraceotlp.NewExportRequestFromTraces(traces("")).MarshalJSON()
	require.NoError(t, err)
	// Straight at the backend, without /api, and without a project.
	assert.Equal(t, http.StatusOK, post(t, strings.TrimSuffix(s.URL(), "/api")+"/v1/private/otel/v1/traces", "application/json", js))
	assert.Equal(t, http.StatusUnsupportedMediaType, post(t, s.URL()+"/v1/private/otel/v1/traces", "text/plain", js))

	mlx := s.Traces("mlx")
	require.Len(t, mlx, 1, "the root span is a trace, the child is not")
	assert.Equal(t, id, mlx[0].ID, "opik.trace_id is the id")
	assert.NotContains(t, mlx[0].Attributes, "opik.trace_id", "and is not kept")
	assert.Equal(t, map[string]any{"messages": []any{}}, mlx[0].Input)
	assert.Equal(t, int64(7), mlx[0].Usage["prompt_tokens"])
	assert.Equal(t, 2, s.SpanCount("mlx"))
	def := s.Traces(DefaultProject)
	require.Len(t, def, 1)
	assert.True(t, opikid.IsV7(def[0].ID), "a mapped id is a UUIDv7 too")
}

func put(t *testing.T, url string, body any) (int, string) {
	b, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPut, url, bytes.NewReader(b))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out bytes.Buffer
	_, _ = out.ReadFrom(resp.Body)
	return resp.StatusCode, out.String()
}

func TestFeedbackScores(t *testing.T) {
	s := start(t)
	url := s.URL() + "/v1/private/traces/feedback-scores"
	id := opikid.TraceID([16]byte{9}, time.Now())
	item := func(id, name string, v float64) map[string]any {
		return map[string]any{"id": id, "project_name": "mlx", "name": name, "value": v, "source": "sdk"}
	}
	status, _ := put(t, url, map[string]any{"scores": []any{item(id, "a", 0.5), item(id, "b", 1)}})
	assert.Equal(t, http.StatusNoContent, status)
	status, _ = put(t, url, map[string]any{"scores": []any{item(id, "a", 0.25)}})
	assert.Equal(t, http.StatusNoContent, status)
	assert.Equal(t, []Score{{Name: "a", Value: 0.25, Source: "sdk"}, {Name: "b", Value: 1, Source: "sdk"}}, s.Scores(id), "a score written again is replaced")

	status, body := put(t, url, map[string]any{"scores": []any{item("6f1c2b9e-1d2c-4a6b-8a6b-2f0e9c1d2e3f", "a", 1)}})
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, body, "version 7 UUID")
	status, _ = put(t, url, map[string]any{"scores": []any{}})
	assert.Equal(t, http.StatusUnprocessableEntity, status)
	many := make([]any, 1001)
	for i := range many {
		many[i] = item(id, "a", 1)
	}
	status, body = put(t, url, map[string]any{"scores": many})
	assert.Equal(t, http.StatusUnprocessableEntity, status)
	assert.Contains(t, body, "between 1 and 1000")
	bad := item(id, "a", 1)
	bad["source"] = "proxy"
	status, _ = put(t, url, map[string]any{"scores": []any{bad}})
	assert.Equal(t, http.StatusUnprocessableEntity, status)
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
