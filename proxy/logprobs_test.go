package proxy

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
)

func withConfig(f func(*Config)) rigOption {
	return func(c *Config, _ *mlxsim.Options) { f(c) }
}

// A non-streamed chat request that did not ask for logprobs is scored from
// logprobs the proxy asked for, and the client gets exactly what the
// engine would have sent without them, with a Content-Length that fits.
// Tool calls survive the strip.
func TestInjectedLogprobsNeverReachTheClient(t *testing.T) {
	r := newRig(t)
	for _, body := range []string{chatBody, toolBody, withTemperature(chatBody, "0.8")} {
		want := r.do(r.direct, http.MethodPost, "/v1/chat/completions", body)
		got := r.post("/v1/chat/completions", body)
		require.Equal(t, http.StatusOK, got.status)
		assert.Equal(t, normalize(want.body), normalize(got.body), "the answer without the injected logprobs")
		assert.NotContains(t, string(got.body), "logprobs")
		assert.Equal(t, strconv.Itoa(len(got.body)), got.header.Get("Content-Length"))
	}
	sc := r.scrape()
	assert.Equal(t, 3.0, value(t, sc, "mlx_confidence_scored_total", "source", "injected"))
	assert.Equal(t, 1.0, value(t, sc, "mlx_tool_calls_total", "tool", "get_weather"), "the tool call was read before the strip")
	for _, g := range []string{"mlx_output_perplexity", "mlx_token_confidence_mean", "mlx_token_confidence_min", "mlx_token_margin_mean", "mlx_token_entropy_nats"} {
		v := value(t, sc, g)
		assert.False(t, v < 0 || v != v, "%s = %v", g, v)
	}
	p := value(t, sc, "mlx_output_perplexity")
	assert.GreaterOrEqual(t, p, 1.0)
	c := value(t, sc, "mlx_token_confidence_mean")
	assert.True(t, c > 0 && c <= 1, "confidence %v", c)
	assert.LessOrEqual(t, value(t, sc, "mlx_token_confidence_min"), c)
}

// A client that asks for logprobs gets the engine's own, untouched, and
// its answer is scored as source client.
func TestClientLogprobsPassThrough(t *testing.T) {
	r := newRig(t)
	for _, extra := range []string{`"logprobs": true`, `"logprobs": true, "top_logprobs": 4`, `"top_logprobs": 2`} {
		body := strings.Replace(chatBody, `{`, `{`+extra+`, `, 1)
		want := r.do(r.direct, http.MethodPost, "/v1/chat/completions", body)
		got := r.post("/v1/chat/completions", body)
		require.Equal(t, http.StatusOK, got.status)
		assert.Equal(t, normalize(want.body), normalize(got.body), extra)
		assert.Contains(t, string(got.body), `"logprobs": {"content": [`)
	}
	sc := r.scrape()
	assert.Equal(t, 3.0, value(t, sc, "mlx_confidence_scored_total", "source", "client"))
	assert.Equal(t, 0.0, value(t, sc, "mlx_confidence_scored_total", "source", "injected"))
}

// top_logprobs 0 turns injection off: requests and answers are the
// client's and the engine's, nothing is scored, the heuristics still are.
func TestInjectionDisabled(t *testing.T) {
	r := newRig(t, withConfig(func(c *Config) { c.TopLogprobs = 0 }))
	want := r.do(r.direct, http.MethodPost, "/v1/chat/completions", chatBody)
	got := r.post("/v1/chat/completions", chatBody)
	assert.Equal(t, normalize(want.body), normalize(got.body))
	sc := r.scrape()
	for _, src := range []string{"client", "injected", "destreamed"} {
		assert.Equal(t, 0.0, value(t, sc, "mlx_confidence_scored_total", "source", src))
	}
	_, ok := sc.Value("mlx_output_perplexity")
	assert.False(t, ok, "nothing scored, nothing reported")
	value(t, sc, "mlx_hallucination_risk", "kind", "chat")
}

// An engine error to a request the proxy added logprobs to reaches the
// client as the engine sent it.
func TestInjectedRequestErrorsPassThrough(t *testing.T) {
	r := newRig(t, withConfig(func(c *Config) { c.ServedModels = []string{AnyModel} }))
	body := `{"model": "nobody/nothing", "messages": [{"role": "user", "content": "x"}]}`
	want := r.do(r.direct, http.MethodPost, "/v1/chat/completions", body)
	got := r.post("/v1/chat/completions", body)
	require.Equal(t, http.StatusNotFound, want.status)
	assert.Equal(t, want.status, got.status)
	assert.Equal(t, string(want.body), string(got.body))
	assert.Equal(t, want.header.Get("Content-Type"), got.header.Get("Content-Type"))
}

// Streams are relayed untouched while destreaming is off (the default).
func TestStreamsUntouchedWithoutSampling(t *testing.T) {
	r := newRig(t)
	require.Zero(t, DefaultConfig().DestreamFraction)
	for _, body := range []string{chatUsageBody, toolStreamBody, reasoningBody} {
		want := r.do(r.direct, http.MethodPost, "/v1/chat/completions", body)
		got := r.post("/v1/chat/completions", body)
		assert.Equal(t, normalize(want.body), normalize(got.body))
	}
}

// A destreamed request reaches the client as the stream the engine would
// have sent: the same chunks' content, reasoning and tool calls (with
// index), the finish reason, usage only when asked, then [DONE]. It is
// scored, and times its queue wait but no TTFT nor admission wait.
func TestDestreamedRequestsParseAsTheEngineStream(t *testing.T) {
	r := newRig(t, withConfig(func(c *Config) { c.DestreamFraction = 1 }))
	for _, body := range []string{chatStreamBody, chatUsageBody, toolStreamBody, reasoningBody} {
		twin, _ := withUsageRequestedString(body)
		want := streamOf(t, r.do(r.direct, http.MethodPost, "/v1/chat/completions", twin), strings.Contains(body, `"include_usage": true`))
		resp := r.post("/v1/chat/completions", body)
		require.Equal(t, http.StatusOK, resp.status)
		assert.Equal(t, "text/event-stream", resp.header.Get("Content-Type"))
		got := streamOf(t, resp, true)
		assert.Equal(t, want, got, body)
		assert.True(t, strings.HasSuffix(string(resp.body), "data: [DONE]\n\n"))
		assert.NotContains(t, string(resp.body), "logprobs")
	}
	sc := r.scrape()
	assert.Equal(t, 4.0, value(t, sc, "mlx_confidence_scored_total", "source", "destreamed"))
	assert.Equal(t, 4.0, value(t, sc, "mlx_requests_total", "streaming", "true", "kind", "chat")+value(t, sc, "mlx_requests_total", "streaming", "true", "kind", "reasoning"))
	assert.Nil(t, sc.Families["mlx_ttft_seconds"], "no TTFT")
	assert.Nil(t, sc.Families["mlx_admission_wait_seconds"], "no admission wait: the headers came with the answer")
	assert.Equal(t, 4.0, value(t, sc, "mlx_queue_wait_seconds"), "queue wait, as for every completion")
	assert.Positive(t, value(t, sc, "mlx_tokens_completion_total", "kind", "chat"))
}

// stream is what a streaming client makes of a stream.
type stream struct {
	Model, Object       string
	Content, Reasoning  string
	ToolCalls           []string // name(arguments)@index
	Finish              string
	Usage               bool
	Done, DoneLast      bool
	ChunksAfterFinish   int
	FingerprintConstant bool
}

func streamOf(t *testing.T, resp response, keepUsage bool) stream {
	t.Helper()
	var s stream
	fingerprints := map[string]bool{}
	events := sseEvents(resp.body)
	for i, ev := range events {
		data, ok := strings.CutPrefix(strings.TrimSpace(ev), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			s.Done, s.DoneLast = true, i == len(events)-1
			continue
		}
		var c struct {
			Choices []struct {
				Index        int     `json:"index"`
				FinishReason *string `json:"finish_reason"`
				Delta        struct {
					Content, Reasoning string
					ToolCalls          []struct {
						Index    *int `json:"index"`
						Function struct{ Name, Arguments string }
					} `json:"tool_calls"`
				} `json:"delta"`
			} `json:"choices"`
			Usage json.RawMessage `json:"usage"`
		}
		require.NoError(t, json.Unmarshal([]byte(data), &c), data)
		var raw map[string]any
		require.NoError(t, json.Unmarshal([]byte(data), &raw))
		s.Model = raw["model"].(string)
		fingerprints[raw["system_fingerprint"].(string)] = true
		if len(c.Usage) > 0 {
			if keepUsage {
				s.Usage = true
			}
			continue
		}
		s.Object = raw["object"].(string)
		if s.Finish != "" {
			s.ChunksAfterFinish++
		}
		for _, ch := range c.Choices {
			s.Content += ch.Delta.Content
			s.Reasoning += ch.Delta.Reasoning
			for _, tc := range ch.Delta.ToolCalls {
				require.NotNil(t, tc.Index, "a streamed tool call has its index")
				s.ToolCalls = append(s.ToolCalls, tc.Function.Name+"("+tc.Function.Arguments+")@"+strconv.Itoa(*tc.Index))
			}
			if ch.FinishReason != nil {
				s.Finish = *ch.FinishReason
			}
		}
	}
	s.FingerprintConstant = len(fingerprints) == 1
	return s
}

func withTemperature(body, temp string) string {
	return strings.Replace(body, `{`, `{"temperature": `+temp+`, `, 1)
}

// Python writes -Infinity for a logprob of -inf: the answer is still read
// (usage counted) and stripped, and the token is skipped in the score.
func TestPythonNonFiniteLiteralsInAnAnswer(t *testing.T) {
	answer := `{"id": "chatcmpl-1", "object": "chat.completion", "model": "m", "created": 1, "choices": [{"index": 0, "finish_reason": "stop", "logprobs": {"content": [{"id": 9, "logprob": -Infinity}, {"id": 10, "logprob": -0.5}]}, "message": {"role": "assistant", "content": "Hi there"}}], "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}`
	r := rigWithUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(answer))
	}, nil)
	got := r.post("/v1/chat/completions", `{"messages": [{"role": "user", "content": "x"}]}`)
	require.Equal(t, http.StatusOK, got.status)
	assert.Equal(t, `{"id": "chatcmpl-1", "object": "chat.completion", "model": "m", "created": 1, "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Hi there"}}], "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}`, string(got.body))
	sc := r.scrape()
	assert.Equal(t, 2.0, value(t, sc, "mlx_tokens_completion_total", "kind", "chat"))
	assert.Equal(t, 1.0, value(t, sc, "mlx_confidence_scored_total", "source", "injected"))
	assert.InDelta(t, 1.6487, value(t, sc, "mlx_output_perplexity"), 1e-3, "exp(0.5): the -inf token is not scored")
}

// An answer to a destreamed request that is no completion cannot become a
// stream: the client gets a 502 that says so, and nothing of it is counted
// as an answer.
func TestDestreamedAnswerThatIsNoCompletion(t *testing.T) {
	r := rigWithUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"choices": [1], "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}`))
	}, func(c *Config) { c.DestreamFraction = 1 })
	got := r.post("/v1/chat/completions", `{"messages": [{"role": "user", "content": "x"}], "stream": true}`)
	assert.Equal(t, http.StatusBadGateway, got.status)
	var e struct {
		Error struct{ Code, Message string }
	}
	require.NoError(t, json.Unmarshal(got.body, &e))
	assert.Equal(t, "restream_failed", e.Error.Code)
	assert.Contains(t, e.Error.Message, "could not be re-streamed")
	sc := r.scrape()
	assert.Equal(t, 0.0, value(t, sc, "mlx_tokens_completion_total", "kind", "chat"))
	assert.Equal(t, 1.0, value(t, sc, "mlx_error_total", "status", "5xx", "kind", "chat"))
}

// An engine that streams logprobs (one value per chunk, as OpenAI and vLLM
// do) is scored like mlx_lm's non-streamed answers, and the client's
// stream passes untouched.
func TestStreamedLogprobsOfOtherEnginesAreScored(t *testing.T) {
	chunk := func(content string, lp float64) string {
		return `data: {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "` + content +
			`"}, "logprobs": {"content": [{"token": "` + content + `", "logprob": ` + strconv.FormatFloat(lp, 'f', -1, 64) +
			`, "bytes": [], "top_logprobs": []}]}, "finish_reason": null}]}` + "\n\n"
	}
	stream := chunk("Hi", -0.6931471805599453) + chunk(" there", 0) +
		`data: {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}` + "\n\n" +
		`data: {"id": "c", "object": "chat.completion.chunk", "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}` + "\n\n" +
		"data: [DONE]\n\n"
	r := rigWithUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(stream))
	}, nil)
	got := r.post("/v1/chat/completions", `{"messages": [{"role": "user", "content": "x"}], "stream": true, "stream_options": {"include_usage": true}, "logprobs": true}`)
	require.Equal(t, http.StatusOK, got.status)
	assert.Equal(t, stream, string(got.body))
	sc := r.scrape()
	assert.Equal(t, 1.0, value(t, sc, "mlx_confidence_scored_total", "source", "client"))
	assert.InDelta(t, 1.4142, value(t, sc, "mlx_output_perplexity"), 1e-3, "exp(ln2 / 2)")
	assert.InDelta(t, 0.75, value(t, sc, "mlx_token_confidence_mean"), 1e-9)
}
