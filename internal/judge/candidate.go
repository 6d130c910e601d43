package judge

import (
	"encoding/json"
	"strings"
	"time"
)

// Candidate is one recent trace that may be judged.
type Candidate struct {
	// OpikID is the trace's Opik id: read from Opik, or derived from the
	// OTel trace id (internal/opikid) as the opik exporter stamps it.
	OpikID string
	// TraceID and SpanID are the judged span's OTel ids (HasIDs false when
	// the source does not give them).
	TraceID [16]byte
	SpanID  [8]byte
	HasIDs  bool
	Start   time.Time
	// Model is the model the request asked for (the body's "model").
	Model string
	// Question is the last user message, Answer the assistant's content;
	// empty when the trace has none (a /v1/completions prompt, a tool call
	// with no text, content left out of the span).
	Question, Answer string
	// Scored names the scores the trace already has; nil when the source
	// cannot tell (Jaeger), and the loop remembers what it judged instead.
	Scored map[string]bool
}

// complete reports whether the trace has every score named.
func (c *Candidate) complete(names []string) bool {
	if c.Scored == nil {
		return false
	}
	for _, n := range names {
		if !c.Scored[n] {
			return false
		}
	}
	return true
}

// key identifies a candidate in the loop's memory.
func (c *Candidate) key() string {
	if c.OpikID != "" {
		return c.OpikID
	}
	return string(c.TraceID[:]) + string(c.SpanID[:])
}

// request is the part of a chat completion request the judge reads.
type request struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// questionOf is the last user message of a request body, as the original
// took it; its model too. Content given as parts is joined by its text
// parts.
func questionOf(body []byte) (question, model string) {
	var r request
	if json.Unmarshal(body, &r) != nil {
		return "", ""
	}
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if m.Role != "user" {
			continue
		}
		if q := strings.TrimSpace(contentText(m.Content)); q != "" {
			return q, r.Model
		}
	}
	return "", r.Model
}

func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var texts []string
	for _, p := range parts {
		if p.Type == "text" && p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// answerOf is the assistant's content in an output value
// ({"role":"assistant","content":...}, the proxy's output.value).
func answerOf(out []byte) string {
	var o struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(out, &o) != nil {
		return ""
	}
	return strings.TrimSpace(contentText(o.Content))
}

// unwrapJSON turns a JSON string holding JSON into that JSON: Opik may
// keep an attribute as the string it was sent as.
func unwrapJSON(raw json.RawMessage) []byte {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []byte(s)
	}
	return raw
}
