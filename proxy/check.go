package proxy

import "net/http"

// Parsing and checking a completion's body (parse.go, allow.go).

// checkCompletion parses the body as mlx_lm will (parse.go), fills rec
// from it, and refuses what must not reach the engine (allow.go).
func (p *Proxy) checkCompletion(w http.ResponseWriter, rec *Record, body []byte) (parsedBody, bool) {
	pb, err := parseBody(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_json", err.Error())
		p.refuse(rec, http.StatusBadRequest)
		return parsedBody{}, false
	}
	p.parseRequest(rec, pb.fields)
	if ref, refused := p.allow.check(pb); refused {
		ref.write(w)
		p.refuse(rec, ref.status)
		return parsedBody{}, false
	}
	return pb, true
}
