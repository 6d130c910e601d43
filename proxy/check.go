package proxy

import (
	"net/http"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/jsonedit"
)

// Parsing and checking a completion's body (parse.go, allow.go,
// params.go, context_check.go).

// checkCompletion parses the body as mlx_lm will (parse.go), fills rec
// from it, and refuses what must not reach the engine: what json.loads
// takes but the engine cannot live with (bodyHazard), what the front door
// does not allow (allow.go), what mlx_lm's own validation would drop the
// connection on or its generation thread die of (params.go), and a prompt
// that cannot fit the context (context_check.go).
func (p *Proxy) checkCompletion(w http.ResponseWriter, r *http.Request, rec *Record, body []byte) (parsedBody, bool) {
	pb, err := parseBody(body)
	if err != nil {
		p.refuse(w, r, rec, invalidJSON(err))
		return parsedBody{}, false
	}
	p.parseRequest(rec, pb.fields)
	lim := p.limitsFor(rec.Model)
	for _, check := range []func() (refusal, bool){
		func() (refusal, bool) { return bodyHazard(body) },
		func() (refusal, bool) { return p.allow.check(pb) },
		func() (refusal, bool) { return p.allow.checkParams(pb.fields, body, lim) },
		func() (refusal, bool) { return checkContext(pb.fields, len(body), lim) },
	} {
		if ref, refused := check(); refused {
			p.refuse(w, r, rec, ref)
			return parsedBody{}, false
		}
	}
	return pb, true
}

// bodyHazard refuses a body with a lone surrogate escape or an integer
// literal too long for Python, naming the top-level member that holds it.
//
//   - A lone surrogate: Go reads "\ud800" as U+FFFD, but json.loads keeps
//     the surrogate in the str, and the tokenizers binding cannot encode
//     it: in a stop string mlx_lm v0.31.3 server.py, _make_state_machine,
//     raises in the generation thread, outside any try; in a message or a
//     prompt the tokenizer raises on it too. Nothing the engine reads can
//     need one, so it is refused anywhere in the body.
//   - An integer of more than 4300 digits: json.loads raises a ValueError
//     that mlx_lm v0.31.3 server.py, do_POST, does not catch (it catches
//     JSONDecodeError): the connection is dropped.
func bodyHazard(body []byte) (refusal, bool) {
	kind, at := jsonedit.FirstHazard(body)
	switch kind {
	case jsonedit.HazardSurrogate:
		param := memberAt(body, at)
		return badRequest("invalid_value", param, "`%s` holds a lone UTF-16 surrogate escape (\\ud800-\\udfff without its pair): it is not text, and the model's tokenizer cannot encode it.", param)
	case jsonedit.HazardLongInt:
		param := memberAt(body, at)
		return badRequest("invalid_value", param, "`%s` holds an integer of more than %d digits, more than the engine's JSON reader takes.", param, jsonedit.MaxIntDigits)
	}
	return refusal{}, false
}

// memberAt names the top-level member of obj whose key or value holds
// offset at.
func memberAt(obj []byte, at int) string {
	o, err := jsonedit.ScanObject(obj)
	if err != nil {
		return ""
	}
	for _, m := range o.Members {
		if m.KS <= at && at < m.VE {
			key, _ := jsonedit.AppendString(nil, obj[m.KS:m.KE])
			return truncateLabel(string(key))
		}
	}
	return ""
}
