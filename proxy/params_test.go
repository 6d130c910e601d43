package proxy

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/internal/modelconfig"
)

// paramRig is a proxy in front of a recording engine, with the facts of a
// model of vocabulary 1000 and context 100 whose tokens are at most 10
// bytes, and its options.
func paramRig(t *testing.T, configure ...func(*Config)) (*rig, *recordingEngine) {
	t.Helper()
	var e recordingEngine
	r := rigWithUpstream(t, e.handler, served(configure...))
	r.proxy.limits.Store(&modelLimits{vocab: 1000, context: 100, prompt: &tokenBound{maxTokenBytes: 10}})
	return r, &e
}

const userHi = `"messages": [{"role": "user", "content": "hi"}]`

// Every value mlx_lm v0.31.3 validate_model_parameters accepts passes,
// and reaches the engine byte for byte; every value it refuses (which
// would drop the connection), and every value that would kill its
// generation thread, is the proxy's 400 naming the parameter.
func TestParametersAsTheEngineValidatesThem(t *testing.T) {
	r, e := paramRig(t)
	good := []string{
		`"stream": false`, `"stream": true, "stream_options": {"include_usage": true}, "logprobs": true, "top_logprobs": 3`,
		`"temperature": 0`, `"temperature": 0.7`, `"temperature": 2`, `"temperature": true`, `"temperature": -0.0`,
		`"top_p": 0`, `"top_p": 1`, `"top_p": 0.95`, `"top_p": 1.0`,
		`"top_k": 0`, `"top_k": 40`, `"top_k": 999`, `"top_k": true`,
		`"min_p": 0.05`, `"min_p": 1`,
		`"num_draft_tokens": 3`,
		`"repetition_penalty": 1.1`, `"repetition_penalty": 1`, `"repetition_context_size": 64`,
		`"presence_penalty": -1.5`, `"presence_penalty": 2`, `"presence_context_size": 0`, `"presence_context_size": 2147483647`,
		`"frequency_penalty": -2`, `"frequency_penalty": 0.5`, `"frequency_penalty": -2147483648`, `"presence_penalty": 2147483647`, `"presence_penalty": 1e300`, `"frequency_context_size": 20`,
		`"logprobs": true`, `"logprobs": false`,
		`"top_logprobs": -1`, `"top_logprobs": 0`, `"top_logprobs": 11`,
		`"xtc_probability": 0.0`, `"xtc_threshold": 0.9`, `"xtc_probability": 0.0, "xtc_threshold": 0.1`,
		`"seed": 42`, `"seed": null`, `"seed": 0`, `"seed": -0`, `"seed": 18446744073709551615`, `"seed": true`,
		`"logit_bias": null`, `"logit_bias": {}`, `"logit_bias": {"5": -100, "999": 2.5, "0": true, "7": NaN}`,
		`"max_tokens": null, "max_completion_tokens": 5`, `"max_completion_tokens": null`,
		`"stop": "\ud83d\ude00"`, `"prompt_suffix": 12345678901234567890`,
	}
	for _, g := range good {
		body := `{` + userHi + `, ` + g + `}`
		resp := r.post(chatPath, body)
		assert.Equal(t, http.StatusOK, resp.status, "%s: %s", g, resp.body)
	}
	seen := e.seen()
	require.Len(t, seen, len(good))
	for i, g := range good {
		assert.Equal(t, `{`+userHi+`, `+g+`}`, seen[i], "passed unchanged")
	}

	for _, c := range []struct{ member, param, code string }{
		{`"stream": null`, "stream", "invalid_type"},
		{`"stream": 1`, "stream", "invalid_type"},
		{`"stream": "yes"`, "stream", "invalid_type"},
		{`"temperature": "hot"`, "temperature", "invalid_type"},
		{`"temperature": null`, "temperature", "invalid_type"},
		{`"temperature": -0.1`, "temperature", "invalid_value"},
		{`"top_p": 2`, "top_p", "invalid_value"},
		{`"top_p": -1e-9`, "top_p", "invalid_value"},
		{`"top_p": [0.5]`, "top_p", "invalid_type"},
		{`"top_k": 1.0`, "top_k", "invalid_type"},
		{`"top_k": -1`, "top_k", "invalid_value"},
		{`"top_k": 1000`, "top_k", "invalid_value"},
		{`"top_k": 99999999999999999999999`, "top_k", "invalid_value"},
		{`"min_p": 1.5`, "min_p", "invalid_value"},
		{`"min_p": "0.1"`, "min_p", "invalid_type"},
		{`"num_draft_tokens": -1`, "num_draft_tokens", "invalid_value"},
		{`"num_draft_tokens": 2.0`, "num_draft_tokens", "invalid_type"},
		{`"repetition_penalty": -0.5`, "repetition_penalty", "invalid_value"},
		{`"repetition_context_size": 1.5`, "repetition_context_size", "invalid_type"},
		{`"repetition_context_size": -1`, "repetition_context_size", "invalid_value"},
		{`"presence_penalty": {}`, "presence_penalty", "invalid_type"},
		{`"presence_penalty": 2147483648`, "presence_penalty", "invalid_value"},
		{`"frequency_penalty": -2147483649`, "frequency_penalty", "invalid_value"},
		{`"repetition_penalty": 100000000000000000000`, "repetition_penalty", "invalid_value"},
		{`"repetition_context_size": 2147483648`, "repetition_context_size", "invalid_value"},
		{`"presence_context_size": 99999999999999999999`, "presence_context_size", "invalid_value"},
		{`"presence_context_size": -3`, "presence_context_size", "invalid_value"},
		{`"frequency_penalty": null`, "frequency_penalty", "invalid_type"},
		{`"frequency_context_size": "20"`, "frequency_context_size", "invalid_type"},
		{`"logprobs": 1`, "logprobs", "invalid_type"},
		{`"logprobs": null`, "logprobs", "invalid_type"},
		{`"top_logprobs": 20`, "top_logprobs", "invalid_value"},
		{`"top_logprobs": -2`, "top_logprobs", "invalid_value"},
		{`"top_logprobs": 3.0`, "top_logprobs", "invalid_type"},
		{`"xtc_probability": 0`, "xtc_probability", "invalid_type"},
		{`"xtc_probability": 0.5`, "xtc_probability", "unsupported_parameter"},
		{`"xtc_probability": 1.5`, "xtc_probability", "invalid_value"},
		{`"xtc_threshold": 0`, "xtc_threshold", "invalid_type"},
		{`"xtc_threshold": 1.1`, "xtc_threshold", "invalid_value"},
		{`"seed": "x"`, "seed", "invalid_type"},
		{`"seed": 1.5`, "seed", "invalid_type"},
		{`"seed": -1`, "seed", "invalid_value"},
		{`"seed": 18446744073709551616`, "seed", "invalid_value"},
		{`"logit_bias": [1]`, "logit_bias", "invalid_type"},
		{`"logit_bias": {"x": 1}`, "logit_bias", "invalid_value"},
		{`"logit_bias": {"1_0": 1}`, "logit_bias", "invalid_value"},
		{`"logit_bias": {"-1": 1}`, "logit_bias", "invalid_value"},
		{`"logit_bias": {"1000": 1}`, "logit_bias", "invalid_value"},
		{`"logit_bias": {"1": null}`, "logit_bias", "invalid_type"},
		{`"logit_bias": {"1": "2"}`, "logit_bias", "invalid_type"},
		{`"logit_bias": {"1": [2]}`, "logit_bias", "invalid_type"},
		{`"max_tokens": null`, "max_tokens", "invalid_type"},
		{`"max_tokens": null, "max_completion_tokens": null`, "max_tokens", "invalid_type"},
		{`"stop": "\ud800"`, "stop", "invalid_value"},
		{`"stop": ["a", "\udc00b"]`, "stop", "invalid_value"},
		{`"stop": "\ud800\ud800"`, "stop", "invalid_value"},
		{`"tools": [{"type": "function", "function": {"name": "f", "description": "x\ud83dy"}}]`, "tools", "invalid_value"},
		{`"seed": 1` + strings.Repeat("0", 4300), "seed", "invalid_value"},
		{`"x": [-` + strings.Repeat("9", 4301) + `]`, "x", "invalid_value"},
	} {
		t.Run(c.member, func(t *testing.T) {
			resp := r.post(chatPath, `{`+userHi+`, `+c.member+`}`)
			require.Equal(t, http.StatusBadRequest, resp.status, string(resp.body))
			eo := errorOf(t, resp)
			assert.Equal(t, c.code, eo["code"])
			assert.Equal(t, c.param, eo["param"])
			assert.Equal(t, "invalid_request_error", eo["type"])
			assert.Contains(t, eo["message"], c.param)
		})
	}
	// A lone surrogate in the prompt or a message names its member.
	for path, body := range map[string]string{
		"/v1/completions": `{"prompt": "a\udfffb"}`,
		chatPath:          `{"messages": [{"role": "user", "content": "\ud800 x"}]}`,
	} {
		resp := r.post(path, body)
		require.Equal(t, http.StatusBadRequest, resp.status)
		assert.Equal(t, strings.Trim(strings.SplitN(body, ":", 2)[0], `{"`), errorOf(t, resp)["param"])
	}
	// An integer of exactly 4300 digits is Python's, and passes (in a
	// member of the client's own; a seed or a penalty has MLX's bound).
	resp := r.post(chatPath, `{`+userHi+`, "prompt_suffix": 1`+strings.Repeat("0", 4299)+`}`)
	assert.Equal(t, http.StatusOK, resp.status)
	assert.Len(t, e.seen(), len(good)+1, "no refused body reached the engine")
}

// Without the model's facts, top_k and logit_bias have no upper bound;
// with allow_xtc, XTC passes, but a threshold apply_xtc refuses does not.
func TestParameterBoundsFollowTheModelAndConfig(t *testing.T) {
	var e recordingEngine
	r := rigWithUpstream(t, e.handler, served(func(c *Config) { c.Requests.AllowXTC = true }))
	for _, m := range []string{`"top_k": 100000`, `"logit_bias": {"150000": 1}`, `"xtc_probability": 0.5, "xtc_threshold": 0.1`, `"xtc_probability": 1.0`} {
		assert.Equal(t, http.StatusOK, r.post(chatPath, `{`+userHi+`, `+m+`}`).status, m)
	}
	resp := r.post(chatPath, `{`+userHi+`, "xtc_probability": 0.5, "xtc_threshold": 0.6}`)
	require.Equal(t, http.StatusBadRequest, resp.status)
	assert.Equal(t, "xtc_threshold", errorOf(t, resp)["param"])
	assert.Len(t, e.seen(), 4)
}

// A prompt whose lower bound of tokens is over the context is refused with
// context_length_exceeded; one at the bound passes, and only the text the
// tokenizer surely sees counts.
func TestPromptOverTheContext(t *testing.T) {
	r, e := paramRig(t)
	at := strings.Repeat("x", 1000) // 100 tokens at least: the context
	over := at + "y"
	pass := []struct{ path, body string }{
		{"/v1/completions", `{"prompt": "` + at + `"}`},
		{chatPath, `{"messages": [{"role": "user", "content": "` + at + `"}]}`},
		{chatPath, `{"messages": [{"role": "user", "content": "  ` + at + `\n\n"}]}`},
		{chatPath, `{"messages": [{"role": "assistant", "content": "` + over + `"}, {"role": "user", "content": "hi"}]}`},
		{chatPath, `{"messages": [{"role": "system", "content": "` + over + `"}, {"role": "user", "content": "hi"}]}`},
		{chatPath, `{"messages": [{"role": "user", "content": [{"type": "text", "text": "` + at[:500] + `"}, {"type": "text", "text": "` + at[500:] + `"}]}]}`},
	}
	for _, c := range pass {
		assert.Equal(t, http.StatusOK, r.post(c.path, c.body).status, c.body[:40])
	}
	for _, c := range []struct{ path, body, param string }{
		{"/v1/completions", `{"prompt": "` + over + `"}`, "prompt"},
		{chatPath, `{"messages": [{"role": "user", "content": "` + over + `"}]}`, "messages"},
		{chatPath, `{"messages": [{"role": "user", "content": "` + at + `"}, {"role": "user", "content": "z"}]}`, "messages"},
		{chatPath, `{"messages": [{"role": "user", "content": [{"type": "text", "text": "` + at + `"}, {"type": "text", "text": "y"}]}]}`, "messages"},
	} {
		resp := r.post(c.path, c.body)
		require.Equal(t, http.StatusBadRequest, resp.status, string(resp.body))
		eo := errorOf(t, resp)
		assert.Equal(t, "context_length_exceeded", eo["code"])
		assert.Equal(t, c.param, eo["param"])
		assert.Contains(t, eo["message"], "maximum context length is 100 tokens")
	}
	assert.Len(t, e.seen(), len(pass))
	sc := r.scrape()
	assert.Equal(t, 4.0, value(t, sc, "mlx_http_refusals_total", "route", "chat_completions", "status", "400")+
		value(t, sc, "mlx_http_refusals_total", "route", "completions", "status", "400"), "counted as refusals")
}

// The bound counts the text as the tokenizer's normalizer leaves it: NFC
// makes 9 bytes of Hangul jamo one syllable of 3.
func TestTokenBoundNormalizes(t *testing.T) {
	b := newTokenBound(modelconfigTokenizer(10, "NFC"))
	jamo := strings.Repeat("\u1100\u1161\u11a8", 10) // 90 bytes, 30 bytes in NFC
	assert.Equal(t, 3, b.tokensAtLeast([]string{jamo}))
	assert.Equal(t, 9, newTokenBound(modelconfigTokenizer(10)).tokensAtLeast([]string{jamo}))
	assert.Equal(t, 1, b.tokensAtLeast([]string{"a"}))
	assert.Equal(t, 0, b.tokensAtLeast(nil))
}

func TestBodyHazardNamesTheMember(t *testing.T) {
	for body, want := range map[string]string{
		`{"a": 1, "b": "\ud800"}`:                    "b",
		`{"a\udc00": 1}`:                             "a\ufffd",
		`{"a": "\\ud800"}`:                           "",
		`{"n": 1e` + strings.Repeat("9", 5000) + `}`: "",
		fmt.Sprintf(`{"a": {"b": [%s]}}`, strings.Repeat("1", 4301)): "a",
	} {
		ref, refused := bodyHazard([]byte(body))
		if want == "" {
			assert.False(t, refused, body)
			continue
		}
		require.True(t, refused, body)
		assert.Equal(t, want, ref.param)
	}
}

func modelconfigTokenizer(maxBytes int, forms ...string) modelconfig.Tokenizer {
	return modelconfig.Tokenizer{MaxTokenBytes: maxBytes, Normalizers: forms}
}
