package proxy

// One pass over a chunk of a stream whose logprobs the proxy asked for
// (stream_logprobs.go): the logprobs are taken out of the client's bytes
// and the chunk decoded from the same reading, where appendStripped and
// decodeStripped read it twice (the strip pass walks the whole chunk, with
// jsonedit's general walkers, before the chunk decoder reads it again).

// chunkCut is a span of a chunk's data the client does not get: one
// choice's logprobs member with one separator, as jsonedit.Removal takes
// it out.
type chunkCut struct{ start, end int }

// decodeStripping is decode for a chunk of a stream the proxy asked
// logprobs for, in mlx_lm's layout (server.py's generate_response; see
// stream_logprobs.go): a choice may also have a logprobs member, of mlx_lm's
// kind (chunkScan.logprobs), which confidence.StripLogprobs removes with
// its separator. It is read, not decoded: the choice's Logprobs is its
// bytes, a slice of b lent as decodeStripped lends them (logprobsLent),
// and the member's span with its separator goes to d.cuts, for appendCut.
//
// Where it says yes, appendCut writes what appendStripped writes, and *c
// is what decodeStripped decodes from the two (FuzzOnePassStripMatchesTwoPasses);
// the rest (OpenAI's and the legacy layout, which are edited rather than
// removed, Python's NaN, anything decode refuses) is left to those two.
func (d *chunkDecoder) decodeStripping(b []byte, c *completionJSON) bool {
	d.stripping, d.cuts = true, d.cuts[:0]
	ok := d.decode(b, c)
	d.stripping = false
	// Lent as decodeStripped lends: a chunk with choices (one without
	// any, "logprobs" only in a string, has nothing to lend).
	c.logprobsLent = ok && len(c.Choices) > 0
	return ok
}

// appendCut appends data, the chunk decodeStripping read last, to dst
// without its cuts.
func (d *chunkDecoder) appendCut(dst, data []byte) []byte {
	at := 0
	for _, c := range d.cuts {
		dst = append(dst, data[at:c.start]...)
		at = c.end
	}
	return append(dst, data[at:]...)
}

// strippedChoice reads a choice after its '{', as choice does, and its
// logprobs member, whose cut is jsonedit.Removal's span: from its key to
// the next member's key, or, when it is the last member, from the end of
// the member before it (the member alone: from its key to its value's
// end).
func (d *chunkDecoder) strippedChoice(s *chunkScan, ch *choiceJSON, t *choiceTexts) bool {
	prevEnd := -1 // where the member before the one being read ends
	open := -1    // the logprobs cut, while no member after it is known
	lpPrev := -1  // where the member before the logprobs ends
	ok := readMembers(s, func(key []byte) (uint, bool) {
		if open >= 0 {
			d.cuts[open].end, open = s.key, -1
		}
		if string(key) != "logprobs" {
			bit, ok := d.choiceMember(s, ch, t, key)
			prevEnd = s.i
			return bit, ok
		}
		start := s.key
		v, ok := s.logprobs()
		ch.Logprobs = v
		d.cuts = append(d.cuts, chunkCut{start, s.i})
		open, lpPrev, prevEnd = len(d.cuts)-1, prevEnd, s.i
		return 1 << 4, ok
	})
	if ok && open >= 0 && lpPrev >= 0 {
		d.cuts[open].start = lpPrev
	}
	return ok
}

// maxLogprobsDepth bounds the nesting of a logprobs value read here
// (mlx_lm's is four deep), far below decodeStripped's (confidence.MaxPlainDepth); a
// uint64 holds the kind of each open bracket.
const maxLogprobsDepth = 64

// logprobs reads a logprobs value of mlx_lm's kind and returns its bytes:
// an object, strict JSON (no Python literal, no NUL byte, brackets paired
// by kind, so that goccy reads it whole as it is, confidence.Kept.Plain), whose
// keys have no escape and none is "bytes" or "token_logprobs": those mark
// OpenAI's layout and the legacy one, which confidence.StripLogprobs edits
// rather than removes (its classify reads less than this to tell them).
func (s *chunkScan) logprobs() ([]byte, bool) {
	if s.peek() != '{' {
		return nil, false
	}
	start := s.i
	var objects uint64 // bit n: the bracket open at depth n+1 is a '{'
	depth := 0
	for {
		// A value is next.
		switch c := s.peek(); c {
		case '{', '[':
			if depth == maxLogprobsDepth {
				return nil, false
			}
			s.i++
			objects = objects&^(1<<depth) | boolBit(c == '{')<<depth
			depth++
			if s.next(c + 2) { // '}' and ']' are two past their openers
				depth--
				break
			}
			if c == '{' && !s.logprobsKey() {
				return nil, false
			}
			continue
		case '"':
			if _, _, ok := s.str(); !ok {
				return nil, false
			}
		case 't':
			if !s.word("true") {
				return nil, false
			}
		case 'f':
			if !s.word("false") {
				return nil, false
			}
		case 'n':
			if !s.word("null") {
				return nil, false
			}
		default:
			if !s.number() {
				return nil, false
			}
		}
		// A value was read: what follows it, up to the next value.
		for {
			if depth == 0 {
				return s.b[start:s.i], true
			}
			closer, object := byte(']'), objects>>(depth-1)&1 == 1
			if object {
				closer = '}'
			}
			if s.next(closer) {
				depth--
				continue
			}
			if !s.next(',') || object && !s.logprobsKey() {
				return nil, false
			}
			break
		}
	}
}

func boolBit(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// logprobsKey reads a key of a logprobs value and its colon.
func (s *chunkScan) logprobsKey() bool {
	raw, escaped, ok := s.str()
	if !ok || escaped || string(raw) == "bytes" || string(raw) == "token_logprobs" {
		return false
	}
	return s.next(':')
}

// word takes w, a literal, if it is next.
func (s *chunkScan) word(w string) bool {
	if len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
		s.i += len(w)
		return true
	}
	return false
}

// number reads a JSON number (Python's floats: -0.5, 1e-05), strictly:
// an optional minus, no leading zero, digits after a point and in an
// exponent. What follows it is the caller's to check.
func (s *chunkScan) number() bool {
	s.skipSpace()
	i, b := s.i, s.b
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		if j := digits(b, i+1); j > i+1 {
			i = j
		} else {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return false
		}
		i = j
	}
	s.i = i
	return true
}

// digits is the index past the digits at b[i:].
func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}
