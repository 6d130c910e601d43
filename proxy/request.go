package proxy

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/jsonedit"
)

// routeOf says whether a request is a completion. The paths are the ones
// mlx_lm.server generates on (POST only; anything else it answers 404 or
// serves as a listing).
func routeOf(r *http.Request) Route {
	if r.Method != http.MethodPost {
		return RouteOther
	}
	switch r.URL.Path {
	case "/v1/chat/completions", "/chat/completions":
		return RouteChat
	case "/v1/completions":
		return RouteText
	}
	return RouteOther
}

// defaultModelName is what mlx_lm calls the model it was started with; a
// request without `model` gets it.
const defaultModelName = "default_model"

// parseRequest fills rec from a completion request's members (parse.go
// read them). It reads only the fields it needs and treats a wrong type
// as absent; the checks (allow.go) refuse what the engine must not see.
// Keys are matched exactly, as Python's dict does (encoding/json's struct
// decoding would also accept "Model").
func (p *Proxy) parseRequest(rec *Record, fields map[string]json.RawMessage) {
	rec.Model = p.cfg.modelLabel()
	rec.Kind = KindChat
	rec.Temperature, rec.HasTemperature = p.cfg.DefaultTemperature, true
	rec.RequestParsed = true

	var model string
	if json.Unmarshal(fields["model"], &model) == nil && model != "" && model != defaultModelName {
		rec.Model = model
	}
	rec.Streaming = truthy(fields["stream"])
	if raw, ok := fields["temperature"]; ok && !isNull(raw) {
		var t float64
		rec.HasTemperature = json.Unmarshal(raw, &t) == nil
		rec.Temperature = t
	}
	var tools []json.RawMessage
	rec.ToolsOffered = json.Unmarshal(fields["tools"], &tools) == nil && len(tools) > 0
	if enablesThinking(fields) {
		rec.Kind = KindReasoning
	}
	rec.ClientLogprobs = asksLogprobs(fields)
	if rec.ToolsOffered {
		// Only the ungrounded heuristic reads it, and only with tools.
		rec.ToolResults = holdsToolResults(fields["messages"])
	}
	if rec.Streaming {
		rec.includeUsage = asksUsage(fields["stream_options"])
	}
}

// asksLogprobs: the request asks for logprobs, as mlx_lm reads it
// (logprobs true, or top_logprobs above 0, which alone makes it send the
// top-N layout).
func asksLogprobs(fields map[string]json.RawMessage) bool {
	if isTrue(fields["logprobs"]) {
		return true
	}
	var n int
	return json.Unmarshal(fields["top_logprobs"], &n) == nil && n > 0
}

// holdsToolResults: a message of the conversation has role "tool".
func holdsToolResults(raw json.RawMessage) bool {
	var msgs []struct {
		Role json.RawMessage `json:"role"`
	}
	if json.Unmarshal(raw, &msgs) != nil {
		return false
	}
	for _, m := range msgs {
		if string(bytes.TrimSpace(m.Role)) == `"tool"` {
			return true
		}
	}
	return false
}

// enablesThinking: mlx_lm reads enable_thinking from chat_template_kwargs;
// the original proxy read a top-level enable_thinking (which mlx_lm
// ignores). Either, set to true, makes the request a reasoning request.
func enablesThinking(fields map[string]json.RawMessage) bool {
	var kwargs map[string]json.RawMessage
	if json.Unmarshal(fields["chat_template_kwargs"], &kwargs) == nil && isTrue(kwargs["enable_thinking"]) {
		return true
	}
	return isTrue(fields["enable_thinking"])
}

func isTrue(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("true"))
}

func isNull(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// truthy is Python's truth value of a JSON value: mlx_lm does
// `if self.stream:`, so "stream": 1 or "stream": "yes" stream too.
func truthy(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return false
	}
	switch raw[0] {
	case 't':
		return true
	case 'f', 'n':
		return false
	case '"':
		return len(raw) > 2
	case '[', '{':
		return len(bytes.TrimSpace(raw[1:len(raw)-1])) > 0
	}
	var f float64
	return json.Unmarshal(raw, &f) == nil && f != 0
}

// withUsageRequested returns the body to send upstream for a streamed
// request: with stream_options.include_usage set to true when the client
// did not ask for usage, so that token counts are exact. injected reports
// that the engine's usage chunk must be removed before the client sees it.
//
// mlx_lm reads stream_options["include_usage"] when stream_options is not
// None: a stream_options without the key raises after the last chunk and
// the stream ends without [DONE]. The proxy sets the key in that case too,
// so such a client gets a well-formed stream. A stream_options that is not
// an object is left alone: the engine's answer to it is the engine's.
//
// streamOptions is the body's stream_options member as parseRequest read
// it (nil when absent). The body is edited in place (the rest of its bytes
// are unchanged), not re-encoded.
func withUsageRequested(body []byte, streamOptions json.RawMessage) (out []byte, injected bool) {
	opts := streamOptions
	if opts == nil || isNull(opts) {
		out, err := jsonedit.Set(body, jsonedit.First, jsonedit.KV{Key: "stream_options", Value: []byte(`{"include_usage": true}`)})
		return out, err == nil
	}
	var o map[string]json.RawMessage
	if json.Unmarshal(opts, &o) != nil || o == nil {
		return body, false
	}
	if inc, ok := o["include_usage"]; ok && truthy(inc) {
		return body, false
	}
	newOpts, err := jsonedit.Set(opts, jsonedit.First, jsonedit.KV{Key: "include_usage", Value: []byte("true")})
	if err != nil {
		return body, false
	}
	out, err = jsonedit.Set(body, jsonedit.First, jsonedit.KV{Key: "stream_options", Value: newOpts})
	return out, err == nil
}

// asksUsage: the request's stream_options asks for the usage chunk
// (include_usage truthy).
func asksUsage(streamOptions json.RawMessage) bool {
	var o map[string]json.RawMessage
	if json.Unmarshal(streamOptions, &o) != nil {
		return false
	}
	return truthy(o["include_usage"])
}
