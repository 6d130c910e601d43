package wire

import (
	"unicode/utf8"
	"unsafe"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/jsonedit"
)

// ChunkDecoder decodes the chunks mlx_lm streams, in one pass over the
// bytes and without allocating, where Decode (goccy) copies each
// chunk whole and allocates its choices, delta and strings: a chunk is
// decoded for every token. decode reads only what it is sure every decoder
// reads alike, and says no to the rest, which is then decoded the ordinary
// way; where it says yes, *c is what Decode gives from a zero
// Completion (FuzzChunkDecoderMatchesDecodeCompletion).
//
// The layout is APIHandler.generate_response's, dumped by json.dumps
// (mlx_lm v0.31.3 server.py): members id, system_fingerprint, object,
// model, created, choices and, in the usage chunk (handle_completion's
// completion_usage_response), usage; a choice's index, finish_reason and
// delta or text; a delta's role, content, reasoning and tool_calls
// (ToolCallFormatter). Members are read in any order and with any white
// space, but an unknown or repeated one, a logprobs (never streamed by
// mlx_lm: handle_completion passes none to a stream's chunks;
// DecodeStripped reads those the proxy asked for), a
// number that is not a plain integer, a lone surrogate or invalid UTF-8 is
// left to Decode.
//
// The text of a chunk (content, reasoning, text) is lent: it is a slice of
// the chunk's bytes, or of the decoder's buffer where it had escapes, valid
// until the chunk's bytes change or the next decode; the record copies it
// (appendText, appendReasoning), and release drops it. What the record
// keeps as it is (id, model, finish_reason, tool calls, usage) is the
// decoder's own: id and model, the same in every chunk, are copied when
// they change.
type ChunkDecoder struct {
	choices []Choice
	// texts holds what the choices' pointers point at, one per choice.
	texts []*choiceTexts
	used  int // texts in use since the last release
	// id and model are the last chunk's, owned.
	id, model string
	buf       []byte // unescaped text
}

// choiceTexts holds one choice's strings and delta.
type choiceTexts struct {
	finish, text, content, reasoning string
	delta                            Message
}

// maxChunkChoices bounds the decoder's own storage; mlx_lm streams one
// choice.
const maxChunkChoices = 16

// maxChunkBuffer: a decoder whose buffer grew past this drops it rather
// than keep it for the rest of the stream.
const maxChunkBuffer = 64 << 10

// decode decodes b into c and says whether it did; if not, c is as it was.
func (d *ChunkDecoder) Decode(b []byte, c *Completion) bool {
	d.Release()
	if cap(d.buf) > maxChunkBuffer {
		d.buf = nil
	}
	d.buf = d.buf[:0]
	s := jsonedit.Reader{B: b}
	var out Completion
	if !s.Next('{') || !readMembers(&s, func(key []byte) (uint, bool) { return d.top(&s, &out, key) }) {
		return false
	}
	s.SkipSpace()
	if s.I != len(b) || s.NonASCII && !utf8.Valid(b) {
		return false
	}
	*c = out
	return true
}

// release drops the lent text the decoder holds, and the logprobs
// DecodeStripped lent its choices: the chunk's bytes may change once it is
// applied.
func (d *ChunkDecoder) Release() {
	for _, t := range d.texts[:d.used] {
		*t = choiceTexts{}
	}
	d.used = 0
	clear(d.choices[:cap(d.choices)])
}

// readMembers reads an object's members after its '{': member reads the
// value of one and says which bit stands for its key (0 for a key not
// read). A key seen twice is refused: decoders keep the last, and real
// chunks have none.
func readMembers(s *jsonedit.Reader, member func(key []byte) (uint, bool)) bool {
	var seen uint
	for first := true; ; first = false {
		key, end, ok := s.Member(first)
		if !ok {
			return false
		}
		if end {
			return true
		}
		bit, ok := member(key)
		if !ok || bit == 0 || seen&bit != 0 {
			return false
		}
		seen |= bit
	}
}

// top reads one member of the chunk.
func (d *ChunkDecoder) top(s *jsonedit.Reader, c *Completion, key []byte) (bit uint, ok bool) {
	switch string(key) {
	case "id":
		c.ID, ok = d.same(s, &d.id)
		return 1 << 0, ok
	case "model":
		c.Model, ok = d.same(s, &d.model)
		return 1 << 1, ok
	case "system_fingerprint":
		_, _, ok = s.Str()
		return 1 << 2, ok
	case "object":
		_, _, ok = s.Str()
		return 1 << 3, ok
	case "created":
		_, ok = s.Uint()
		return 1 << 4, ok
	case "choices":
		c.Choices, ok = d.choiceList(s)
		return 1 << 5, ok
	case "usage":
		c.Usage, ok = readUsage(s)
		return 1 << 6, ok
	}
	return 0, false
}

// choiceList reads the choices, into the decoder's own slice.
func (d *ChunkDecoder) choiceList(s *jsonedit.Reader) ([]Choice, bool) {
	if s.Null() {
		return nil, true
	}
	if !s.Next('[') {
		return nil, false
	}
	if d.choices == nil {
		d.choices = make([]Choice, 0, 1)
	}
	list := d.choices[:0]
	for first := true; ; first = false {
		end, ok := s.Item(first)
		if !ok || !end && len(list) == maxChunkChoices {
			return nil, false
		}
		if end {
			break
		}
		list = append(list, Choice{})
		if !d.choice(s, &list[len(list)-1], d.textsFor(len(list)-1)) {
			return nil, false
		}
	}
	d.choices = list[:0]
	return list, true
}

// textsFor is the storage for choice i, cleared.
func (d *ChunkDecoder) textsFor(i int) *choiceTexts {
	if i == len(d.texts) {
		d.texts = append(d.texts, new(choiceTexts))
	}
	d.used = max(d.used, i+1)
	t := d.texts[i]
	*t = choiceTexts{}
	return t
}

func (d *ChunkDecoder) choice(s *jsonedit.Reader, ch *Choice, t *choiceTexts) bool {
	if !s.Next('{') {
		return false
	}
	return readMembers(s, func(key []byte) (uint, bool) { return d.choiceMember(s, ch, t, key) })
}

// choiceMember reads one member of a choice but its logprobs.
func (d *ChunkDecoder) choiceMember(s *jsonedit.Reader, ch *Choice, t *choiceTexts, key []byte) (bit uint, ok bool) {
	switch string(key) {
	case "index":
		ch.Index, ok = s.Uint()
		return 1 << 0, ok
	case "finish_reason":
		if s.Null() {
			return 1 << 1, true
		}
		t.finish, ok = d.finishReason(s)
		ch.FinishReason = &t.finish
		return 1 << 1, ok
	case "text":
		ch.Text, ok = d.lentOrNull(s, &t.text)
		return 1 << 2, ok
	case "delta":
		if s.Null() {
			return 1 << 3, true
		}
		ch.Delta = &t.delta
		return 1 << 3, s.Next('{') && d.delta(s, t)
	}
	return 0, false
}

// delta reads a delta after its '{' into t.delta.
func (d *ChunkDecoder) delta(s *jsonedit.Reader, t *choiceTexts) bool {
	m := &t.delta
	return readMembers(s, func(key []byte) (bit uint, ok bool) {
		switch string(key) {
		case "role":
			_, _, ok = s.Str()
			return 1 << 0, ok
		case "content":
			m.Content, ok = d.lentOrNull(s, &t.content)
			return 1 << 1, ok
		case "reasoning":
			m.Reasoning, ok = d.lentOrNull(s, &t.reasoning)
			return 1 << 2, ok
		case "tool_calls":
			m.ToolCalls, ok = d.toolCalls(s)
			return 1 << 3, ok
		}
		return 0, false
	})
}

// toolCalls reads a delta's calls, mlx_lm's layout ({"function": {"name",
// "arguments"}, "type", "id", "index"}, v0.31.3 server.py,
// ToolCallFormatter). They are rare
// (one delta per call) and the record keeps their strings: they are
// allocated.
func (d *ChunkDecoder) toolCalls(s *jsonedit.Reader) ([]ToolCall, bool) {
	if s.Null() {
		return nil, true
	}
	if !s.Next('[') {
		return nil, false
	}
	calls := []ToolCall{}
	for first := true; ; first = false {
		end, ok := s.Item(first)
		if !ok {
			return nil, false
		}
		if end {
			return calls, true
		}
		calls = append(calls, ToolCall{})
		if !d.toolCall(s, &calls[len(calls)-1]) {
			return nil, false
		}
	}
}

func (d *ChunkDecoder) toolCall(s *jsonedit.Reader, tc *ToolCall) bool {
	if !s.Next('{') {
		return false
	}
	return readMembers(s, func(key []byte) (bit uint, ok bool) {
		switch string(key) {
		case "function":
			return 1 << 0, s.Next('{') && readMembers(s, func(key []byte) (bit uint, ok bool) {
				switch string(key) {
				case "name":
					tc.Function.Name, ok = d.owned(s)
					return 1 << 0, ok
				case "arguments":
					tc.Function.Arguments, ok = d.owned(s)
					return 1 << 1, ok
				}
				return 0, false
			})
		case "type":
			tc.Type, ok = d.owned(s)
			return 1 << 1, ok
		case "id":
			tc.ID, ok = d.owned(s)
			return 1 << 2, ok
		case "index":
			tc.Index, ok = intOrNull(s)
			return 1 << 3, ok
		}
		return 0, false
	})
}

// readUsage reads the usage member (v0.31.3 server.py,
// completion_usage_response), allocated: it
// comes once a stream.
func readUsage(s *jsonedit.Reader) (*Usage, bool) {
	if s.Null() {
		return nil, true
	}
	if !s.Next('{') {
		return nil, false
	}
	u := new(Usage)
	ok := readMembers(s, func(key []byte) (bit uint, ok bool) {
		switch string(key) {
		case "prompt_tokens":
			u.PromptTokens, ok = s.Uint()
			return 1 << 0, ok
		case "completion_tokens":
			u.CompletionTokens, ok = s.Uint()
			return 1 << 1, ok
		case "total_tokens":
			u.TotalTokens, ok = s.Uint()
			return 1 << 2, ok
		case "prompt_tokens_details":
			if s.Null() {
				return 1 << 3, true
			}
			u.PromptTokensDetails = new(PromptDetails)
			return 1 << 3, s.Next('{') && readMembers(s, func(key []byte) (uint, bool) {
				if string(key) != "cached_tokens" {
					return 0, false
				}
				n, ok := intOrNull(s)
				u.PromptTokensDetails.CachedTokens = n
				return 1, ok
			})
		case "completion_tokens_details":
			if s.Null() {
				return 1 << 4, true
			}
			u.CompletionTokensDetails = new(CompletionDetails)
			return 1 << 4, s.Next('{') && readMembers(s, func(key []byte) (uint, bool) {
				if string(key) != "reasoning_tokens" {
					return 0, false
				}
				n, ok := intOrNull(s)
				u.CompletionTokensDetails.ReasoningTokens = n
				return 1, ok
			})
		}
		return 0, false
	})
	return u, ok
}

func intOrNull(s *jsonedit.Reader) (*int, bool) {
	if s.Null() {
		return nil, true
	}
	n, ok := s.Uint()
	return &n, ok
}

// lentOrNull reads a string, lent (see ChunkDecoder), into *dst and
// returns dst; or a null, and returns nil.
func (d *ChunkDecoder) lentOrNull(s *jsonedit.Reader, dst *string) (*string, bool) {
	if s.Null() {
		return nil, true
	}
	raw, escaped, ok := s.Str()
	if !ok {
		return nil, false
	}
	if escaped {
		start := len(d.buf)
		if d.buf, ok = jsonedit.AppendUnescaped(d.buf, raw); !ok {
			return nil, false
		}
		raw = d.buf[start:]
	}
	*dst = unsafe.String(unsafe.SliceData(raw), len(raw))
	return dst, true
}

// same reads a string that is most often *last (the id and model every
// chunk repeats): it is then *last, and otherwise a copy, kept in *last.
func (d *ChunkDecoder) same(s *jsonedit.Reader, last *string) (string, bool) {
	raw, escaped, ok := s.Str()
	if !ok {
		return "", false
	}
	if !escaped && string(raw) == *last {
		return *last, true
	}
	v, ok := d.copyOf(raw, escaped)
	*last = v
	return v, ok
}

// finishReason reads a finish_reason, one of mlx_lm's without a copy.
func (d *ChunkDecoder) finishReason(s *jsonedit.Reader) (string, bool) {
	raw, escaped, ok := s.Str()
	if !ok {
		return "", false
	}
	switch string(raw) {
	case "stop":
		return "stop", true
	case "length":
		return "length", true
	case "tool_calls":
		return "tool_calls", true
	}
	return d.copyOf(raw, escaped)
}

// owned reads a string, copied.
func (d *ChunkDecoder) owned(s *jsonedit.Reader) (string, bool) {
	raw, escaped, ok := s.Str()
	if !ok {
		return "", false
	}
	return d.copyOf(raw, escaped)
}

// copyOf is a string's value, copied: raw is a string's bytes as str
// returns them.
func (d *ChunkDecoder) copyOf(raw []byte, escaped bool) (string, bool) {
	if !escaped {
		return string(raw), true
	}
	start := len(d.buf)
	var ok bool
	d.buf, ok = jsonedit.AppendUnescaped(d.buf, raw)
	v := string(d.buf[start:])
	d.buf = d.buf[:start]
	return v, ok
}
