package mlxsim

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The mlx-lm versions within a pair (versions.go): each rule of the two
// eras, and the thread deaths both share.

func TestMLXLMVersionsPairWithMLX(t *testing.T) {
	assert.NoError(t, CheckVersions("", ""))
	assert.NoError(t, CheckVersions("0.32.1", "0.32.0"))
	assert.NoError(t, CheckVersions("0.31", "0.31.3"))
	assert.ErrorContains(t, CheckVersions("0.32.0", "0.32.0"), "needs mlx>=0.32.1")
	assert.ErrorContains(t, CheckVersions("0.30", "0.31.3"), "needs mlx>=0.31.2")
	assert.Error(t, CheckVersions("", "0.30.7"))
	assert.Error(t, CheckVersions("", "0.33.0"))
	assert.Equal(t, "0.32.0-0.32.1-"+fingerprintTail, FingerprintOf("", "0.32.0"))
	assert.Equal(t, DefaultSystemFingerprint, FingerprintOf("", DefaultMLXLMVersion))
}

// xtc_threshold's default: 0.0 in 0.31.3 (server.py, do_POST), 0.1 from
// cf10f962 (#1372).
func TestXTCThresholdDefault(t *testing.T) {
	body := mustDict(t, `{"messages": []}`)
	assert.Equal(t, 0.0, New(Options{MLXLMVersion: "0.31.3"}, nil).readRequest(body).xtcThresh)
	assert.Equal(t, 0.1, New(Options{MLXLMVersion: "0.32.0"}, nil).readRequest(body).xtcThresh)
}

const (
	xtcChat  = `{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 5, "temperature": 1.0, "xtc_probability": 0.5, "xtc_threshold": 0.1}`
	topKChat = `{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 5, "temperature": 0.7, "top_k": 151936}`
)

// ml-explore/mlx-lm#1257: under 0.31.3 any XTC request (temperature > 0)
// kills the generation thread in batch_generator.next(); 0.32.0's flat
// token list (15b522f5) serves it.
func TestXTCKillsTheThreadOnlyUnder0313(t *testing.T) {
	ts := newTestServer(t, Options{MLXLMVersion: "0.31.3"})
	assert.True(t, noAnswer(t, ts, xtcChat))
	require.True(t, ts.e.ThreadDead())
	log := ts.log.String()
	assert.Contains(t, log, "Exception in thread Thread-1 (_generate):\nTraceback (most recent call last):\n")
	assert.Contains(t, log, "in _generate\n    prompt_responses, gen_responses = batch_generator.next()\n")
	assert.Contains(t, log, "in apply_xtc\n    mask[..., xtc_special_tokens] = False\n")
	assert.True(t, strings.HasSuffix(log, "ValueError: Initialization encountered extra dimension.\n"), log)
	assert.Equal(t, 200, ts.get(t, "/health").status, "0.31.3's /health does not know")
	assert.True(t, noAnswer(t, ts, userHi), "a later request waits")

	ok := newTestServer(t, Options{MLXLMVersion: "0.32.0"})
	assert.Equal(t, 200, ok.chat(t, xtcChat).status)
	assert.False(t, ok.e.ThreadDead())
	// At temperature 0 make_sampler is argmax: no XTC, no death.
	cold := newTestServer(t, Options{MLXLMVersion: "0.31.3"})
	assert.Equal(t, 200, cold.chat(t, strings.Replace(xtcChat, `"temperature": 1.0`, `"temperature": 0.0`, 1)).status)
	assert.False(t, cold.e.ThreadDead())
}

// apply_top_k raises for top_k >= the vocabulary, and apply_xtc for a
// threshold over 0.5, in both eras.
func TestSamplerChecksKillTheThreadInBothEras(t *testing.T) {
	for _, v := range []string{"0.31.3", "0.32.0"} {
		// The request had the thread (its context, headers): no era
		// answers it.
		ts := newTestServer(t, Options{MLXLMVersion: v})
		assert.True(t, noAnswer(t, ts, topKChat), v)
		require.True(t, ts.e.ThreadDead(), v)
		assert.Contains(t, ts.log.String(), "ValueError: `top_k` has to be an integer in the (0, 151936] interval, but is 151936.\n", v)
		assert.Contains(t, ts.log.String(), "in apply_top_k\n", v)
		ts = newTestServer(t, Options{MLXLMVersion: v})
		assert.True(t, noAnswer(t, ts, strings.Replace(xtcChat, `"xtc_threshold": 0.1`, `"xtc_threshold": 0.7`, 1)), v)
		require.True(t, ts.e.ThreadDead(), v)
		assert.Contains(t, ts.log.String(), "ValueError: `threshold` has to be a float in the [0, 0.5] interval, but is 0.7\n", v)
	}
	// A top_k below the vocabulary is fine.
	ts := newTestServer(t, Options{})
	assert.Equal(t, 200, ts.chat(t, strings.Replace(topKChat, "151936", "151935", 1)).status)
	// _serve_single (a seed) catches it: no answer for that request, the
	// socketserver traceback, and the thread lives.
	ts.chat(t, strings.Replace(topKChat, `"top_k"`, `"seed": 3, "top_k"`, 1))
	assert.False(t, ts.e.ThreadDead())
	assert.Contains(t, ts.log.String(), "Exception occurred during processing of request from")
	assert.Equal(t, 200, ts.chat(t, userHi).status)
}

// A lone surrogate in stop fails in tokenizer.encode (v0.31.3 server.py,
// _make_state_machine), outside the try: the thread dies (both eras
// tokenize stop words).
func TestLoneSurrogateStopKillsTheThread(t *testing.T) {
	ts := newTestServer(t, Options{})
	assert.True(t, noAnswer(t, ts, `{"messages": [{"role": "user", "content": "hi"}], "stop": ["\ud800"]}`))
	require.True(t, ts.e.ThreadDead())
	assert.Contains(t, ts.log.String(), "in _make_state_machine\n")
	assert.Contains(t, ts.log.String(), "TypeError: TextEncodeInput must be Union[TextInputSequence, Tuple[InputSequence, InputSequence]]\n")
	// A surrogate pair is a character like any other.
	ok := newTestServer(t, Options{})
	assert.Equal(t, 200, ok.chat(t, `{"messages": [{"role": "user", "content": "hi"}], "stop": ["\ud83d\ude00"]}`).status)
}

// 0.32.0 (#1791, #1837): once the thread is dead /health and /v1/models
// answer 503, and completions waiting for it, or arriving later, are
// answered 404 {"error": ...} at once; the log has the wrapper's record,
// not threading.excepthook's line.
func TestDeadThreadIsVisibleUnder0320(t *testing.T) {
	ts := newTestServer(t, Options{MLXLMVersion: "0.32.0"})
	require.Equal(t, 200, ts.get(t, "/health").status)
	r := ts.chat(t, `{"messages": [{"role": "user", "content": "hi"}], "stop": [1]}`)
	require.True(t, ts.e.ThreadDead())
	assert.Equal(t, 404, r.status, "the request that killed it is failed too")
	h := ts.get(t, "/health")
	assert.Equal(t, 503, h.status)
	assert.Equal(t, unhealthyBody, h.body)
	assert.Equal(t, 503, ts.get(t, "/v1/models").status)
	later := ts.chat(t, userHi)
	assert.Equal(t, 404, later.status)
	assert.Equal(t, `{"error": "`+deadRequestError+`"}`, later.body)
	log := ts.log.String()
	assert.NotContains(t, log, "Exception in thread")
	assert.Contains(t, log, " - ERROR - Generation thread failed; failing queued requests\nTraceback (most recent call last):\n")
	assert.Contains(t, log, "in _run_generation\n")
	assert.Contains(t, log, `"POST /v1/chat/completions HTTP/1.1" 404 -`)

	// 0.31.3: the same death, /health 200, the request waits.
	old := newTestServer(t, Options{MLXLMVersion: "0.31.3"})
	assert.True(t, noAnswer(t, old, `{"messages": [{"role": "user", "content": "hi"}], "stop": [1]}`))
	assert.Equal(t, 200, old.get(t, "/health").status)
	assert.Equal(t, 200, old.get(t, "/v1/models").status)
}

// validate_model_parameters raises ValueError out of do_POST for wrong
// types and ranges: socketserver's traceback, no answer at all.
func TestValidationDropsTheConnection(t *testing.T) {
	ts := newTestServer(t, Options{})
	for _, c := range []struct{ field, value, last string }{
		{"temperature", `"hot"`, "ValueError: temperature must be of type ('float', 'int')"},
		{"top_p", `2`, "ValueError: top_p must be at most 1"},
		{"xtc_probability", `0`, "ValueError: xtc_probability must be of type float"},
		{"top_logprobs", `20`, "ValueError: top_logprobs must be at most 11"},
		{"seed", `"x"`, "ValueError: seed must be of type int"},
	} {
		r := ts.chat(t, `{"messages": [{"role": "user", "content": "hi"}], "`+c.field+`": `+c.value+`}`)
		assert.Zero(t, r.status, c.field)
		assert.Empty(t, r.raw, c.field)
		assert.Contains(t, ts.log.String(), c.last+"\n", c.field)
	}
	assert.False(t, ts.e.ThreadDead())
}

// An integer of more than 4,300 digits: json.loads' int() raises
// ValueError (CPython 3.12), which is no JSONDecodeError: no answer.
func TestHugeIntegerDropsTheConnection(t *testing.T) {
	ts := newTestServer(t, Options{})
	r := ts.chat(t, `{"messages": [], "max_tokens": `+strings.Repeat("9", 4301)+`}`)
	assert.Empty(t, r.raw)
	assert.Contains(t, ts.log.String(), "ValueError: Exceeds the limit (4300 digits) for integer string conversion: value has 4301 digits; use sys.set_int_max_str_digits() to increase the limit\n")
	r = ts.chat(t, `{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 5, "seed": -`+strings.Repeat("1", 4300)+`}`)
	assert.Equal(t, 200, r.status, "4,300 digits are allowed")
}
