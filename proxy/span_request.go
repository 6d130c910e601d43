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

// requestFacts is a span's copy of the request.
type requestFacts struct {
	// temperature, topP and maxTokens are the GenAI request parameters
	// (nil when the request has none).
	temperature, topP, maxTokens *float64
	// params are the members llm.invocation_parameters shows (every member
	// but the content ones), secrets left out.
	params map[string]json.RawMessage
	// raw, messages, tools and prompt are the content: kept only with
	// capture_content, and only while the bytes held allow.
	raw                     []byte
	messages, tools, prompt json.RawMessage
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
// bytes against the tracer's bound.
func (t *tracer) keep(req requestBody) requestFacts {
	var rf requestFacts
	fields := req.fields
	for k, dst := range map[string]**float64{"temperature": &rf.temperature, "top_p": &rf.topP, "max_completion_tokens": &rf.maxTokens} {
		if v, ok := number(fields[k]); ok {
			*dst = &v
		}
	}
	if rf.maxTokens == nil {
		if v, ok := number(fields["max_tokens"]); ok {
			rf.maxTokens = &v
		}
	}
	var size int
	secret := false
	params := make(map[string]json.RawMessage, len(fields))
	for k, v := range fields {
		if secretMember(k) {
			secret = true
			continue
		}
		if contentMembers[k] {
			continue
		}
		params[k] = v
		size += len(k) + len(v)
	}
	var raw []byte
	var messages, tools, prompt json.RawMessage
	if t.cfg.CaptureContent {
		raw, messages, tools, prompt = req.raw, fields["messages"], fields["tools"], fields["prompt"]
		if secret {
			raw = redactedBody(fields)
		}
		if limit := t.cfg.MaxContentBytes; len(raw) > limit {
			// input.value shows at most this much; keep no more.
			raw, rf.cut = append([]byte(nil), raw[:limit]...), true
		}
		size += len(raw) + len(messages) + len(tools) + len(prompt)
	}
	if t.held.Add(int64(size)) > maxHeldRequestBytes {
		t.held.Add(-int64(size))
		rf.cut = rf.cut || t.cfg.CaptureContent
		return rf // the numbers only
	}
	rf.held = int64(size)
	rf.params, rf.raw, rf.messages, rf.tools, rf.prompt = params, raw, messages, tools, prompt
	return rf
}

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
