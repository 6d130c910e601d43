package span

import (
	"bytes"
	"encoding/json"
	"strings"
)

// What a span keeps of the client's request, until it is built off the
// request path. The request path only picks members out of the map the
// proxy already decoded; the proxy bounds the bytes all pending spans keep
// together (Size), and keeps only the numbers (NumbersOnly) past it.

// Request is what a span keeps of the request: the body and its members as
// the proxy decoded them (no copy on the request path), and with
// capture_content off only the members that are not content. The
// attributes are read from them off the request path.
type Request struct {
	raw    []byte // the body, for input.value; nil without content
	fields map[string]json.RawMessage
	// cut: content was left out because of the bounds.
	cut bool
}

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

// NewRequest picks what the span needs from a request's body and members
// (fields; nil when the body was not a JSON object): with content, all of
// them, else only the members that are not content. It only picks; it
// copies nothing.
func NewRequest(raw []byte, fields map[string]json.RawMessage, content bool) Request {
	if content {
		return Request{raw: raw, fields: fields}
	}
	rf := Request{fields: make(map[string]json.RawMessage, len(fields))}
	for k, v := range fields {
		if !contentMembers[k] {
			rf.fields[k] = v
		}
	}
	return rf
}

// Size is about the bytes the request holds.
func (rf *Request) Size() int {
	size := len(rf.raw)
	for k, v := range rf.fields {
		size += len(k) + len(v)
	}
	return size
}

// NumbersOnly is what a span keeps of a request past the proxy's bound:
// the numbers the GenAI attributes read; with content asked for, it says
// content was left out (mlx.content_truncated).
func NumbersOnly(fields map[string]json.RawMessage, content bool) Request {
	small := make(map[string]json.RawMessage, 4)
	for _, k := range []string{"temperature", "top_p", "max_tokens", "max_completion_tokens"} {
		if v, ok := fields[k]; ok && len(v) <= 32 {
			small[k] = v
		}
	}
	return Request{fields: small, cut: content}
}

// params are the members llm.invocation_parameters shows: every member but
// the content, with credential-like members redacted at any depth; with
// capture_content off only the sampling parameters (harmlessParams), as
// members such as user, metadata, chat_template_kwargs, prediction,
// response_format or stop can carry the very text the setting keeps off
// the wire.
func (rf *Request) params() map[string]json.RawMessage {
	if rf.fields == nil {
		return nil
	}
	params := make(map[string]json.RawMessage, len(rf.fields))
	for k, v := range rf.fields {
		switch {
		case contentMembers[k] || secretMember(k):
		case rf.raw == nil && !harmlessParams[k]:
			// capture_content off (keep left raw out).
		default:
			params[k] = redactDeep(v)
		}
	}
	return params
}

// harmlessParams are the request members that hold no text of the user's:
// what llm.invocation_parameters keeps with capture_content off.
var harmlessParams = map[string]bool{
	"model": true, "stream": true, "n": true, "seed": true, "logprobs": true, "top_logprobs": true,
	"max_tokens": true, "max_completion_tokens": true, "temperature": true, "top_p": true, "top_k": true, "min_p": true,
	"presence_penalty": true, "frequency_penalty": true, "repetition_penalty": true,
	"presence_context_size": true, "frequency_context_size": true, "repetition_context_size": true,
	"xtc_probability": true, "xtc_threshold": true, "num_draft_tokens": true,
}

// input is input.value: the body as the client sent it, re-encoded with
// its credential-like members redacted, at any depth, when it has any.
func (rf *Request) input() []byte {
	for k := range rf.fields {
		if secretMember(k) {
			return redactedBody(rf.fields)
		}
	}
	if mayHoldSecret(rf.raw) {
		return redactedBody(rf.fields)
	}
	return rf.raw
}

// number is the request's member k when it is a number.
func (rf *Request) number(k string) (float64, bool) { return number(rf.fields[k]) }

// redactedBody is the request re-encoded with the values of its
// credential-like members redacted at any depth (duplicate keys collapse
// to the last, as in Python).
func redactedBody(fields map[string]json.RawMessage) []byte {
	out := make(map[string]json.RawMessage, len(fields))
	for k, v := range fields {
		if secretMember(k) {
			v = json.RawMessage(`"` + Redacted + `"`)
		} else {
			v = redactDeep(v)
		}
		out[k] = v
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil
	}
	return b
}

// redactDeep returns v with the values of credential-like members of its
// objects, at any depth, Redacted (nested metadata.api_key,
// extra_headers.Authorization, a tool call's arguments as an object). A
// value that holds none comes back as it is.
func redactDeep(v json.RawMessage) json.RawMessage {
	if !mayHoldSecret(v) {
		return v
	}
	var tree any
	if json.Unmarshal(v, &tree) != nil {
		return v
	}
	b, err := json.Marshal(redactTree(tree))
	if err != nil {
		return v
	}
	return b
}

func redactTree(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if secretMember(k) {
				t[k] = Redacted
			} else {
				t[k] = redactTree(e)
			}
		}
	case []any:
		for i, e := range t {
			t[i] = redactTree(e)
		}
	case string:
		// JSON text in a string (tool call arguments): redacted inside.
		if strings.HasPrefix(strings.TrimSpace(t), "{") && mayHoldSecret([]byte(t)) {
			var inner map[string]any
			if json.Unmarshal([]byte(t), &inner) == nil {
				if b, err := json.Marshal(redactTree(inner)); err == nil {
					return string(b)
				}
			}
		}
	}
	return v
}

// secretKeys are the names secretMember takes, lower case. A body holds
// a secret member only where one of them is spelled, in any case, as a
// JSON key: "key", or "key\" inside a JSON string (a tool call's
// arguments are JSON text: {\"api_key\": ...}). A key written with
// escapes, "tok\u0065n", is not an accident to guard against.
var secretKeys = [][]byte{
	[]byte("api_key"), []byte("apikey"), []byte("api-key"), []byte("x-api-key"), []byte("authorization"),
	[]byte("access_token"), []byte("token"), []byte("password"), []byte("secret"), []byte("client_secret"),
}

// mayHoldSecret: b spells, in any case, a credential-like key. One pass
// over b's quotes (a span checks every request body it shows): at each
// quote, is one of secretKeys next, closed by a quote, or by an escaped
// quote when it was opened by one?
func mayHoldSecret(b []byte) bool {
	for i := 0; ; {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return false
		}
		i += q + 1
		escaped := i >= 2 && b[i-2] == '\\'
		for _, k := range secretKeys {
			if hasPrefixFold(b[i:], k) && closesKey(b[i+len(k):], escaped) {
				return true
			}
		}
	}
}

// closesKey: rest starts with the quote that ends a key, or with an
// escaped one when the key began with one.
func closesKey(rest []byte, escaped bool) bool {
	if len(rest) > 0 && rest[0] == '"' {
		return true
	}
	return escaped && len(rest) > 1 && rest[0] == '\\' && rest[1] == '"'
}

// hasPrefixFold is bytes.HasPrefix ignoring ASCII case; word is lower
// case.
func hasPrefixFold(b, word []byte) bool {
	if len(b) < len(word) {
		return false
	}
	for j, c := range word {
		if lower(b[j]) != c {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
