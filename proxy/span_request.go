package proxy

import (
	"encoding/json"
	"strings"
)

// What a pending span keeps of the client's request, until its worker
// builds the attributes. The request path only picks members out of the
// map parseRequest already decoded; the bytes kept are bounded per span
// (content: traces.max_content_bytes) and for all pending spans together
// (maxHeldRequestBytes), so that no client can make the spans waiting in
// the queues hold its bodies.

// requestFacts is what a span keeps of the request: the body and its
// members as parseRequest decoded them (no copy on the request path), and
// with capture_content off only the members that are not content. The
// attributes are read from them off the request path.
type requestFacts struct {
	raw    []byte // the body, for input.value; nil without content
	fields map[string]json.RawMessage
	// cut: content was left out because of the bounds.
	cut  bool
	held int64 // bytes counted against maxHeldRequestBytes
}

// maxHeldRequestBytes bounds the request bytes all pending spans keep
// together; a span that would pass it keeps no request content (and says
// so with mlx.content_truncated).
const maxHeldRequestBytes = 64 << 20

// contentMembers are the request members that are content, not
// parameters.
var contentMembers = map[string]bool{"messages": true, "prompt": true, "tools": true, "functions": true}

// secretMember: a top-level member that may carry a credential. Clients
// send keys in headers, which never reach a span; a body member of these
// names is left out of llm.invocation_parameters and redacted in
// input.value.
func secretMember(k string) bool {
	switch strings.ToLower(k) {
	case "api_key", "apikey", "api-key", "x-api-key", "authorization", "access_token", "token",
		"password", "secret", "client_secret":
		return true
	}
	return false
}

// keep picks what the span needs from a request's members, and holds the
// bytes against the tracer's bound. It runs on the request path: it only
// measures and picks; with content it copies nothing.
func (t *tracer) keep(req requestBody) requestFacts {
	rf := requestFacts{fields: req.fields}
	if !t.cfg.CaptureContent {
		rf.fields = make(map[string]json.RawMessage, len(req.fields))
		for k, v := range req.fields {
			if !contentMembers[k] {
				rf.fields[k] = v
			}
		}
	} else {
		rf.raw = req.raw
	}
	size := len(rf.raw)
	for k, v := range rf.fields {
		size += len(k) + len(v)
	}
	if t.held.Add(int64(size)) > maxHeldRequestBytes {
		t.held.Add(-int64(size))
		// The numbers only: the parameters the GenAI attributes read.
		small := make(map[string]json.RawMessage, 4)
		for _, k := range []string{"temperature", "top_p", "max_tokens", "max_completion_tokens"} {
			if v, ok := req.fields[k]; ok && len(v) <= 32 {
				small[k] = v
			}
		}
		return requestFacts{fields: small, cut: t.cfg.CaptureContent}
	}
	rf.held = int64(size)
	return rf
}

// params are the members llm.invocation_parameters shows: every member but
// the content and the secrets.
func (rf *requestFacts) params() map[string]json.RawMessage {
	if rf.fields == nil {
		return nil
	}
	params := make(map[string]json.RawMessage, len(rf.fields))
	for k, v := range rf.fields {
		if !contentMembers[k] && !secretMember(k) {
			params[k] = v
		}
	}
	return params
}

// input is input.value: the body as the client sent it, re-encoded with
// its secrets redacted when it has any.
func (rf *requestFacts) input() []byte {
	for k := range rf.fields {
		if secretMember(k) {
			return redactedBody(rf.fields)
		}
	}
	return rf.raw
}

// number is the request's member k when it is a number.
func (rf *requestFacts) number(k string) (float64, bool) { return number(rf.fields[k]) }

// release gives the bytes a span kept back to the bound.
func (t *tracer) release(rf *requestFacts) {
	if rf.held != 0 {
		t.held.Add(-rf.held)
		rf.held = 0
	}
}

// redactedBody is the request re-encoded with the values of its secret
// members redacted (duplicate keys collapse to the last, as in Python).
func redactedBody(fields map[string]json.RawMessage) []byte {
	out := make(map[string]json.RawMessage, len(fields))
	for k, v := range fields {
		if secretMember(k) {
			v = json.RawMessage(`"` + redacted + `"`)
		}
		out[k] = v
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil
	}
	return b
}
