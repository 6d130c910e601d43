package mlxsim

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim/pyjson"
)

// Request fields as do_POST reads them (body.get with server defaults) and
// validate_model_parameters checks them. Validation errors are not caught by
// mlx_lm: the handler thread dies, socketserver prints the traceback and the
// client gets no response at all.

type completionRequest struct {
	body          *pyjson.Dict
	stream        any
	streamOptions any
	model         any
	draftModel    any
	numDraft      any
	adapter       any
	maxTokens     any
	temperature   any
	topP, topK    any
	minP          any
	repPenalty    any
	repCtx        any
	presPenalty   any
	presCtx       any
	freqPenalty   any
	freqCtx       any
	xtcProb       any
	xtcThresh     any
	logitBias     any
	logprobs      any
	topLogprobs   any
	seed          any
	templateKw    any
	stopWords     []any
	stopRaw       any
	isStream      bool
	maxTokensInt  int64
	topLogprobsN  int64
	wantLogprobs  bool
	temperatureF  float64
	requestedName string
}

func (e *Engine) readRequest(body *pyjson.Dict) *completionRequest {
	o := &e.opts
	q := &completionRequest{body: body}
	q.stream = body.GetDefault("stream", false)
	q.streamOptions = body.GetDefault("stream_options", nil)
	q.model = body.GetDefault("model", "default_model")
	q.draftModel = body.GetDefault("draft_model", "default_model")
	q.numDraft = body.GetDefault("num_draft_tokens", pyjson.NewInt(strconv.Itoa(o.NumDraftTokens)))
	q.adapter = body.GetDefault("adapters", nil)
	q.maxTokens = body.GetDefault("max_completion_tokens", nil)
	if q.maxTokens == nil {
		q.maxTokens = body.GetDefault("max_tokens", pyjson.NewInt(strconv.Itoa(o.MaxTokens)))
	}
	q.temperature = body.GetDefault("temperature", o.Temp)
	q.topP = body.GetDefault("top_p", o.TopP)
	q.topK = body.GetDefault("top_k", pyjson.NewInt(strconv.Itoa(o.TopK)))
	q.minP = body.GetDefault("min_p", o.MinP)
	q.repPenalty = body.GetDefault("repetition_penalty", 0.0)
	q.repCtx = body.GetDefault("repetition_context_size", pyjson.NewInt("20"))
	q.presPenalty = body.GetDefault("presence_penalty", 0.0)
	q.presCtx = body.GetDefault("presence_context_size", pyjson.NewInt("20"))
	q.freqPenalty = body.GetDefault("frequency_penalty", 0.0)
	q.freqCtx = body.GetDefault("frequency_context_size", pyjson.NewInt("20"))
	q.xtcProb = body.GetDefault("xtc_probability", 0.0)
	// 0.0 in mlx-lm 0.31.3 (server.py, do_POST), 0.1 from cf10f962 (#1372).
	q.xtcThresh = body.GetDefault("xtc_threshold", e.era.xtcThreshold)
	q.logitBias = body.GetDefault("logit_bias", nil)
	q.logprobs = body.GetDefault("logprobs", false)
	q.topLogprobs = body.GetDefault("top_logprobs", pyjson.NewInt("-1"))
	q.seed = body.GetDefault("seed", nil)
	q.templateKw = body.GetDefault("chat_template_kwargs", nil)
	return q
}

// Python numeric view of a JSON value for isinstance checks.
func isPyInt(v any) bool {
	switch v.(type) {
	case pyjson.Int, bool:
		return true
	}
	return false
}

func isPyFloat(v any) bool { _, ok := v.(float64); return ok }

func pyNum(v any) float64 {
	switch x := v.(type) {
	case pyjson.Int:
		if f, err := strconv.ParseFloat(x.Text, 64); err == nil {
			return f
		}
		return float64(x.V)
	case bool:
		if x {
			return 1
		}
		return 0
	case float64:
		return x
	}
	return math.NaN()
}

func pyIntVal(v any) int64 {
	switch x := v.(type) {
	case pyjson.Int:
		return x.V
	case bool:
		if x {
			return 1
		}
	}
	return 0
}

// validateSpec is one self._validate(...) call of validate_model_parameters.
type validateSpec struct {
	name     string
	val      func(*completionRequest) any
	kind     string // "bool", "int", "num", "float", "str"
	min, max *float64
	optional bool
}

func fp(f float64) *float64 { return &f }

// validations are the self._validate(...) calls in server.py's order; the
// Nth is on line lineValidateCalls+N.
var validations = []validateSpec{
	{"stream", func(q *completionRequest) any { return q.stream }, "bool", nil, nil, false},
	{"max_tokens", func(q *completionRequest) any { return q.maxTokens }, "int", fp(0), nil, false},
	{"temperature", func(q *completionRequest) any { return q.temperature }, "num", fp(0), nil, false},
	{"top_p", func(q *completionRequest) any { return q.topP }, "num", fp(0), fp(1), false},
	{"top_k", func(q *completionRequest) any { return q.topK }, "int", fp(0), nil, false},
	{"min_p", func(q *completionRequest) any { return q.minP }, "num", fp(0), fp(1), false},
	{"num_draft_tokens", func(q *completionRequest) any { return q.numDraft }, "int", fp(0), nil, false},
	{"repetition_penalty", func(q *completionRequest) any { return q.repPenalty }, "num", fp(0), nil, false},
	{"repetition_context_size", func(q *completionRequest) any { return q.repCtx }, "int", fp(0), nil, false},
	{"presence_penalty", func(q *completionRequest) any { return q.presPenalty }, "num", nil, nil, false},
	{"presence_context_size", func(q *completionRequest) any { return q.presCtx }, "int", fp(0), nil, false},
	{"frequency_penalty", func(q *completionRequest) any { return q.freqPenalty }, "num", nil, nil, false},
	{"frequency_context_size", func(q *completionRequest) any { return q.freqCtx }, "int", fp(0), nil, false},
	{"logprobs", func(q *completionRequest) any { return q.logprobs }, "bool", nil, nil, false},
	{"top_logprobs", func(q *completionRequest) any { return q.topLogprobs }, "int", fp(0), fp(11), false},
	{"xtc_probability", func(q *completionRequest) any { return q.xtcProb }, "float", fp(0), fp(1), false},
	{"xtc_threshold", func(q *completionRequest) any { return q.xtcThresh }, "float", fp(0), fp(1), false},
	{"requested_model", func(q *completionRequest) any { return q.model }, "str", nil, nil, false},
	{"adapter", func(q *completionRequest) any { return q.adapter }, "str", nil, nil, true},
	{"seed", func(q *completionRequest) any { return q.seed }, "int", nil, nil, true},
	{"logit_bias", func(q *completionRequest) any { return q.logitBias }, "dict", nil, nil, true},
}

var kindTypeNames = map[string]string{
	"bool":  "bool",
	"int":   "int",
	"num":   "('float', 'int')",
	"float": "float",
	"str":   "str",
	"dict":  "dict",
}

func pyNumText(f float64) string {
	if f == math.Trunc(f) {
		return strconv.FormatInt(int64(f), 10)
	}
	return pyjson.FloatRepr(f)
}

func validateFrame(line int, src string) []pyFrame {
	return []pyFrame{
		{serverPy, lineDoPOSTValidate, "do_POST", "self.validate_model_parameters()", ""},
		{serverPy, line, "validate_model_parameters", src, ""},
	}
}

// validate is validate_model_parameters; a non-nil result is the uncaught
// exception.
func (q *completionRequest) validate() *pyExc {
	for i, v := range validations {
		line := lineValidateCalls + i
		val := v.val(q)
		if v.optional && val == nil {
			continue
		}
		ok := false
		switch v.kind {
		case "bool":
			_, ok = val.(bool)
		case "int":
			ok = isPyInt(val)
		case "num":
			ok = isPyInt(val) || isPyFloat(val)
		case "float":
			ok = isPyFloat(val)
		case "str":
			_, ok = val.(string)
		case "dict":
			_, ok = val.(*pyjson.Dict)
		}
		call := validateCallSource(v)
		if !ok {
			return &pyExc{typ: "ValueError", msg: fmt.Sprintf("%s must be of type %s", v.name, kindTypeNames[v.kind]),
				frames: append(validateFrame(line, call), pyFrame{serverPy, lineValidateType, "_validate", `raise ValueError(f"{name} must be of type {allowed}")`, ""})}
		}
		if v.name == "top_logprobs" && pyIntVal(val) == -1 {
			continue // whitelist=[-1]
		}
		if v.kind == "bool" || v.kind == "str" || v.kind == "dict" {
			continue
		}
		n := pyNum(val)
		if v.min != nil && n < *v.min {
			return &pyExc{typ: "ValueError", msg: fmt.Sprintf("%s must be at least %s", v.name, pyNumText(*v.min)),
				frames: append(validateFrame(line, call), pyFrame{serverPy, lineValidateMin, "_validate", `raise ValueError(f"{name} must be at least {min_val}")`, ""})}
		}
		if v.max != nil && n > *v.max {
			return &pyExc{typ: "ValueError", msg: fmt.Sprintf("%s must be at most %s", v.name, pyNumText(*v.max)),
				frames: append(validateFrame(line, call), pyFrame{serverPy, lineValidateMax, "_validate", `raise ValueError(f"{name} must be at most {max_val}")`, ""})}
		}
	}
	if lb, ok := q.logitBias.(*pyjson.Dict); ok {
		for _, k := range lb.Keys() {
			if _, ok := pyParseInt(k); !ok {
				return &pyExc{typ: "ValueError", msg: "logit_bias must be a dict of int to float", frames: validateFrame(lineLogitBiasRaise, `raise ValueError("logit_bias must be a dict of int to float")`)}
			}
			v, _ := lb.Get(k)
			switch x := v.(type) {
			case pyjson.Int, bool, float64:
			case string:
				if _, ok := pyParseFloat(x); !ok {
					return &pyExc{typ: "ValueError", msg: "logit_bias must be a dict of int to float", frames: validateFrame(lineLogitBiasRaise, `raise ValueError("logit_bias must be a dict of int to float")`)}
				}
			default:
				return &pyExc{typ: "TypeError", msg: "float() argument must be a string or a real number, not '" + pyjson.TypeName(v) + "'",
					frames: validateFrame(lineLogitBiasConv, "self.logit_bias = {int(k): float(v) for k, v in self.logit_bias.items()}")}
			}
		}
	}
	q.isStream = q.stream.(bool)
	q.maxTokensInt = pyIntVal(q.maxTokens)
	q.topLogprobsN = pyIntVal(q.topLogprobs)
	q.wantLogprobs = q.logprobs.(bool)
	q.temperatureF = pyNum(q.temperature)
	q.requestedName = q.model.(string)
	return nil
}

func validateCallSource(v validateSpec) string {
	var args []string
	args = append(args, fmt.Sprintf("%q", v.name))
	switch v.kind {
	case "num":
		args = append(args, "(float, int)")
	default:
		args = append(args, v.kind)
	}
	if v.min != nil {
		args = append(args, "min_val="+pyNumText(*v.min))
	}
	if v.max != nil {
		args = append(args, "max_val="+pyNumText(*v.max))
	}
	if v.name == "top_logprobs" {
		args = append(args, "whitelist=[-1]")
	}
	if v.optional {
		args = append(args, "optional=True")
	}
	return "self._validate(" + strings.Join(args, ", ") + ")"
}

// pyParseInt is int(str): surrounding whitespace, a sign, digits with
// single underscores between them.
func pyParseInt(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	t := s
	if t[0] == '+' || t[0] == '-' {
		t = t[1:]
	}
	if t == "" || t[0] == '_' || t[len(t)-1] == '_' || strings.Contains(t, "__") {
		return 0, false
	}
	clean := strings.ReplaceAll(s, "_", "")
	v, err := strconv.ParseInt(clean, 10, 64)
	if err != nil {
		for _, c := range strings.TrimLeft(clean, "+-") {
			if c < '0' || c > '9' {
				return 0, false
			}
		}
		return math.MaxInt64, true
	}
	return v, true
}

// pyParseFloat is float(str), close enough: whitespace, underscores between
// digits, inf/infinity/nan in any case.
func pyParseFloat(s string) (float64, bool) {
	t := strings.ToLower(strings.TrimSpace(s))
	u := strings.TrimLeft(t, "+-")
	switch u {
	case "inf", "infinity":
		return math.Inf(1), true
	case "nan":
		return math.NaN(), true
	}
	if strings.Contains(t, "__") || strings.HasPrefix(u, "_") || strings.HasSuffix(u, "_") {
		return 0, false
	}
	if strings.ContainsAny(t, "xp") {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(t, "_", ""), 64)
	if err != nil && !math.IsInf(f, 0) && f != 0 {
		return 0, false
	}
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrSyntax {
			return 0, false
		}
	}
	return f, true
}

// stopSequences turns body["stop"] into the token sequences the server's
// state machine matches: stop or [], a str alone becomes [str], each is
// tokenized. A value Python cannot iterate or tokenize is an exception
// raised before generation starts (a 404 {"error": str(e)}).
func stopSequences(stop any) ([][]int, []string, *pyExc) {
	if !pyjson.Truthy(stop) {
		return nil, nil, nil
	}
	var words []any
	switch x := stop.(type) {
	case string:
		words = []any{x}
	case []any, *pyjson.Dict:
		words, _ = pyIterate(x)
	default:
		return nil, nil, &pyExc{typ: "TypeError", msg: "'" + pyjson.TypeName(stop) + "' object is not iterable"}
	}
	var seqs [][]int
	var strs []string
	for _, w := range words {
		switch x := w.(type) {
		case string:
			if x == "" {
				continue
			}
			if hasLoneSurrogate(x) {
				// The tokenizers binding cannot take the str as UTF-8 and
				// fails every variant of TextEncodeInput (its message, from
				// the binding's source as remembered: unverified).
				return nil, nil, &pyExc{typ: "TypeError", msg: "TextEncodeInput must be Union[TextInputSequence, Tuple[InputSequence, InputSequence]]"}
			}
			seqs = append(seqs, tokenIDs(tokenize(x)))
			strs = append(strs, x)
		case []any, *pyjson.Dict:
			return nil, nil, &pyExc{typ: "TypeError", msg: "unhashable type: '" + pyjson.TypeName(w) + "'"}
		default:
			return nil, nil, &pyExc{typ: "TypeError", msg: "TextEncodeInput must be Union[TextInputSequence, Tuple[InputSequence, InputSequence]]"}
		}
	}
	return seqs, strs, nil
}

// hasLoneSurrogate says whether a str (pyjson keeps a lone surrogate in
// its generalized UTF-8 form, ED A0..BF xx) holds one.
func hasLoneSurrogate(s string) bool {
	for i := 0; i+2 < len(s); i++ {
		if s[i] == 0xed && s[i+1] >= 0xa0 && s[i+1] <= 0xbf {
			return true
		}
	}
	return false
}
