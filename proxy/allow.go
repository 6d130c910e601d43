package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/jsonedit"
)

// The front door's checks of a completion body. mlx_lm acts on what a
// request names before anything else: it unloads the model it serves to
// load the one a request names (from the Hugging Face hub or a local
// path), loads adapters and draft models, renders the chat template with
// whatever chat_template_kwargs say, and builds a stop matcher in its only
// generation thread, where a bad value kills the thread for every user. So
// the proxy answers such a request itself, as OpenAI does, and the engine
// never sees it. Every check reads the members the engine will read (the
// last of duplicate keys), and fails closed: a member of the wrong type is
// refused here rather than left to the engine.
//
//   - model: absent or null is the served model (null is rewritten to
//     "default_model": mlx_lm's own validation refuses None); one of
//     Config.ServedModels (default: Config.Model) or "default_model"
//     passes; "" (which mlx_lm would load from the working directory,
//     unloading its model) and every other name get 404 model_not_found;
//     a value that is not a string gets 400. "*" in ServedModels lets
//     every non-empty name through.
//   - adapters and draft_model pass only when allowed; a null is absent.
//   - chat_template_kwargs: an object whose keys are all in
//     Requests.ChatTemplateKwargs (a chat_template key would be a template
//     of the client's own, run by Jinja in the generation thread).
//   - stop: a string or a list of strings, bounded in number and length.
//   - max_tokens and max_completion_tokens: integers from 0 to
//     Requests.MaxTokens.
//   - No top-level member may be NaN or Infinity (json.loads takes them,
//     and `NaN < 0` is False, so they pass mlx_lm's range checks).
//   - The sampling parameters, as mlx_lm validates them and more:
//     params.go; the prompt's length: context_check.go; lone surrogates
//     and over-long integers anywhere: check.go.

// AnyModel in Config.ServedModels lets every model through.
const AnyModel = "*"

type allowlist struct {
	any             bool
	models          map[string]bool
	adapters, draft bool
	kwargs          map[string]bool
	limits          Requests
}

func newAllowlist(c Config) allowlist {
	a := allowlist{models: map[string]bool{defaultModelName: true}, adapters: c.AllowAdapters, draft: c.AllowDraftModel,
		kwargs: map[string]bool{}, limits: c.Requests}
	served := c.ServedModels
	if len(served) == 0 && c.Model != "" {
		served = []string{c.Model}
	}
	if len(served) == 0 {
		a.any = true // nothing to compare with: every name passes
	}
	for _, m := range served {
		if m == AnyModel {
			a.any = true
		}
		a.models[m] = true
	}
	for _, k := range c.ChatTemplateKwargs {
		a.kwargs[k] = true
	}
	return a
}

// check returns the refusal of a request (by its parsed body), if any.
func (a allowlist) check(pb parsedBody) (refusal, bool) {
	f := pb.fields
	if pb.nonFinite["model"] {
		return badRequest("invalid_type", "model", "`model` must be a string.")
	}
	if ref, refused := a.checkModel(f["model"]); refused {
		return ref, true
	}
	for _, m := range []struct {
		key     string
		allowed bool
	}{{"adapters", a.adapters}, {"draft_model", a.draft}} {
		if _, ok := f[m.key]; ok && (!isNull(f[m.key]) || pb.nonFinite[m.key]) && !m.allowed {
			return badRequest("unsupported_parameter", m.key, "`%s` is not allowed by this server: it would make the engine load other weights.", m.key)
		}
	}
	if len(pb.nonFinite) > 0 {
		keys := make([]string, 0, len(pb.nonFinite))
		for k := range pb.nonFinite {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return badRequest("invalid_value", truncateLabel(keys[0]), "`%s` is not a finite number; NaN and Infinity are not accepted.", truncateLabel(keys[0]))
	}
	if ref, refused := a.checkKwargs(f["chat_template_kwargs"]); refused {
		return ref, true
	}
	if ref, refused := a.checkStop(f["stop"]); refused {
		return ref, true
	}
	for _, k := range []string{"max_tokens", "max_completion_tokens"} {
		if ref, refused := a.checkMaxTokens(k, f[k]); refused {
			return ref, true
		}
	}
	// mlx_lm v0.31.3 server.py, do_POST: max_tokens is read only when
	// max_completion_tokens is absent or None, and then a null is None,
	// which validate_model_parameters refuses (int).
	if raw, ok := f["max_tokens"]; ok && isNull(raw) && (f["max_completion_tokens"] == nil || isNull(f["max_completion_tokens"])) {
		return badRequest("invalid_type", "max_tokens", "`max_tokens` must be a non-negative integer; got null.")
	}
	// validate_model_parameters: adapter must be a str or None.
	if raw, ok := f["adapters"]; ok && a.adapters && pyTypeOf(raw) != pyNone && pyTypeOf(raw) != pyStr {
		return badRequest("invalid_type", "adapters", "`adapters` must be a string (a path).")
	}
	return refusal{}, false
}

func (a allowlist) checkModel(raw json.RawMessage) (refusal, bool) {
	if raw == nil || isNull(raw) {
		return refusal{}, false
	}
	var model string
	if json.Unmarshal(raw, &model) != nil {
		return badRequest("invalid_type", "model", "`model` must be a string.")
	}
	if model == "" || (!a.any && !a.models[model]) {
		return modelNotFound(fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", truncateLabel(model))), true
	}
	return refusal{}, false
}

func (a allowlist) checkKwargs(raw json.RawMessage) (refusal, bool) {
	if raw == nil || isNull(raw) {
		return refusal{}, false
	}
	var kwargs map[string]json.RawMessage
	if json.Unmarshal(raw, &kwargs) != nil {
		return badRequest("invalid_type", "chat_template_kwargs", "`chat_template_kwargs` must be an object.")
	}
	keys := make([]string, 0, len(kwargs))
	for k := range kwargs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !a.kwargs[k] {
			return badRequest("unsupported_parameter", "chat_template_kwargs", "`chat_template_kwargs.%s` is not allowed by this server (allowed: %s).",
				truncateLabel(k), a.allowedKwargs())
		}
	}
	return refusal{}, false
}

func (a allowlist) allowedKwargs() string {
	if len(a.kwargs) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(a.kwargs))
	for k := range a.kwargs {
		keys = append(keys, "`"+k+"`")
	}
	slices.Sort(keys)
	return fmt.Sprint(keys)
}

// checkStop: mlx_lm takes a string or a list of strings; anything else
// (a number, a nested list, null in the list) raises in the generation
// thread, which dies and leaves every later request hanging.
func (a allowlist) checkStop(raw json.RawMessage) (refusal, bool) {
	if raw == nil || isNull(raw) {
		return refusal{}, false
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return a.checkStopString(one)
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return badRequest("invalid_type", "stop", "`stop` must be a string or a list of strings.")
	}
	if n := a.limits.MaxStopSequences; n > 0 && len(list) > n {
		return badRequest("invalid_value", "stop", "`stop` has %d sequences; this server allows at most %d.", len(list), n)
	}
	for _, item := range list {
		var s string
		if isNull(item) || json.Unmarshal(item, &s) != nil {
			return badRequest("invalid_type", "stop", "`stop` must be a string or a list of strings.")
		}
		if ref, refused := a.checkStopString(s); refused {
			return ref, true
		}
	}
	return refusal{}, false
}

func (a allowlist) checkStopString(s string) (refusal, bool) {
	if n := a.limits.MaxStopBytes; n > 0 && len(s) > n {
		return badRequest("invalid_value", "stop", "a `stop` sequence is %d bytes long; this server allows at most %d.", len(s), n)
	}
	return refusal{}, false
}

// checkMaxTokens: an integer literal from 0 to the bound. mlx_lm refuses
// a float itself, but Python's True is an int, and no bound is its own.
func (a allowlist) checkMaxTokens(key string, raw json.RawMessage) (refusal, bool) {
	if raw == nil || isNull(raw) {
		return refusal{}, false
	}
	n, ok := jsonedit.Integer(bytes.TrimSpace(raw))
	if !ok || n < 0 {
		return badRequest("invalid_type", key, "`%s` must be a non-negative integer.", key)
	}
	if limit := a.limits.MaxTokens; limit > 0 && n > int64(limit) {
		return badRequest("invalid_value", key, "`%s` is %d; this server allows at most %d.", key, n, limit)
	}
	return refusal{}, false
}

// truncateLabel keeps an error message short whatever the client sent.
func truncateLabel(s string) string {
	if len(s) > maxLabelLen {
		return s[:maxLabelLen] + "…"
	}
	return s
}

// oneModelName returns the body the engine gets (the client's body and
// members stay as they came, for the span) for the served model: a
// null model, or the engine's own --model named by its repo id or path
// (Config.Model; with upstreams, each one's first model), becomes
// "default_model", the one name mlx_lm serves its
// model under. mlx_lm keys its batch on the model a request names, and
// drains every request in progress before it serves another name; only
// default_model carries --adapter-path (mlx_lm v0.31.3 server.py,
// ModelProvider.__init__'s _adapter_map). So every request of the served
// model, the supervisor's probe and the judge's included, names it alike.
// restore is what the client's answer must say instead of
// "default_model" (mlx_lm echoes the name it was sent), nil when nothing
// was renamed or the client said null.
func (p *Proxy) oneModelName(body []byte, pb parsedBody) (out, restore []byte) {
	raw, ok := pb.fields["model"]
	if !ok {
		return body, nil
	}
	if !isNull(raw) {
		var name string
		if json.Unmarshal(raw, &name) != nil || !p.engineModels[name] {
			return body, nil
		}
		restore = pythonString(name)
	}
	out, err := jsonedit.Set(body, jsonedit.Last, jsonedit.KV{Key: "model", Value: []byte(`"` + defaultModelName + `"`)})
	if err != nil {
		return body, nil
	}
	return out, restore
}

// pythonString is s as Python's json.dumps writes it (ensure_ascii):
// what mlx_lm would have echoed.
func pythonString(s string) []byte {
	out := []byte{'"'}
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			out = append(out, '\\', byte(r))
		case r < 0x20 || r > 0x7e:
			if r > 0xffff {
				r -= 0x10000
				out = fmt.Appendf(out, "\\u%04x\\u%04x", 0xd800+(r>>10), 0xdc00+(r&0x3ff))
				continue
			}
			out = fmt.Appendf(out, "\\u%04x", r)
		default:
			out = append(out, byte(r))
		}
	}
	return append(out, '"')
}

// echoedDefault is how mlx_lm writes the name back in an answer or a chunk
// (json.dumps's ": " separator).
var echoedDefault = []byte(`"model": "` + defaultModelName + `"`)

// restoreModel puts the client's model name back where the engine echoed
// "default_model" (the first time: the answer's or the chunk's own
// member; a string in the content is escaped, so it never matches).
func restoreModel(b, name []byte) []byte {
	i := bytes.Index(b, echoedDefault)
	if i < 0 || name == nil {
		return b
	}
	out := make([]byte, 0, len(b)+len(name))
	out = append(out, b[:i]...)
	out = append(out, `"model": `...)
	out = append(out, name...)
	return append(out, b[i+len(echoedDefault):]...)
}
