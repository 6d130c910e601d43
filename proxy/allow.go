package proxy

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// The front door's allowlist. mlx_lm loads whatever model, adapter or
// draft model a request names (from the Hugging Face hub or a local
// path), unloading the model it serves: one request with a made-up name
// stalls every user behind a reload. So the proxy answers a request for a
// model it does not serve itself, as OpenAI does, and the engine never
// sees it.
//
//   - Served: the request names no model, names "default_model" (mlx_lm's
//     own name for its --model), or names one of Config.ServedModels
//     (default: Config.Model). "*" in ServedModels lets every model pass.
//   - adapters and draft_model pass only when allowed; a null is absent.
//   - A model that is not a string is left to the engine, which refuses it.

// AnyModel in Config.ServedModels lets every model through.
const AnyModel = "*"

type allowlist struct {
	any             bool
	models          map[string]bool
	adapters, draft bool
}

func newAllowlist(c Config) allowlist {
	a := allowlist{models: map[string]bool{defaultModelName: true}, adapters: c.AllowAdapters, draft: c.AllowDraftModel}
	served := c.ServedModels
	if len(served) == 0 && c.Model != "" {
		served = []string{c.Model}
	}
	if len(served) == 0 {
		a.any = true // nothing to compare with: the engine decides
	}
	for _, m := range served {
		if m == AnyModel {
			a.any = true
		}
		a.models[m] = true
	}
	return a
}

// refusal is the proxy's own answer to a request it does not pass on.
type refusal struct {
	status           int
	typ, code, param string
	message          string
}

// check returns the refusal of a request (by its parsed members), if any.
func (a allowlist) check(fields map[string]json.RawMessage) (refusal, bool) {
	if fields == nil {
		return refusal{}, false // not a JSON object: the engine says what is wrong
	}
	var model string
	if raw, ok := fields["model"]; ok && !isNull(raw) && json.Unmarshal(raw, &model) == nil && model != "" && !a.any && !a.models[model] {
		return refusal{status: http.StatusNotFound, typ: "invalid_request_error", code: "model_not_found", param: "model",
			message: fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", truncateLabel(model))}, true
	}
	for _, m := range []struct {
		key     string
		allowed bool
	}{{"adapters", a.adapters}, {"draft_model", a.draft}} {
		if raw, ok := fields[m.key]; ok && !isNull(raw) && !m.allowed {
			return refusal{status: http.StatusBadRequest, typ: "invalid_request_error", code: "unsupported_parameter", param: m.key,
				message: fmt.Sprintf("`%s` is not allowed by this server: it would make the engine load other weights.", m.key)}, true
		}
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

// write sends the refusal in OpenAI's error shape, param included.
func (r refusal) write(w http.ResponseWriter) {
	writeErrorParam(w, r.status, r.typ, r.code, r.param, r.message)
}
