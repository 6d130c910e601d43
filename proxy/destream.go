package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/jsonedit"
)

// destream turns a non-streamed chat completion into the stream mlx_lm
// would have sent for it, so that a streaming client parses it as it
// parses the engine's own: the same id, system_fingerprint, model and
// created; "object": "chat.completion.chunk"; each choice as a chunk of
// reasoning, a chunk of content, a chunk of tool calls (each with its
// "index", as mlx_lm streams them) and a chunk with the finish reason; the
// usage chunk only when the client asked for it; then [DONE]. Values are
// copied byte for byte from the answer, so strings keep Python's escaping.
// Logprobs are left out: mlx_lm never streams them.
func destream(body []byte, includeUsage bool) ([]byte, error) {
	if fixed, changed := jsonedit.NullPythonLiterals(body); changed {
		body = fixed // logprobs of -inf: dropped anyway
	}
	top, err := objectMembers(body)
	if err != nil {
		return nil, err
	}
	rawChoices, ok := top.get("choices")
	if !ok {
		return nil, errors.New("the answer has no choices")
	}
	var choices []json.RawMessage
	if err := json.Unmarshal(rawChoices, &choices); err != nil {
		return nil, fmt.Errorf("choices: %w", err)
	}

	var out bytes.Buffer
	for _, raw := range choices {
		events, err := choiceEvents(raw)
		if err != nil {
			return nil, err
		}
		for _, ev := range events {
			writeEvent(&out, top, "chat.completion.chunk", ev, nil)
		}
	}
	if usage, ok := top.get("usage"); ok && includeUsage {
		writeEvent(&out, top, "chat.completion", nil, usage)
	}
	out.WriteString("data: [DONE]\n\n")
	return out.Bytes(), nil
}

// writeEvent writes one `data: {...}` event: the answer's own members in
// their order, with object set, choices holding choice (none when nil) and
// usage only when given.
func writeEvent(out *bytes.Buffer, top members, object string, choice, usage []byte) {
	out.WriteString("data: {")
	n := 0
	member := func(key string, value []byte) {
		if n > 0 {
			out.WriteString(", ")
		}
		n++
		out.Write(quote(key))
		out.WriteString(": ")
		out.Write(value)
	}
	for _, m := range top {
		switch m.key {
		case "object":
			member("object", quote(object))
		case "choices":
			if choice == nil {
				member("choices", []byte("[]"))
			} else {
				member("choices", append(append([]byte("["), choice...), ']'))
			}
		case "usage":
			if usage != nil {
				member("usage", usage)
			}
		default:
			member(m.key, m.value)
		}
	}
	out.WriteString("}\n\n")
}

// choiceEvents are the choice objects of the chunks of one choice.
func choiceEvents(raw []byte) ([][]byte, error) {
	c, err := objectMembers(raw)
	if err != nil {
		return nil, fmt.Errorf("choice: %w", err)
	}
	index := c.getOr("index", []byte("0"))
	finish := c.getOr("finish_reason", []byte("null"))
	var msg members
	if m, ok := c.get("message"); ok && !isNull(m) {
		if msg, err = objectMembers(m); err != nil {
			return nil, fmt.Errorf("message: %w", err)
		}
	}
	role := msg.getOr("role", []byte(`"assistant"`))

	delta := func(finish []byte, extra ...[]byte) []byte {
		var b bytes.Buffer
		b.WriteString(`{"index": `)
		b.Write(index)
		b.WriteString(`, "finish_reason": `)
		b.Write(finish)
		b.WriteString(`, "delta": {"role": `)
		b.Write(role)
		for i := 0; i+1 < len(extra); i += 2 {
			b.WriteString(", ")
			b.Write(extra[i])
			b.WriteString(": ")
			b.Write(extra[i+1])
		}
		b.WriteString("}}")
		return b.Bytes()
	}

	// mlx_lm sends a chunk only when there is text, reasoning or a tool
	// call; reasoning comes first, as the model wrote it first.
	var events [][]byte
	if r, ok := msg.get("reasoning"); ok && nonEmptyString(r) {
		events = append(events, delta([]byte("null"), []byte(`"reasoning"`), r))
	}
	if t, ok := msg.get("content"); ok && nonEmptyString(t) {
		events = append(events, delta([]byte("null"), []byte(`"content"`), t))
	}
	if tc, ok := msg.get("tool_calls"); ok && !isNull(tc) && !bytes.Equal(bytes.TrimSpace(tc), []byte("[]")) {
		calls, err := indexedToolCalls(tc)
		if err != nil {
			return nil, err
		}
		events = append(events, delta([]byte("null"), []byte(`"tool_calls"`), calls))
	}
	// The finish reason comes alone, as mlx_lm sends it after the model
	// closed its last tool call: clients take that chunk as the end of
	// the call.
	final := delta(finish)
	return append(events, final), nil
}

// indexedToolCalls gives each call of a tool_calls array its position as
// "index", added last as mlx_lm adds it, unless it has one.
func indexedToolCalls(raw []byte) ([]byte, error) {
	var calls []json.RawMessage
	if err := json.Unmarshal(raw, &calls); err != nil {
		return nil, fmt.Errorf("tool_calls: %w", err)
	}
	var b bytes.Buffer
	b.WriteByte('[')
	for i, call := range calls {
		if i > 0 {
			b.WriteString(", ")
		}
		// call is valid JSON (encoding/json read the array), without white
		// space around it.
		o, err := jsonedit.ScanObject(call)
		if err != nil {
			b.Write(call) // not an object: the client gets it as the engine wrote it
			continue
		}
		if _, has := o.Last("index"); has {
			b.Write(call)
			continue
		}
		b.Write(o.Set(jsonedit.Close, jsonedit.KV{Key: "index", Value: strconv.AppendInt(nil, int64(i), 10)}))
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}

// member is one member of a JSON object: its key and its value's bytes as
// they were.
type member struct {
	key   string
	value json.RawMessage
}

type members []member

// get returns the value of the last member named key (Python keeps the
// last of duplicate keys).
func (ms members) get(key string) ([]byte, bool) {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].key == key {
			return ms[i].value, true
		}
	}
	return nil, false
}

func (ms members) getOr(key string, def []byte) []byte {
	if v, ok := ms.get(key); ok {
		return v
	}
	return def
}

// objectMembers lists the members of the JSON object b in order.
func objectMembers(b []byte) (members, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var out members
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return out, nil
}

func nonEmptyString(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 2 && raw[0] == '"'
}

// quote is a JSON string as Python's json.dumps writes it for the ASCII
// keys and values the proxy writes itself.
func quote(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}
