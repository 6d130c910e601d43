package proxy

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"strconv"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/jsonedit"
)

// The sampling parameters as mlx_lm validates them, checked here first:
// mlx_lm v0.31.3 server.py, APIHandler.validate_model_parameters (the same
// at 0.32.0), raises a ValueError that do_POST does not catch, so the
// engine drops the connection without an answer, the client learns
// nothing, and its mistake reads as a server error. The proxy answers
// OpenAI's 400 invalid_request_error naming the parameter instead.
//
// Types are Python's, as json.loads makes them and isinstance reads them:
// a JSON number with a fraction or an exponent is a float, one without is
// an int; true and false are bools, and a bool is an int; an int is not a
// float. A member that is present but null is None, which fails every
// check not marked optional (do_POST reads them with body.get(key,
// default), which gives the default only for an absent key).
//
// Beyond the engine's own validation, values that pass it but raise later
// in its one generation thread, outside any try (the thread dies, /health
// stays 200, and every later request waits for the supervisor's restart):
//
//   - top_k at or above the model's vocabulary (config.json vocab_size):
//     mlx_lm v0.31.3 sample_utils.py, apply_top_k, raises unless
//     0 < top_k < logprobs.shape[-1].
//   - xtc_probability above 0: mlx_lm v0.31.3 server.py, _make_sampler,
//     passes xtc_special_tokens as [eos_token_id, tokenizer.encode("\n")],
//     a nested list, and sample_utils.py apply_xtc's
//     mask[..., xtc_special_tokens] raises (ml-explore/mlx-lm#1257; fixed
//     at 0.32.0, server.py _make_sampler: encode("\n") + eos_token_ids).
//     The proxy cannot know the engine's version for certain, so XTC is
//     refused unless Requests.AllowXTC says the engine has the fix.
//   - xtc_threshold above 0.5 with XTC on: apply_xtc raises unless
//     0 <= xtc_threshold <= 0.5 (v0.31.3 and 0.32.0 alike), though the
//     validation lets it up to 1.

// pyType is the Python type json.loads gives a JSON value.
type pyType int

const (
	pyNone pyType = iota
	pyBool
	pyInt
	pyFloat
	pyStr
	pyList
	pyDict
)

// pyTypeOf reads the type of a raw JSON value.
func pyTypeOf(raw json.RawMessage) pyType {
	v := bytes.TrimSpace(raw)
	if len(v) == 0 {
		return pyNone
	}
	switch c := v[0]; {
	case c == 'n':
		return pyNone
	case c == 't' || c == 'f':
		return pyBool
	case c == '"':
		return pyStr
	case c == '[':
		return pyList
	case c == '{':
		return pyDict
	case bytes.ContainsAny(v, ".eE"):
		return pyFloat
	default:
		return pyInt
	}
}

// pyNumber is a bool, int or float value as a float64 for the range
// checks: an int too long for a float64 is ±Inf, which compares as the
// int would (the ranges' ends are small).
func pyNumber(raw json.RawMessage) float64 {
	v := bytes.TrimSpace(raw)
	switch string(v) {
	case "true":
		return 1
	case "false":
		return 0
	}
	f, _ := strconv.ParseFloat(string(v), 64)
	return f
}

// paramRule is one _validate(name, expected_type, min_val, max_val,
// optional, whitelist) of validate_model_parameters, by the body member
// it reads.
type paramRule struct {
	key string
	// ints: int (bool included) passes; floats: float passes.
	ints, floats bool
	min, max     *float64
	optional     bool
	whitelist    *float64
	doc          string // more the documentation says (TestParamsTable)
}

func bound(f float64) *float64 { return &f }

// paramRules are mlx_lm v0.31.3 server.py validate_model_parameters'
// checks of the sampling parameters, in its order (the same at 0.32.0).
// max_tokens, model and adapters are checked in allow.go with the front
// door's own rules, as are stop and chat_template_kwargs, which it does
// not validate; logit_bias in checkLogitBias.
var paramRules = []paramRule{
	{key: "stream"}, // a bool (boolParams)
	{key: "temperature", ints: true, floats: true, min: bound(0)},
	{key: "top_p", ints: true, floats: true, min: bound(0), max: bound(1)},
	{key: "top_k", ints: true, min: bound(0)},
	{key: "min_p", ints: true, floats: true, min: bound(0), max: bound(1)},
	{key: "num_draft_tokens", ints: true, min: bound(0)},
	{key: "repetition_penalty", ints: true, floats: true, min: bound(0)},
	{key: "repetition_context_size", ints: true, min: bound(0)},
	{key: "presence_penalty", ints: true, floats: true},
	{key: "presence_context_size", ints: true, min: bound(0)},
	{key: "frequency_penalty", ints: true, floats: true},
	{key: "frequency_context_size", ints: true, min: bound(0)},
	{key: "logprobs"}, // a bool (boolParams)
	{key: "top_logprobs", ints: true, min: bound(0), max: bound(11), whitelist: bound(-1)},
	{key: "xtc_probability", floats: true, min: bound(0), max: bound(1)},
	{key: "xtc_threshold", floats: true, min: bound(0), max: bound(1)},
	{key: "seed", ints: true, optional: true, doc: "from 0 to 2⁶⁴−1: MLX seeds its generator with an unsigned 64-bit integer, and `mx.random.seed` raises on another after the answer's headers (the connection drops)"},
}

// boolParams are the members validate_model_parameters checks as bool.
var boolParams = map[string]bool{"stream": true, "logprobs": true}

// typeNames is how _validate names the expected type in its message.
func (r paramRule) typeNames() string {
	switch {
	case boolParams[r.key]:
		return "a boolean"
	case r.ints && r.floats:
		return "a number"
	case r.floats:
		return "a number with a decimal point (a float, such as 0.5 or 0.0)"
	default:
		return "an integer"
	}
}

// check is _validate for one member of the body.
func (r paramRule) check(raw json.RawMessage, present bool) (refusal, bool) {
	if !present {
		return refusal{}, false // the engine's default, which passes
	}
	t := pyTypeOf(raw)
	if t == pyNone && r.optional {
		return refusal{}, false
	}
	var ok bool
	switch {
	case boolParams[r.key]:
		ok = t == pyBool
	default:
		ok = (r.ints && (t == pyInt || t == pyBool)) || (r.floats && t == pyFloat)
	}
	if !ok {
		return badRequest("invalid_type", r.key, "`%s` must be %s; got %s.", r.key, r.typeNames(), pyTypeName(t))
	}
	if boolParams[r.key] {
		return refusal{}, false
	}
	v := pyNumber(raw)
	if r.whitelist != nil && v == *r.whitelist {
		return refusal{}, false
	}
	if r.min != nil && v < *r.min {
		return badRequest("invalid_value", r.key, "`%s` must be at least %s%s.", r.key, fmtBound(*r.min), r.alsoAllowed())
	}
	if r.max != nil && v > *r.max {
		return badRequest("invalid_value", r.key, "`%s` must be at most %s%s.", r.key, fmtBound(*r.max), r.alsoAllowed())
	}
	return refusal{}, false
}

func (r paramRule) alsoAllowed() string {
	if r.whitelist == nil {
		return ""
	}
	return " (or " + fmtBound(*r.whitelist) + ")"
}

func fmtBound(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func pyTypeName(t pyType) string {
	return [...]string{"null", "a boolean", "an integer", "a float", "a string", "a list", "an object"}[t]
}

// modelLimits are the facts of the served model the checks need, from its
// config.json and tokenizer.json (zero: not known, the check is skipped).
type modelLimits struct {
	// vocab is config.json's vocab_size: the width of the logits.
	vocab int
	// context is max_position_embeddings.
	context int
	// prompt is the lower bound of a prompt's tokens (nil: none known).
	prompt *tokenBound
}

// checkParams mirrors validate_model_parameters and refuses the values
// known to kill the generation thread (see above).
// body is the body as sent: logit_bias is read from it, as its values may
// be NaN or Infinity, which f holds as null.
func (a allowlist) checkParams(f map[string]json.RawMessage, body []byte, m modelLimits) (refusal, bool) {
	for _, r := range paramRules {
		raw, present := f[r.key]
		if ref, refused := r.check(raw, present); refused {
			return ref, true
		}
	}
	if ref, refused := checkLogitBias(asSent(body, f, "logit_bias"), m.vocab); refused {
		return ref, true
	}
	if ref, refused := checkSeed(f["seed"]); refused {
		return ref, true
	}
	for _, key := range int32Params {
		if raw, ok := f[key]; ok && pyTypeOf(raw) == pyInt && !fitsInt32(raw) {
			return badRequest("invalid_value", key, "`%s` must be at most %d (and at least %d): MLX casts it to a 32-bit integer.", key, math.MaxInt32, math.MinInt32)
		}
	}
	if raw, ok := f["top_k"]; ok && m.vocab > 0 && pyNumber(raw) >= float64(m.vocab) {
		return badRequest("invalid_value", "top_k", "`top_k` must be less than the model's vocabulary size, %d.", m.vocab)
	}
	if raw, ok := f["xtc_probability"]; ok && pyNumber(raw) > 0 {
		if !a.limits.AllowXTC {
			return badRequest("unsupported_parameter", "xtc_probability",
				"XTC sampling (`xtc_probability` above 0) is not enabled on this server: the engine's mlx_lm fails on it before 0.32.0.")
		}
		if th, ok := f["xtc_threshold"]; ok && pyNumber(th) > 0.5 {
			return badRequest("invalid_value", "xtc_threshold", "`xtc_threshold` must be at most 0.5 when `xtc_probability` is above 0.")
		}
	}
	return refusal{}, false
}

// checkLogitBias: validate_model_parameters takes a dict (or None) and
// makes it {int(k): float(v)}; a key int() cannot read, or a value float()
// cannot (a ValueError, or a TypeError for null, a list or an object),
// escapes do_POST. The proxy takes numbers (NaN and Infinity included, as
// float() does) and bools as values, and decimal integers as keys
// (Python's int() also takes surrounding white space and underscores
// between digits, which no client sends: refused here). mlx_lm adds the
// biases with logits.at[:, indices].add(values), which does not check its
// indices: a negative token id, or one at or past the vocabulary, is
// refused too.
func checkLogitBias(raw json.RawMessage, vocab int) (refusal, bool) {
	t := pyTypeOf(raw)
	if raw == nil || t == pyNone {
		return refusal{}, false
	}
	if t != pyDict {
		return badRequest("invalid_type", "logit_bias", "`logit_bias` must be an object mapping token ids to numbers; got %s.", pyTypeName(t))
	}
	raw = bytes.TrimSpace(raw)
	o, err := jsonedit.ScanObject(raw)
	if err != nil {
		return badRequest("invalid_type", "logit_bias", "`logit_bias` must be an object mapping token ids to numbers.")
	}
	for _, m := range o.Members {
		k, _ := jsonedit.AppendString(nil, raw[m.KS:m.KE])
		id, err := strconv.ParseInt(string(k), 10, 64)
		if err != nil {
			return badRequest("invalid_value", "logit_bias", "`logit_bias` keys must be token ids (integers); got %q.", truncateLabel(string(k)))
		}
		if id < 0 || (vocab > 0 && id >= int64(vocab)) {
			return badRequest("invalid_value", "logit_bias", "`logit_bias` key %d is not a token id of this model (0 to %d).", id, max(vocab-1, 0))
		}
		switch v := o.Value(m); string(v) {
		case "NaN", "Infinity", "-Infinity":
		default:
			if vt := pyTypeOf(v); vt != pyInt && vt != pyFloat && vt != pyBool {
				return badRequest("invalid_type", "logit_bias", "`logit_bias` values must be numbers; the one of token %d is %s.", id, pyTypeName(vt))
			}
		}
	}
	return refusal{}, false
}

// int32Params are the penalties, applied to the logits as Python scalars in the
// generation step (mlx_lm v0.31.3 sample_utils.py, make_repetition_penalty
// `selected_logits * penalty`, make_presence_penalty `logits[:, tokens] -=
// penalty`, make_frequency_penalty `.subtract(penalty)`; generate.py
// GenerationBatch._step runs them inside batch_generator.next(), outside
// any try), where MLX casts a Python int scalar to a C++ integer and
// raises beyond it (MLX python/src/utils.cpp, to_array: nb::cast<long> in
// recent releases, nb::cast<int> in older ones): the generation thread
// dies. The penalties' context sizes slice the token context, an MLX
// array there (models/cache.py TokenBuffer), as tokens[-context_size:],
// and MLX casts a slice's ends to int. validate_model_parameters takes any
// int. The bound is int32's, which holds under either cast.
var int32Params = []string{
	"repetition_penalty", "presence_penalty", "frequency_penalty",
	"repetition_context_size", "presence_context_size", "frequency_context_size",
}

// fitsInt32 says whether an int literal fits in an int32.
func fitsInt32(raw json.RawMessage) bool {
	_, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 32)
	return err == nil
}

// checkSeed: a request with a seed is served alone, and mlx_lm v0.31.3
// server.py _serve_single (the same at 0.32.0) calls mx.random.seed(seed)
// after it has handed the handler the request's context: MLX's binding
// takes a uint64_t (MLX python/src/random.cpp at 00f7a457, `seed`), and
// nanobind refuses a negative int, or one of 2**64 and more, with a
// TypeError (nanobind src/common.cpp, load_int). The error reaches the
// handler after its 200 and escapes do_POST: the connection drops. A bool
// is an int (True seeds 1); null is no seed.
func checkSeed(raw json.RawMessage) (refusal, bool) {
	if raw == nil || pyTypeOf(raw) != pyInt {
		return refusal{}, false
	}
	n, ok := new(big.Int).SetString(string(bytes.TrimSpace(raw)), 10)
	if !ok || n.Sign() < 0 || n.BitLen() > 64 {
		return badRequest("invalid_value", "seed", "`seed` must be an integer from 0 to %d (MLX seeds its generator with an unsigned 64-bit integer).", uint64(math.MaxUint64))
	}
	return refusal{}, false
}

// asSent is the value of the member key as the body has it (the last of
// duplicate keys), NaN and Infinity included; nil when absent.
func asSent(body []byte, f map[string]json.RawMessage, key string) json.RawMessage {
	if _, ok := f[key]; !ok {
		return nil
	}
	o, err := jsonedit.ScanObject(body)
	if err != nil {
		return f[key]
	}
	m, ok := o.Last(key)
	if !ok {
		return f[key]
	}
	return o.Value(m)
}
