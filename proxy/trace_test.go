package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/heuristics"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/span"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/span/spankey"
	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
)

// redacted is what a hidden value reads as on a span.
const redacted = span.Redacted

// spanSink collects what the proxy hands to the collector side.
type spanSink struct {
	mu     sync.Mutex
	spans  []*Span
	access []*AccessRecord
	got    time.Time // when the last span arrived
}

func (s *spanSink) spansSink(_ context.Context, spans []*Span) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.spans = append(s.spans, spans...)
	s.got = time.Now()
	return nil
}

func (s *spanSink) accessSink(_ context.Context, recs []*AccessRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.access = append(s.access, recs...)
	return nil
}

// tracedRig is a rig whose proxy hands its spans and access log to sink.
func tracedRig(t *testing.T, opts ...rigOption) (*rig, *spanSink) {
	r := newRig(t, opts...)
	sink := &spanSink{}
	detachOnCleanup(t, r.proxy.AttachSpans(sink.spansSink))
	detachOnCleanup(t, r.proxy.AttachAccessLog(sink.accessSink))
	t.Cleanup(func() { sink.checkKeysUnique(t) })
	return r, sink
}

// checkKeysUnique fails the test when a span has an attribute key twice:
// the proxy writes its spans without the SDK, which kept the last of
// duplicates (proxy/span/data.go), so every traced test holds each key to once.
func (s *spanSink) checkKeysUnique(t *testing.T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, span := range s.spans {
		seen := map[attribute.Key]bool{}
		for _, kv := range span.Attributes {
			assert.False(t, seen[kv.Key], "attribute %s twice on a span", kv.Key)
			seen[kv.Key] = true
		}
	}
}

func detachOnCleanup(t *testing.T, detach func(context.Context)) {
	t.Cleanup(func() { detach(context.Background()) })
}

// next waits for the n-th span (1-based) and returns it.
func (s *spanSink) next(t *testing.T, n int) *Span {
	t.Helper()
	var span *Span
	require.Eventually(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.spans) >= n {
			span = s.spans[n-1]
			return true
		}
		return false
	}, 5*time.Second, time.Millisecond, "span %d", n)
	return span
}

func (s *spanSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.spans)
}

// attrsOf is a span's attributes by key.
func attrsOf(span *Span) map[string]attribute.Value {
	m := map[string]attribute.Value{}
	for _, kv := range span.Attributes {
		m[string(kv.Key)] = kv.Value
	}
	return m
}

// contentKey: an attribute that carries prompts, answers or tools.
func contentKey(k string) bool {
	for _, p := range []string{"input.", "output.", "llm.input_messages.", "llm.output_messages.", "llm.prompts", "llm.tools.", "llm.choices."} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// The attributes every completion span carries, of the three sets.
var everySpanKeys = []string{
	"http.request.method", "url.path", "http.response.status_code",
	"mlx.model", "mlx.streaming", "mlx.kind", "mlx.temperature", "mlx.tools_provided", "mlx.gen_seconds",
	"openinference.span.kind", "llm.system", "llm.provider", "llm.model_name", "metadata", "llm.invocation_parameters",
	"gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model",
	"server.address", "server.port",
}

// Keys of a successful answer with usage.
var answerKeys = []string{
	"mlx.ttft_seconds", "mlx.tokens_prompt", "mlx.tokens_completion", "mlx.tool_calls",
	"mlx.hallucination_risk", "mlx.hallucination_flagged",
	"llm.finish_reason", "llm.token_count.prompt", "llm.token_count.completion", "llm.token_count.total",
	"gen_ai.response.id", "gen_ai.response.model", "gen_ai.response.finish_reasons",
	"gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens",
	"input.value", "input.mime_type", "output.value", "output.mime_type",
	"llm.input_messages.0.message.role", "llm.input_messages.0.message.content",
	"llm.output_messages.0.message.role",
}

var scoredKeys = []string{
	"mlx.logprobs_source", "mlx.perplexity", "mlx.confidence_mean", "mlx.confidence_min",
	"mlx.low_confidence_token_ratio", "mlx.token_entropy", "mlx.scored_tokens",
}

func requireKeys(t *testing.T, a map[string]attribute.Value, keys ...[]string) {
	t.Helper()
	for _, set := range keys {
		for _, k := range set {
			assert.Contains(t, a, k)
		}
	}
}

func TestSpanOfANonStreamedChat(t *testing.T) {
	r, sink := tracedRig(t)
	body := `{"model": "mlx-community/Qwen3-4B-4bit", "messages": [{"role": "system", "content": "Be brief"}, {"role": "user", "content": "Say hello"}], "max_tokens": 24, "temperature": 0.0, "top_p": 0.9}`
	before := time.Now()
	resp := r.do(r.url, http.MethodPost, "/v1/chat/completions", body, "Authorization", "Bearer sk-secret-key-123")
	require.Equal(t, http.StatusOK, resp.status)
	span := sink.next(t, 1)
	a := attrsOf(span)
	requireKeys(t, a, everySpanKeys, answerKeys, scoredKeys)

	assert.Equal(t, "chat "+testModel, span.Name, "{gen_ai.operation.name} {gen_ai.request.model}")
	assert.Equal(t, trace.SpanKindServer, span.Kind)
	assert.Equal(t, TracerName, span.Source.Scope)
	assert.Equal(t, codes.Unset, span.Status)
	assert.False(t, span.Parent.IsValid(), "a root span")
	assert.Equal(t, "injected", a["mlx.logprobs_source"].AsString())
	assert.Equal(t, "LLM", a["openinference.span.kind"].AsString())
	assert.Equal(t, "chat", a["gen_ai.operation.name"].AsString())
	assert.Equal(t, "mlx", a["gen_ai.provider.name"].AsString())
	assert.Equal(t, testModel, a["gen_ai.request.model"].AsString())
	assert.Equal(t, testModel, a["gen_ai.response.model"].AsString())
	assert.Equal(t, 0.9, a["gen_ai.request.top_p"].AsFloat64())
	assert.Equal(t, int64(24), a["gen_ai.request.max_tokens"].AsInt64())
	require.Contains(t, a, "gen_ai.request.temperature", "the request's temperature: 0")
	assert.Equal(t, 0.0, a["gen_ai.request.temperature"].AsFloat64())
	assert.Equal(t, "openai", a["llm.system"].AsString())
	assert.NotContains(t, a, "gen_ai.request.stream", "set only when the request streams")
	assert.False(t, a["gen_ai.request.stream"].AsBool())
	assert.Equal(t, "127.0.0.1", a["server.address"].AsString())
	assert.Equal(t, int64(200), a["http.response.status_code"].AsInt64())
	assert.Equal(t, body, a["input.value"].AsString())
	assert.Equal(t, "application/json", a["input.mime_type"].AsString())
	assert.Equal(t, "system", a["llm.input_messages.0.message.role"].AsString())
	assert.Equal(t, "Say hello", a["llm.input_messages.1.message.content"].AsString())
	assert.NotContains(t, a, "gen_ai.response.time_to_first_chunk", "streams only")
	assert.Empty(t, span.Events, "no first-token event without a stream")

	// The answer on the span is the one the client got.
	var answer struct {
		ID      string `json:"id"`
		Choices []struct {
			FinishReason string `json:"finish_reason"`
			Message      struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
		Usage struct {
			PromptTokens     int64 `json:"prompt_tokens"`
			CompletionTokens int64 `json:"completion_tokens"`
		} `json:"usage"`
	}
	require.NoError(t, json.Unmarshal(resp.body, &answer))
	assert.Equal(t, answer.ID, a["gen_ai.response.id"].AsString())
	assert.Equal(t, answer.Choices[0].Message.Content, a["llm.output_messages.0.message.content"].AsString())
	assert.Equal(t, []string{answer.Choices[0].FinishReason}, a["gen_ai.response.finish_reasons"].AsStringSlice())
	assert.Equal(t, answer.Usage.PromptTokens, a["gen_ai.usage.input_tokens"].AsInt64())
	assert.Equal(t, answer.Usage.PromptTokens, a["mlx.tokens_prompt"].AsInt64())
	assert.Equal(t, answer.Usage.CompletionTokens, a["llm.token_count.completion"].AsInt64())
	var out map[string]any
	require.NoError(t, json.Unmarshal([]byte(a["output.value"].AsString()), &out))
	assert.Equal(t, answer.Choices[0].Message.Content, out["content"])

	// The scores are the ones the metrics got.
	sc := r.scrape()
	assert.InDelta(t, value(t, sc, "mlx_token_confidence_mean"), a["mlx.confidence_mean"].AsFloat64(), 1e-4)
	assert.InDelta(t, value(t, sc, "mlx_hallucination_risk", "kind", "chat"), a["mlx.hallucination_risk"].AsFloat64(), 1e-9)
	var meta map[string]any
	require.NoError(t, json.Unmarshal([]byte(a["metadata"].AsString()), &meta))
	for _, k := range []string{"node", "ttft_seconds", "generation_seconds", "hallucination_risk", "hallucination_flagged",
		"logprobs_source", "scored_tokens", "confidence_mean", "confidence_std", "token_margin_mean"} {
		assert.Contains(t, meta, k)
	}
	assert.Equal(t, span.Context.TraceID().String(), meta["otel_trace_id"])
	assert.Equal(t, span.Context.SpanID().String(), meta["otel_span_id"])

	// The span lasts what the request lasted, not until scoring ended.
	assert.False(t, span.Start.Before(before))
	assert.InDelta(t, a["mlx.gen_seconds"].AsFloat64(), span.End.Sub(span.Start).Seconds(), 1e-9)
	assert.True(t, span.End.Before(sink.got))
	assert.Equal(t, ServiceName, resourceValue(span, "service.name"))

	// No header value, the key included, is anywhere on the span.
	for k, v := range a {
		assert.NotContains(t, v.Emit(), "sk-secret", k)
	}
}

func resourceValue(span *Span, key string) string {
	for _, kv := range span.Source.Resource {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}

func TestSpanOfAStream(t *testing.T) {
	r, sink := tracedRig(t)
	resp := r.post("/v1/chat/completions", chatStreamBody)
	require.Equal(t, http.StatusOK, resp.status)
	span := sink.next(t, 1)
	a := attrsOf(span)
	requireKeys(t, a, everySpanKeys, answerKeys)
	assert.True(t, a["mlx.streaming"].AsBool())
	assert.True(t, a["gen_ai.request.stream"].AsBool())
	assert.NotContains(t, a, "mlx.logprobs_source", "streams are not scored without destreaming")
	require.Len(t, span.Events, 1)
	ev := span.Events[0]
	assert.Equal(t, spankey.EventFirstTokenStreamEvent, ev.Name)
	ttfc := a["gen_ai.response.time_to_first_chunk"].AsFloat64()
	assert.InDelta(t, ev.Time.Sub(span.Start).Seconds(), ttfc, 1e-9)
	assert.LessOrEqual(t, a["mlx.ttft_seconds"].AsFloat64(), a["mlx.gen_seconds"].AsFloat64())
	assert.Equal(t, streamOf(t, resp, false).Content, a["llm.output_messages.0.message.content"].AsString())
	assert.Equal(t, a["llm.token_count.completion"], a["gen_ai.usage.output_tokens"])
}

func TestSpanOfADestreamedStream(t *testing.T) {
	r, sink := tracedRig(t, withConfig(func(c *Config) { c.DestreamFraction = 1 }))
	resp := r.post("/v1/chat/completions", chatStreamBody)
	require.Equal(t, http.StatusOK, resp.status)
	a := attrsOf(sink.next(t, 1))
	requireKeys(t, a, everySpanKeys, answerKeys, scoredKeys)
	assert.Equal(t, "destreamed", a["mlx.logprobs_source"].AsString())
	assert.True(t, a["mlx.streaming"].AsBool(), "the client asked for a stream")
	assert.NotContains(t, a, "gen_ai.response.time_to_first_chunk", "the answer came whole")
	assert.Empty(t, sink.next(t, 1).Events)
}

func TestSpanOfAToolCall(t *testing.T) {
	r, sink := tracedRig(t)
	resp := r.post("/v1/chat/completions", toolStreamBody)
	require.Equal(t, http.StatusOK, resp.status)
	a := attrsOf(sink.next(t, 1))
	p := "llm.output_messages.0.message.tool_calls.0.tool_call."
	assert.Equal(t, "get_weather", a[p+"function.name"].AsString())
	got := streamOf(t, resp, false)
	require.Len(t, got.ToolCalls, 1)
	assert.Equal(t, "get_weather("+a[p+"function.arguments"].AsString()+")@0", got.ToolCalls[0])
	assert.NotEmpty(t, a[p+"id"].AsString())
	assert.Equal(t, int64(1), a["mlx.tool_calls"].AsInt64())
	assert.True(t, a["mlx.tools_provided"].AsBool())
	assert.Equal(t, "tool_calls", a["llm.finish_reason"].AsString())
	var tool map[string]any
	require.NoError(t, json.Unmarshal([]byte(a["llm.tools.0.tool.json_schema"].AsString()), &tool))
	assert.Equal(t, "get_weather", tool["function"].(map[string]any)["name"])
	var out struct {
		ToolCalls []struct {
			Function struct{ Name string } `json:"function"`
		} `json:"tool_calls"`
	}
	require.NoError(t, json.Unmarshal([]byte(a["output.value"].AsString()), &out))
	require.Len(t, out.ToolCalls, 1)
	assert.Equal(t, "get_weather", out.ToolCalls[0].Function.Name)
}

func TestSpanOfReasoning(t *testing.T) {
	r, sink := tracedRig(t)
	resp := r.post("/v1/chat/completions", reasoningBody)
	require.Equal(t, http.StatusOK, resp.status)
	a := attrsOf(sink.next(t, 1))
	assert.Equal(t, KindReasoning, a["mlx.kind"].AsString())
	var out struct{ Reasoning, Content string }
	require.NoError(t, json.Unmarshal([]byte(a["output.value"].AsString()), &out))
	got := streamOf(t, resp, false)
	assert.Equal(t, got.Reasoning, out.Reasoning)
	assert.NotEmpty(t, out.Reasoning)
	assert.Equal(t, got.Content, out.Content)
}

func TestSpanOfAnEngineError(t *testing.T) {
	r := rigWithUpstream(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		// mlx_lm v0.31.3 server.py answers a ValueError so (handle_completion).
		_, _ = w.Write([]byte(`{"error": "Only 'text' content type is supported."}`))
	}, nil)
	sink := &spanSink{}
	detachOnCleanup(t, r.proxy.AttachSpans(sink.spansSink))
	resp := r.post("/v1/chat/completions", chatBody)
	require.Equal(t, http.StatusNotFound, resp.status)
	span := sink.next(t, 1)
	a := attrsOf(span)
	requireKeys(t, a, everySpanKeys)
	assert.Equal(t, codes.Error, span.Status)
	assert.Equal(t, "the engine answered 404: Only 'text' content type is supported.", span.StatusMessage)
	assert.Equal(t, "404", a["error.type"].AsString())
	require.Len(t, span.Events, 1, "the error as an exception event too")
	ev := span.Events[0]
	assert.Equal(t, "exception", ev.Name)
	evAttrs := map[string]string{}
	for _, kv := range ev.Attributes {
		evAttrs[string(kv.Key)] = kv.Value.AsString()
	}
	assert.Equal(t, map[string]string{"exception.type": "404", "exception.message": "Only 'text' content type is supported."}, evAttrs)
	assert.NotContains(t, a, "mlx.hallucination_risk", "an error is not scored")
	assert.NotContains(t, a, "output.value")
}

func TestSpanOfTheProxysOwnErrors(t *testing.T) {
	r := rigWithUpstream(t, func(http.ResponseWriter, *http.Request) {}, func(c *Config) { c.Upstream = "http://127.0.0.1:1" })
	sink := &spanSink{}
	detachOnCleanup(t, r.proxy.AttachSpans(sink.spansSink))
	require.Equal(t, http.StatusServiceUnavailable, r.post("/v1/chat/completions", chatBody).status)
	span := sink.next(t, 1)
	assert.Equal(t, codes.Error, span.Status)
	assert.Equal(t, "unavailable", attrsOf(span)["error.type"].AsString())
	assert.Equal(t, int64(503), attrsOf(span)["http.response.status_code"].AsInt64())
}

func TestSpanOfAClientAbortMidStream(t *testing.T) {
	r, sink := tracedRig(t, func(_ *Config, o *mlxsim.Options) { o.DecodeTPS = 20 })
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url+"/v1/chat/completions", strings.NewReader(chatStreamBody))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.client.Do(req)
	require.NoError(t, err)
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		if strings.HasPrefix(line, "data: ") {
			break
		}
	}
	cancel()
	resp.Body.Close()
	span := sink.next(t, 1)
	assert.Equal(t, codes.Error, span.Status)
	assert.Equal(t, "client_gone", attrsOf(span)["error.type"].AsString())
}

func TestNoSpanWhenTheClientSaysSo(t *testing.T) {
	r, sink := tracedRig(t)
	resp := r.do(r.url, http.MethodPost, "/v1/chat/completions", chatBody, NoTraceHeader, "0")
	require.Equal(t, http.StatusOK, resp.status)
	// Whatever the first request hands the span outbox is in it once the
	// proxy has settled, and the outbox hands spans over in order: a span
	// of the first request would arrive before the second's.
	settle(r.proxy)
	const parent = "0af7651916cd43dd8448eb211c80319c"
	r.do(r.url, http.MethodPost, "/v1/chat/completions", chatBody, "traceparent", "00-"+parent+"-b7ad6b7169203331-01")
	span := sink.next(t, 1)
	assert.Equal(t, parent, span.Context.TraceID().String(), "the first span to arrive is the second request's")
	settle(r.proxy)
	assert.Equal(t, 1, sink.count(), "only the second request has a span")
	assert.True(t, span.Context.IsValid())
	sc := r.scrape()
	assert.Equal(t, 2.0, value(t, sc, "mlx_requests_total", "streaming", "false", "kind", "chat"), "both are counted")
	// The access log has both, the untraced one without IDs.
	require.Eventually(t, func() bool { sink.mu.Lock(); defer sink.mu.Unlock(); return len(sink.access) == 2 }, 5*time.Second, time.Millisecond)
	sink.mu.Lock()
	defer sink.mu.Unlock()
	assert.False(t, sink.access[0].TraceID.IsValid())
	assert.Equal(t, span.Context.TraceID(), sink.access[1].TraceID)
	assert.Equal(t, span.Context.SpanID(), sink.access[1].SpanID)
	assert.Equal(t, "/v1/chat/completions", sink.access[1].Path)
	assert.Equal(t, http.StatusOK, sink.access[1].Status)
	assert.Len(t, sink.access, 2, "scrapes of /metrics are not logged")
}

func TestCaptureContentOffDropsContentAndNothingElse(t *testing.T) {
	on, onSink := tracedRig(t)
	off, offSink := tracedRig(t, withConfig(func(c *Config) { c.Traces.CaptureContent = false }))
	for _, body := range []string{toolBody, textBody} {
		path := "/v1/chat/completions"
		if body == textBody {
			path = "/v1/completions"
		}
		on.post(path, body)
		off.post(path, body)
	}
	for n := 1; n <= 2; n++ {
		withContent, without := attrsOf(onSink.next(t, n)), attrsOf(offSink.next(t, n))
		var want []string
		for k := range withContent {
			if !contentKey(k) {
				want = append(want, k)
			}
		}
		var got []string
		for k := range without {
			got = append(got, k)
		}
		assert.ElementsMatch(t, want, got)
		assert.Contains(t, withContent, "input.value")
	}
	assert.Equal(t, "Once upon a time", attrsOf(onSink.next(t, 2))["llm.prompts.0.prompt.text"].AsString())
	text := onSink.next(t, 2)
	assert.Equal(t, "text_completion", attrsOf(text)["gen_ai.operation.name"].AsString())
	assert.Equal(t, "text_completion "+testModel, text.Name)
}

func TestOpenInferenceHideSettings(t *testing.T) {
	env := map[string]string{"OPENINFERENCE_HIDE_INPUTS": "true", "OPENINFERENCE_HIDE_OUTPUT_TEXT": "1", "OPENINFERENCE_HIDE_LLM_INVOCATION_PARAMETERS": "TRUE"}
	hide := HideFromEnv(func(k string) string { return env[k] })
	assert.Equal(t, HideConfig{Inputs: true, OutputText: true, InvocationParameters: true, Base64ImageMaxLength: 32_000}, hide)
	all := map[string]string{"OPENINFERENCE_HIDE_INPUT_IMAGES": "true", "OPENINFERENCE_HIDE_LLM_TOOLS": "true",
		"OPENINFERENCE_HIDE_PROMPTS": "true", "OPENINFERENCE_HIDE_CHOICES": "true", "OPENINFERENCE_BASE64_IMAGE_MAX_LENGTH": "100"}
	assert.Equal(t, HideConfig{InputImages: true, LLMTools: true, Prompts: true, Choices: true, Base64ImageMaxLength: 100},
		HideFromEnv(func(k string) string { return all[k] }))
	r, sink := tracedRig(t, withConfig(func(c *Config) { c.Traces.Hide = hide }))
	r.post("/v1/chat/completions", toolBody)
	a := attrsOf(sink.next(t, 1))
	assert.Equal(t, redacted, a["input.value"].AsString())
	assert.NotEqual(t, redacted, a["output.value"].AsString(), "output text hides messages' text only")
	if c, ok := a["llm.output_messages.0.message.content"]; ok {
		assert.Equal(t, redacted, c.AsString())
	}
	for k := range a {
		assert.False(t, strings.HasPrefix(k, "llm.input_messages."), k)
		assert.False(t, strings.HasPrefix(k, "llm.tools."), k)
	}
	assert.NotContains(t, a, "llm.invocation_parameters")
	assert.Contains(t, a, "llm.output_messages.0.message.tool_calls.0.tool_call.function.name", "tool calls are no text")
}

func TestAClientTraceIsContinued(t *testing.T) {
	r, sink := tracedRig(t)
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	r.do(r.url, http.MethodPost, "/v1/chat/completions", chatBody, "traceparent", tp)
	span := sink.next(t, 1)
	assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", span.Context.TraceID().String())
	assert.Equal(t, "00f067aa0ba902b7", span.Parent.SpanID().String())
	assert.True(t, span.Parent.IsRemote())

	// A client that says "not sampled" is not traced.
	r.do(r.url, http.MethodPost, "/v1/chat/completions", chatBody, "traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")
	r.post("/v1/chat/completions", chatBody)
	second := sink.next(t, 2)
	assert.NotEqual(t, span.Context.TraceID(), second.Context.TraceID())
}

// A pipeline that does not take spans loses spans, never requests.
func TestSpansAreDroppedNotWaitedFor(t *testing.T) {
	r := newRig(t, withConfig(func(c *Config) { c.Traces.QueueSize = 2 }))
	release := make(chan struct{})
	detachOnCleanup(t, r.proxy.AttachSpans(func(ctx context.Context, _ []*Span) error {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}))
	defer close(release)
	const n = 20
	for i := 0; i < n; i++ {
		require.Equal(t, http.StatusOK, r.post("/v1/chat/completions", chatBody).status)
	}
	sc := r.scrape()
	// One batch of two is held by the blocked pipeline, two wait in the
	// queue.
	assert.GreaterOrEqual(t, value(t, sc, "mlx_spans_dropped_total"), float64(n-4))
	assert.Equal(t, float64(n), value(t, sc, "mlx_requests_total", "streaming", "false", "kind", "chat"))
}

func TestAccessLogLine(t *testing.T) {
	a := AccessRecord{Method: "POST", Path: "/v1/chat/completions", Proto: "HTTP/1.1", Status: 200, ClientAddress: "127.0.0.1"}
	assert.Equal(t, `request: 127.0.0.1 - "POST /v1/chat/completions HTTP/1.1" 200 -`, a.Line())
	a.Status = 0
	assert.Equal(t, `request: 127.0.0.1 - "POST /v1/chat/completions HTTP/1.1" - -`, a.Line())
}

// What one span costs on the request path (start) and in all (start, then
// finish off the request path: attributes, end, hand-over), for a chat
// request with tools and a 300-byte answer.
func BenchmarkSpan(b *testing.B) {
	box := newOutbox[*Span]("spans", 1024, countAll(prometheus.NewCounter(prometheus.CounterOpts{Name: "dropped"})), nil)
	box.attach(func(context.Context, []*Span) error { return nil })
	tr := newTracer(DefaultConfig().Traces, "127.0.0.1:8081", box)
	body := []byte(toolBody)
	p := &Proxy{cfg: DefaultConfig()}
	rec := &Record{Route: RouteChat, parent: context.Background(), Facts: span.Facts{Operation: span.OpChat, Path: "/v1/chat/completions", Start: time.Now(), Origin: OriginUser}}
	pb, err := parseBody(body)
	if err != nil {
		b.Fatal(err)
	}
	p.parseRequest(rec, pb.fields)
	rec.request = requestBody{raw: body, fields: pb.fields}
	rec.Status, rec.Outcome, rec.End, rec.Headers = 200, OutcomeComplete, rec.Start.Add(time.Second), rec.Start
	rec.Usage = &Usage{PromptTokens: 40, CompletionTokens: 20, TotalTokens: 60}
	ch := rec.choice(0)
	ch.appendText(strings.Repeat("The weather in Paris is mild today. ", 8))
	ch.FinishReason = "stop"
	h := &heuristics.Result{Risk: 0.1}
	b.Run("start", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			tr.start(rec)
		}
	})
	b.Run("start+finish", func(b *testing.B) {
		b.ReportAllocs()
		done := make(chan struct{})
		defer close(done)
		go func() { // the collector side, taking what is handed over
			for {
				select {
				case <-box.ch:
				case <-done:
					return
				}
			}
		}()
		for b.Loop() {
			tr.start(rec).finish(h, nil)
		}
	})
}

// Streams and errors do not wait in the scoring queue, and an answer the
// scorer cannot take still has its span, without scores.
func TestSpansDoNotDependOnTheScorer(t *testing.T) {
	r, sink := tracedRig(t)
	r.proxy.scorer.stop() // as full as a queue can be
	require.Equal(t, http.StatusOK, r.post("/v1/chat/completions", chatBody).status)
	a := attrsOf(sink.next(t, 1))
	assert.NotContains(t, a, "mlx.hallucination_risk")
	assert.Contains(t, a, "gen_ai.usage.output_tokens")
	sc := r.scrape()
	assert.Equal(t, 1.0, value(t, sc, "mlx_scoring_dropped_total"))
	assert.Equal(t, 0.0, value(t, sc, "mlx_spans_dropped_total"))
}

// spanBytes is the size of a span's attribute keys and values.
func spanBytes(a map[string]attribute.Value) int {
	n := 0
	for k, v := range a {
		n += len(k) + len(v.Emit())
	}
	return n
}

// Whatever a client puts in a request, a span stays within its bounds,
// and the spans waiting for export hold no more of the request than they
// may.
func TestAClientCannotGrowASpan(t *testing.T) {
	r, sink := tracedRig(t, withConfig(func(c *Config) {
		c.Traces.MaxContentBytes = 4096
		c.ServedModels = []string{AnyModel} // the huge model name goes to the engine
	}))
	huge := strings.Repeat("x", 1<<20)
	body := `{"model": "` + huge + `", "junk": "` + huge + `", "messages": [{"role": "` + huge + `", "name": "` + huge + `", "content": "` + huge + `"}], "max_tokens": 4}`
	r.post("/v1/chat/completions", body)
	a := attrsOf(sink.next(t, 1))
	// Content 4 KiB, every identifier 256 bytes, the parameters 8 KiB.
	assert.Less(t, spanBytes(a), 4096+span.MaxParamsBytes+100*span.MaxIdentBytes+8192)
	assert.True(t, a["mlx.content_truncated"].AsBool())
	assert.Len(t, a["mlx.model"].AsString(), span.MaxIdentBytes)
	settle(r.proxy)
	assert.Zero(t, r.proxy.tracer.held.Load(), "a finished span keeps nothing")
}

func TestALongConversationKeepsItsErrorType(t *testing.T) {
	r := rigWithUpstream(t, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}, nil)
	sink := &spanSink{}
	detachOnCleanup(t, r.proxy.AttachSpans(sink.spansSink))
	var msgs []string
	for i := 0; i < 700; i++ {
		msgs = append(msgs, `{"role": "user", "content": "hi"}`)
	}
	r.post("/v1/chat/completions", `{"messages": [`+strings.Join(msgs, ",")+`]}`)
	got := sink.next(t, 1)
	a := attrsOf(got)
	assert.Equal(t, "500", a["error.type"].AsString())
	assert.True(t, a["mlx.content_truncated"].AsBool())
	assert.LessOrEqual(t, len(a), span.MaxAttributes)
	assert.LessOrEqual(t, len(got.Attributes), span.MaxAttributes, "each key once")
}

func TestSecretsInTheBodyStayOffTheSpan(t *testing.T) {
	r, sink := tracedRig(t)
	r.post("/v1/chat/completions", `{"api_key": "sk-in-the-body", "Authorization": "Bearer sk-2", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}`)
	a := attrsOf(sink.next(t, 1))
	for k, v := range a {
		assert.NotContains(t, v.Emit(), "sk-", k)
	}
	assert.Contains(t, a["input.value"].AsString(), `"api_key":"__REDACTED__"`)
	assert.Contains(t, a["llm.invocation_parameters"].AsString(), `"max_tokens":4`)
}

// With capture off, a pending span keeps none of the request's content
// (span.NewRequest), and what it keeps is counted until it is released.
func TestCaptureOffKeepsNoContent(t *testing.T) {
	tr := newTracer(TraceConfig{CaptureContent: false, MaxContentBytes: 1 << 10, QueueSize: 1}, "127.0.0.1:1",
		newOutbox[*Span]("spans", 1, countAll(prometheus.NewCounter(prometheus.CounterOpts{Name: "d"})), nil))
	body := []byte(`{"model": "m", "max_tokens": 4, ` + toolBody[1:])
	pb, err := parseBody(body)
	require.NoError(t, err)
	rf, held := tr.keep(requestBody{raw: body, fields: pb.fields})
	assert.Positive(t, held)
	assert.Less(t, held, int64(len(body)), "without the messages and the tools")
	assert.Equal(t, int64(rf.Size()), held)
	assert.Equal(t, held, tr.held.Load())
	(&pendingSpan{t: tr, held: held}).release()
	assert.Zero(t, tr.held.Load())
}

// Images: typed image, a long base64 one redacted, all of them under
// HIDE_INPUT_IMAGES; tools under HIDE_LLM_TOOLS; prompts under
// HIDE_PROMPTS.
func TestOpenInferenceImagesToolsAndPrompts(t *testing.T) {
	long := "data:image/png;base64," + strings.Repeat("A", 200)
	body := `{"messages": [{"role": "user", "content": [{"type": "text", "text": "What is this?"},` +
		`{"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},` +
		`{"type": "image_url", "image_url": {"url": "` + long + `"}}]}], "tools": ` + toolsJSON + `}`
	hide := HideConfig{Base64ImageMaxLength: 100}
	r, sink := tracedRig(t, withConfig(func(c *Config) { c.Traces.Hide = hide }))
	r.post("/v1/chat/completions", body)
	a := attrsOf(sink.next(t, 1))
	assert.Equal(t, "image", a["llm.input_messages.0.message.contents.1.message_content.type"].AsString())
	assert.Equal(t, "https://example.com/cat.png", a["llm.input_messages.0.message.contents.1.message_content.image.image.url"].AsString())
	assert.Equal(t, redacted, a["llm.input_messages.0.message.contents.2.message_content.image.image.url"].AsString(), "base64 over the limit")
	assert.Contains(t, a, "llm.tools.0.tool.json_schema")

	hide = HideConfig{InputImages: true, LLMTools: true, Prompts: true}
	r2, sink2 := tracedRig(t, withConfig(func(c *Config) { c.Traces.Hide = hide }))
	r2.post("/v1/chat/completions", body)
	// One at a time: a request's span ends after its client has the
	// answer, so the next request's could end first.
	a = attrsOf(sink2.next(t, 1))
	assert.Equal(t, redacted, a["llm.input_messages.0.message.contents.1.message_content.image.image.url"].AsString())
	assert.Equal(t, "What is this?", a["llm.input_messages.0.message.contents.0.message_content.text"].AsString(), "text is not an image")
	for k := range a {
		assert.False(t, strings.HasPrefix(k, "llm.tools."), k)
	}
	r2.post("/v1/completions", textBody)
	a = attrsOf(sink2.next(t, 2))
	for k := range a {
		assert.False(t, strings.HasPrefix(k, "llm.prompts."), k)
	}
}

// The GenAI request attributes a request has, as the conventions name
// them; OpenInference's user.id and session.id.
func TestGenAIRequestAttributesWhenPresent(t *testing.T) {
	r, sink := tracedRig(t)
	body := `{"model": "default_model", "messages": [{"role": "user", "content": "Say hello"}], "seed": 7, "n": 2,` +
		`"stop": ["END", "STOP"], "frequency_penalty": 0.5, "presence_penalty": -0.5, "top_k": 40,` +
		`"response_format": {"type": "json_object"}, "user": "u-42", "metadata": {"session_id": "conv-9"}, "stream": true}`
	r.post("/v1/chat/completions", body)
	a := attrsOf(sink.next(t, 1))
	assert.Equal(t, int64(7), a["gen_ai.request.seed"].AsInt64())
	assert.Equal(t, int64(2), a["gen_ai.request.choice.count"].AsInt64())
	assert.Equal(t, []string{"END", "STOP"}, a["gen_ai.request.stop_sequences"].AsStringSlice())
	assert.Equal(t, 0.5, a["gen_ai.request.frequency_penalty"].AsFloat64())
	assert.Equal(t, -0.5, a["gen_ai.request.presence_penalty"].AsFloat64())
	assert.Equal(t, 40.0, a["gen_ai.request.top_k"].AsFloat64())
	assert.Equal(t, "json", a["gen_ai.output.type"].AsString())
	assert.True(t, a["gen_ai.request.stream"].AsBool())
	assert.Equal(t, "u-42", a["user.id"].AsString())
	assert.Equal(t, "conv-9", a["session.id"].AsString())
	assert.Equal(t, a["llm.model_name"].AsString(), a["gen_ai.response.model"].AsString(), "one model name")

	r.post("/v1/chat/completions", chatBody)
	a = attrsOf(sink.next(t, 2))
	for _, k := range []string{"gen_ai.request.seed", "gen_ai.request.choice.count", "gen_ai.request.stop_sequences",
		"gen_ai.output.type", "session.id", "gen_ai.request.stream"} {
		assert.NotContains(t, a, k, "absent from a request without it")
	}
	assert.Equal(t, ClientLocal, a["user.id"].AsString(), "without a user, the caller as the front door knows it")
}

// Every choice: chat answers as output messages (reasoning as a content
// part of its own), a text completion's as llm.choices, HIDE_CHOICES
// hiding those.
func TestEveryChoiceAndReasoning(t *testing.T) {
	r, sink := tracedRig(t)
	r.post("/v1/chat/completions", `{"messages": [{"role": "user", "content": "Think"}], "max_tokens": 40, "n": 2, "chat_template_kwargs": {"enable_thinking": true}}`)
	r.post("/v1/completions", `{"prompt": "Once upon a time", "max_tokens": 8}`)
	chat := attrsOf(sink.next(t, 1))
	assert.Equal(t, "reasoning", chat["llm.output_messages.0.message.contents.0.message_content.type"].AsString())
	assert.NotEmpty(t, chat["llm.output_messages.0.message.contents.0.message_content.text"].AsString())
	text := attrsOf(sink.next(t, 2))
	assert.NotEmpty(t, text["llm.choices.0.completion.text"].AsString())
	for k := range text {
		assert.False(t, strings.HasPrefix(k, "llm.output_messages."), "a text completion has choices, not messages: %s", k)
	}

	r2, sink2 := tracedRig(t, withConfig(func(c *Config) { c.Traces.Hide = HideConfig{Choices: true} }))
	r2.post("/v1/completions", `{"prompt": "Once upon a time", "max_tokens": 8}`)
	for k := range attrsOf(sink2.next(t, 1)) {
		assert.False(t, strings.HasPrefix(k, "llm.choices."), k)
	}
}

// An engine that answers two choices (mlx_lm answers one): both are on
// the span.
func TestEveryChoiceOfAnAnswer(t *testing.T) {
	r := rigWithUpstream(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id": "c1", "model": "m", "object": "chat.completion", "choices": [` +
			`{"index": 0, "message": {"role": "assistant", "content": "first"}, "finish_reason": "stop"},` +
			`{"index": 1, "message": {"role": "assistant", "content": "second"}, "finish_reason": "length"}],` +
			`"usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5, "completion_tokens_details": {"reasoning_tokens": 1}}}`))
	}, nil)
	sink := &spanSink{}
	detachOnCleanup(t, r.proxy.AttachSpans(sink.spansSink))
	r.post("/v1/chat/completions", `{"messages": [{"role": "user", "content": "Two"}], "n": 2}`)
	a := attrsOf(sink.next(t, 1))
	assert.Equal(t, "first", a["llm.output_messages.0.message.content"].AsString())
	assert.Equal(t, "second", a["llm.output_messages.1.message.content"].AsString())
	assert.Equal(t, "assistant", a["llm.output_messages.1.message.role"].AsString())
	assert.Equal(t, int64(2), a["gen_ai.request.choice.count"].AsInt64())
	assert.Equal(t, int64(1), a["llm.token_count.completion_details.reasoning"].AsInt64(), "reasoning tokens, when the engine counts them")
	assert.Equal(t, int64(1), a["gen_ai.usage.reasoning.output_tokens"].AsInt64())
}

// X-Session-Id names the conversation (before the body's
// metadata.session_id).
func TestSessionFromTheHeader(t *testing.T) {
	r, sink := tracedRig(t)
	r.do(r.url, http.MethodPost, "/v1/chat/completions", `{"messages": [{"role": "user", "content": "Hi"}], "metadata": {"session_id": "body"}}`, "X-Session-Id", "conv-1")
	a := attrsOf(sink.next(t, 1))
	assert.Equal(t, "conv-1", a["session.id"].AsString())
	assert.Equal(t, "conv-1", a["gen_ai.conversation.id"].AsString(), "the GenAI key says the same")
	assert.Equal(t, "local", a["user.id"].AsString(), "no user: the caller's client label")
}

// Without the header, the body's metadata.session_id is the conversation,
// and its user the user.
func TestSessionAndUserFromTheBody(t *testing.T) {
	r, sink := tracedRig(t)
	r.do(r.url, http.MethodPost, "/v1/chat/completions", `{"messages": [{"role": "user", "content": "Hi"}], "metadata": {"session_id": "body-7"}, "user": "ana"}`)
	a := attrsOf(sink.next(t, 1))
	assert.Equal(t, "body-7", a["session.id"].AsString())
	assert.Equal(t, "body-7", a["gen_ai.conversation.id"].AsString())
	assert.Equal(t, "ana", a["user.id"].AsString())
	assert.Equal(t, OriginUser, a["mlx.origin"].AsString())
}
