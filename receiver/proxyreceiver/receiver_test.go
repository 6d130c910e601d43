package proxyreceiver

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mdgen/mdschema"
	"github.com/mlx-otelcol/mlx-otelcol/extension/proxyextension"
	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/doccheck"
)

func TestDefaultConfig(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	require.NoError(t, componenttest.CheckConfigStruct(cfg))
	require.NoError(t, confmap.Validate(cfg))
	assert.Equal(t, "mlx_proxy", cfg.Extension.String())
}

func TestShutdownWithoutStart(t *testing.T) {
	f := NewFactory()
	set := receivertest.NewNopSettings(componentType)
	tr, err := f.CreateTraces(context.Background(), set, f.CreateDefaultConfig(), consumertest.NewNop())
	require.NoError(t, err)
	require.NoError(t, tr.Shutdown(context.Background()))
	lr, err := f.CreateLogs(context.Background(), set, f.CreateDefaultConfig(), consumertest.NewNop())
	require.NoError(t, err)
	require.NoError(t, lr.Shutdown(context.Background()))
}

func TestStartWithoutTheExtensionFailsClearly(t *testing.T) {
	f := NewFactory()
	tr, err := f.CreateTraces(context.Background(), receivertest.NewNopSettings(componentType), f.CreateDefaultConfig(), consumertest.NewNop())
	require.NoError(t, err)
	err = tr.Start(context.Background(), componenttest.NewNopHost())
	require.ErrorContains(t, err, `extension "mlx_proxy" is not running (add it to service.extensions)`)
}

// host offers the running extensions, as the collector's does.
type host map[component.ID]component.Component

func (h host) GetExtensions() map[component.ID]component.Component { return h }

// stack is a simulated engine, the mlx_proxy extension in front of it, and
// this receiver's two signals into sinks.
type stack struct {
	url    string
	client *http.Client
	traces *consumertest.TracesSink
	logs   *consumertest.LogsSink
}

func newStack(t *testing.T) *stack { return newStackOf(t, RecordsAccess) }

// newStackOf is a stack whose logs receiver feeds records (access or live).
func newStackOf(t *testing.T, records string) *stack {
	t.Helper()
	sim := mlxsim.New(mlxsim.Options{Model: "mlx-community/Qwen3-4B-4bit", Seed: 3, PrefillTPS: 1e12, DecodeTPS: 1e12}, io.Discard)
	engine := httptest.NewServer(sim.Handler())
	t.Cleanup(engine.Close)
	t.Cleanup(sim.Close)

	ef := proxyextension.NewFactory()
	ecfg := ef.CreateDefaultConfig().(*proxyextension.Config)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ecfg.Endpoint = ln.Addr().String()
	require.NoError(t, ln.Close())
	ecfg.Upstream = engine.URL
	ecfg.Model = "mlx-community/Qwen3-4B-4bit"
	ext, err := ef.Create(context.Background(), extensiontest.NewNopSettings(ef.Type()), ecfg)
	require.NoError(t, err)
	require.NoError(t, ext.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { assert.NoError(t, ext.Shutdown(context.Background())) })
	h := host{component.NewID(ef.Type()): ext}

	s := &stack{url: "http://" + ecfg.Endpoint, client: &http.Client{Timeout: 10 * time.Second},
		traces: new(consumertest.TracesSink), logs: new(consumertest.LogsSink)}
	f := NewFactory()
	set := receivertest.NewNopSettings(componentType)
	tr, err := f.CreateTraces(context.Background(), set, f.CreateDefaultConfig(), s.traces)
	require.NoError(t, err)
	require.NoError(t, tr.Start(context.Background(), h))
	t.Cleanup(func() { assert.NoError(t, tr.Shutdown(context.Background())) })
	lcfg := f.CreateDefaultConfig().(*Config)
	lcfg.Records = records
	lr, err := f.CreateLogs(context.Background(), set, lcfg, s.logs)
	require.NoError(t, err)
	require.NoError(t, lr.Start(context.Background(), h))
	t.Cleanup(func() { assert.NoError(t, lr.Shutdown(context.Background())) })
	return s
}

func (s *stack) post(t *testing.T, path, body string) {
	t.Helper()
	resp, err := s.client.Post(s.url+path, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// spans waits for n spans and returns them.
func (s *stack) spans(t *testing.T, n int) []ptrace.Span {
	t.Helper()
	require.Eventually(t, func() bool { return s.traces.SpanCount() >= n }, 5*time.Second, 5*time.Millisecond)
	var out []ptrace.Span
	for _, td := range s.traces.AllTraces() {
		rs := td.ResourceSpans()
		for i := 0; i < rs.Len(); i++ {
			res := rs.At(i).Resource().Attributes()
			svc, _ := res.Get("service.name")
			assert.Equal(t, "mlx-metrics-proxy", svc.Str())
			checkAgainstSchema(t, schema(t).ResourceAttributes, res)
			ss := rs.At(i).ScopeSpans()
			for j := 0; j < ss.Len(); j++ {
				assert.Equal(t, "mlx.proxy", ss.At(j).Scope().Name())
				for k := 0; k < ss.At(j).Spans().Len(); k++ {
					out = append(out, ss.At(j).Spans().At(k))
				}
			}
		}
	}
	return out
}

// loadSchema reads metadata.yaml, the one schema of the spans and records.
var loadSchema = sync.OnceValues(func() (*mdschema.Component, error) { return mdschema.Load("metadata.yaml") })

func schema(t *testing.T) *mdschema.Component {
	t.Helper()
	c, err := loadSchema()
	require.NoError(t, err)
	return c
}

// checkAgainstSchema holds attributes to a table of metadata.yaml: every
// key is in it with its type, and every "always" key is there.
func checkAgainstSchema(t *testing.T, table mdschema.RecordAttributes, attrs pcommon.Map) {
	t.Helper()
	assert.NoError(t, doccheck.CheckAttributes(table, attrs))
}

// logKind is the table of a kind of log record (access, live).
func logKind(t *testing.T, kind string) mdschema.RecordAttributes {
	t.Helper()
	table, ok := schema(t).LogAttributes.Get(kind)
	require.True(t, ok, "metadata.yaml has log_attributes.%s", kind)
	return table
}

const toolsJSON = `[{"type": "function", "function": {"name": "get_weather", "description": "Weather for a city", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]`

// The spans and access records the pipeline gets carry what metadata.yaml
// (and so documentation.md) says, and nothing it does not.
func TestSpansAsDocumented(t *testing.T) {
	s := newStack(t)
	bodies := []struct{ path, body string }{
		{"/v1/chat/completions", `{"messages": [{"role": "user", "content": "Say hello"}], "max_tokens": 16}`},
		{"/v1/chat/completions", `{"messages": [{"role": "user", "content": [{"type": "text", "text": "Use get_weather"}]}], "tools": ` + toolsJSON + `, "stream": true}`},
		{"/v1/chat/completions", `{"messages": [{"role": "user", "content": "Think"}], "max_tokens": 40, "stream": true, "chat_template_kwargs": {"enable_thinking": true}}`},
		{"/v1/completions", `{"prompt": "Once upon a time", "max_tokens": 8}`},
	}
	for _, b := range bodies {
		s.post(t, b.path, b.body)
	}
	spans := s.spans(t, len(bodies))
	require.Len(t, spans, len(bodies))
	names := map[string]int{}
	for _, sp := range spans {
		names[sp.Name()]++
	}
	// GenAI's span name, {gen_ai.operation.name} {gen_ai.request.model}.
	assert.Equal(t, map[string]int{"chat mlx-community/Qwen3-4B-4bit": len(bodies) - 1,
		"text_completion mlx-community/Qwen3-4B-4bit": 1}, names)
	for _, sp := range spans {
		assert.Equal(t, ptrace.SpanKindServer, sp.Kind())
		assert.True(t, sp.EndTimestamp() > sp.StartTimestamp())
		checkAgainstSchema(t, schema(t).SpanAttributes, sp.Attributes())
		for i := 0; i < sp.Events().Len(); i++ {
			_, ok := schema(t).SpanEvents.Get(sp.Events().At(i).Name())
			assert.True(t, ok, "span event %q is in metadata.yaml", sp.Events().At(i).Name())
		}
	}
	streamed := spans[1]
	require.Equal(t, 1, streamed.Events().Len())
	assert.Equal(t, "First Token Stream Event", streamed.Events().At(0).Name())
	fn, ok := streamed.Attributes().Get("llm.output_messages.0.message.tool_calls.0.tool_call.function.name")
	require.True(t, ok)
	assert.Equal(t, "get_weather", fn.Str())
	text, ok := streamed.Attributes().Get("llm.input_messages.0.message.contents.0.message_content.text")
	require.True(t, ok)
	assert.Equal(t, "Use get_weather", text.Str())
	prompt, ok := spans[3].Attributes().Get("llm.prompts.0.prompt.text")
	require.True(t, ok)
	assert.Equal(t, "Once upon a time", prompt.Str())

	// The access log: one record per request, with the span's ids.
	require.Eventually(t, func() bool { return s.logs.LogRecordCount() == len(bodies) }, 5*time.Second, 5*time.Millisecond)
	var recs []plog.LogRecord
	for _, ld := range s.logs.AllLogs() {
		checkAgainstSchema(t, schema(t).ResourceAttributes, ld.ResourceLogs().At(0).Resource().Attributes())
		sl := ld.ResourceLogs().At(0).ScopeLogs().At(0)
		assert.Equal(t, "mlx.proxy.http", sl.Scope().Name())
		for i := 0; i < sl.LogRecords().Len(); i++ {
			recs = append(recs, sl.LogRecords().At(i))
		}
	}
	for i, lr := range recs {
		checkAgainstSchema(t, logKind(t, "access"), lr.Attributes())
		assert.Equal(t, `request: 127.0.0.1 - "POST `+bodies[i].path+` HTTP/1.1" 200 -`, lr.Body().Str())
		assert.Equal(t, spans[i].TraceID(), lr.TraceID())
		assert.Equal(t, spans[i].SpanID(), lr.SpanID())
		assert.Equal(t, plog.SeverityNumberInfo, lr.SeverityNumber())
	}
}

// A request the proxy only relays (not a completion) is logged, not traced.
func TestOtherRequestsAreLoggedNotTraced(t *testing.T) {
	s := newStack(t)
	resp, err := s.client.Get(s.url + "/v1/models?secret=1")
	require.NoError(t, err)
	resp.Body.Close()
	require.Eventually(t, func() bool { return s.logs.LogRecordCount() == 1 }, 5*time.Second, 5*time.Millisecond)
	lr := s.logs.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	assert.Equal(t, `request: 127.0.0.1 - "GET /v1/models HTTP/1.1" 200 -`, lr.Body().Str())
	assert.True(t, lr.TraceID().IsEmpty())
	assert.Zero(t, s.traces.SpanCount())
}
