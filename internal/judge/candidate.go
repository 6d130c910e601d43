package judge

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/internal/chatcontent"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/span/spankey"
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
	// Origin is the request's mlx.origin (user, judge, probe, bench, or a
	// configured one); "" when the trace does not say.
	Origin string
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

// originOf reads the proxy's mlx.origin from the top level of a trace's
// metadata or input (the opik exporter keeps it in the trace's metadata,
// Opik's OTLP mapping in its input), "" when neither has it.
func originOf(objs ...[]byte) string {
	for _, b := range objs {
		var m map[string]json.RawMessage
		if json.Unmarshal(b, &m) != nil {
			continue
		}
		var o string
		if json.Unmarshal(m[spankey.MlxOrigin], &o) == nil && o != "" {
			return o
		}
	}
	return ""
}

// request is the part of a chat completion request the judge reads.
type request struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// questionOf is the last user message of a trace's input, as the original
// took it; the request's model too. Content given as parts is joined by
// its text parts. The input is read in the shapes Opik returns:
//   - the request body itself: the opik exporter's traces (and Jaeger's
//     input.value);
//   - Opik's OTLP mapping of another client's OpenInference span, every
//     attribute under its full key: the body under "input.value" (an
//     object, or a string Opik could not parse), else the flattened
//     "llm.input_messages.<i>.message.role" and ".content".
func questionOf(body []byte) (question, model string) {
	var r request
	if json.Unmarshal(body, &r) != nil {
		return "", ""
	}
	if len(r.Messages) == 0 {
		return otlpQuestion(body)
	}
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if m.Role != "user" {
			continue
		}
		if q := strings.TrimSpace(chatcontent.Text(m.Content)); q != "" {
			return q, r.Model
		}
	}
	return "", r.Model
}

// answerOf is the assistant's content in a trace's output, in the shapes
// Opik returns: the assistant message ({"role":"assistant","content":...},
// the opik exporter's output and the proxy's output.value), an OpenAI
// completion ({"choices":[{"message":{...}}]} or {"choices":[{"text":...}]},
// what other clients' instrumentation puts in output.value), or Opik's
// OTLP mapping of it: "output.value" holding either, else the flattened
// "llm.output_messages.0.message.content".
func answerOf(out []byte) string {
	var o struct {
		Content json.RawMessage `json:"content"`
		Choices []struct {
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
			Text string `json:"text"`
		} `json:"choices"`
	}
	// The mapped attributes, under their full keys.
	var flat map[string]json.RawMessage
	if json.Unmarshal(out, &o) != nil || json.Unmarshal(out, &flat) != nil {
		return ""
	}
	switch {
	case len(o.Content) > 0:
		return strings.TrimSpace(chatcontent.Text(o.Content))
	case len(o.Choices) > 0 && len(o.Choices[0].Message.Content) > 0:
		return strings.TrimSpace(chatcontent.Text(o.Choices[0].Message.Content))
	case len(o.Choices) > 0:
		return strings.TrimSpace(o.Choices[0].Text)
	case len(flat[spankey.OutputValue]) > 0:
		if a := answerOf(unwrapJSON(flat[spankey.OutputValue])); a != "" {
			return a
		}
	}
	var text string
	_ = json.Unmarshal(flat[spankey.LlmOutputMessagesMessageContent(0)], &text)
	return strings.TrimSpace(text)
}

// otlpQuestion reads an input as Opik's OTLP mapping stores it (see
// questionOf).
func otlpQuestion(body []byte) (question, model string) {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return "", ""
	}
	if iv, ok := m[spankey.InputValue]; ok {
		inner := unwrapJSON(iv)
		var r request
		if json.Unmarshal(inner, &r) == nil && len(r.Messages) > 0 {
			return questionOf(inner)
		}
		model = r.Model
	}
	// The flattened messages: the last user message with text.
	best := -1
	for k, v := range m {
		rest, ok := strings.CutPrefix(k, "llm.input_messages.")
		if !ok {
			continue
		}
		idx, _, _ := strings.Cut(rest, ".")
		i, err := strconv.Atoi(idx)
		var role string
		if err != nil || k != spankey.LlmInputMessagesMessageRole(i) || json.Unmarshal(v, &role) != nil || role != "user" || i < best {
			continue
		}
		var text string
		if json.Unmarshal(m[spankey.LlmInputMessagesMessageContent(i)], &text) == nil && strings.TrimSpace(text) != "" {
			best, question = i, strings.TrimSpace(text)
		}
	}
	return question, model
}

// isJudgePrompt reports whether question is a judge request rendered from
// prompt: it starts with the prompt's text before its first field. The
// judge's own requests are not traced (X-Mlx-Trace: 0), but a client that
// instruments the judge, or another judge sharing the Opik project, would
// put them there: they are never judged.
func isJudgePrompt(prompt, question string) bool {
	head, _, _ := strings.Cut(prompt, "{")
	head = strings.TrimSpace(head)
	return len(head) >= 16 && strings.HasPrefix(strings.TrimSpace(question), head)
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
