package confidence

import (
	"math"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/jsonedit"
)

// The fast path behind Parse: one pass over the "content" layout as the
// engines write it (mlx_lm's server.py json.dumps with ", " and ": ",
// OpenAI's compact or indented JSON), with jsonedit's strict Reader, no
// callbacks and no second scan of a value. It fills the same pending
// tokens as the generic parser (parse_shapes.go) and gives up, leaving the
// value to that parser, at the first thing it does not know how to read
// exactly as it would: another layout (legacy), an escaped or repeated
// key, a value of an unexpected kind (null, NaN, Infinity, a string id), a
// list entry that is not an object, anything the Reader refuses, broken or
// truncated JSON. FuzzFastParseMatchesGeneric holds the two to the same
// results.

// fastKey is a member key the fast path reads; every other key's value is
// skipped, as the generic parser does.
type fastKey uint8

const (
	keyOther fastKey = iota
	keyID
	keyToken
	keyLogprob
	keyBytes
	keyTopLogprobs
	keyContent
	keyLegacy // token_logprobs, tokens, top_logprobs at the top level
)

// keyOf says which key name is, at the top level of the value or in an
// entry.
func keyOf(name []byte, top bool) fastKey {
	key := keyOther
	switch string(name) {
	case "id":
		key = keyID
	case "token":
		key = keyToken
	case "logprob":
		key = keyLogprob
	case "bytes":
		key = keyBytes
	case "top_logprobs":
		key = keyTopLogprobs
		if top {
			key = keyLegacy
		}
	case "content":
		key = keyContent
	case "token_logprobs", "tokens":
		key = keyLegacy
	}
	if top && key < keyContent {
		key = keyOther // id, token… mean nothing at the top level
	}
	if !top && key > keyTopLogprobs {
		key = keyOther // content, tokens… mean nothing in an entry
	}
	return key
}

// fastObject reads the logprobs object at p.b[i] ('{'); ok false means the
// generic parser must read it (what was pending is then discarded).
func (p *parser) fastObject(i int) (shape Shape, ok bool) {
	r := &jsonedit.Reader{B: p.b, I: i + 1}
	seen := false
	for first := true; ; first = false {
		name, end, ok := r.Member(first)
		switch {
		case !ok:
			return 0, false
		case end:
			if seen {
				return ShapeContent, true
			}
			return ShapeUnknown, true
		}
		switch keyOf(name, true) {
		case keyContent:
			if seen || !p.fastContent(r) {
				return 0, false
			}
			seen = true
		case keyOther:
			if !r.Skip() {
				return 0, false
			}
		default:
			return 0, false
		}
	}
}

// fastContent reads the "content" array: one entry per generated token,
// each an object.
func (p *parser) fastContent(r *jsonedit.Reader) bool {
	if !r.Next('[') {
		return false
	}
	for first := true; ; first = false {
		end, ok := r.Item(first)
		switch {
		case !ok:
			return false
		case end:
			return true
		}
		mark := len(p.cands)
		t := pendingTok{tok: Token{Outer: Candidate{ID: -1}}}
		f, ok := p.fastFields(r, &t.tok.Outer, &t.outer, true)
		if !ok {
			return false
		}
		t.cand = [2]int{mark, len(p.cands)}
		t.tok.Flags = f.flags(mark == len(p.cands))
		p.toks = append(p.toks, t)
	}
}

// fastTopList reads a "top_logprobs" list; dropped reports candidates
// left out for want of a logprob.
func (p *parser) fastTopList(r *jsonedit.Reader) (dropped, ok bool) {
	if !r.Next('[') {
		return false, false
	}
	for first := true; ; first = false {
		end, ok := r.Item(first)
		switch {
		case !ok:
			return false, false
		case end:
			return dropped, true
		}
		c := pendingCand{c: Candidate{ID: -1}}
		f, ok := p.fastFields(r, &c.c, &c.refs, false)
		switch {
		case !ok:
			return false, false
		case f.logprob:
			p.cands = append(p.cands, c)
		default:
			dropped = true
		}
	}
}

// fastFields reads the members of an entry (with its top list) or of a
// candidate (where a "top_logprobs" is skipped) into c.
func (p *parser) fastFields(r *jsonedit.Reader, c *Candidate, refs *textRefs, entry bool) (f entryFound, ok bool) {
	if !r.Next('{') {
		return f, false
	}
	var seen uint8
	for first := true; ; first = false {
		name, end, ok := r.Member(first)
		switch {
		case !ok:
			return f, false
		case end:
			return f, true
		}
		key := keyOf(name, false)
		if key != keyOther && seen&(1<<key) != 0 {
			return f, false
		}
		seen |= 1 << key
		switch {
		case key == keyTopLogprobs && entry:
			f.topList = true
			var dropped bool
			dropped, ok = p.fastTopList(r)
			f.dropped = f.dropped || dropped
		case key == keyLogprob:
			c.Logprob, ok = r.Float()
			f.logprob = ok
		case key == keyID:
			var n int
			n, ok = r.Uint()
			ok = ok && n <= math.MaxInt32
			c.ID = n
		case key == keyToken:
			refs.tok, ok = p.fastString(r)
		case key == keyBytes:
			refs.byt, ok = p.fastBytes(r)
			c.HasBytes = ok
		default:
			ok = r.Skip()
		}
		if !ok {
			return f, false
		}
	}
}

// fastString copies the string next in r into the arena, unescaped.
func (p *parser) fastString(r *jsonedit.Reader) (span [2]int, ok bool) {
	start := len(p.arena)
	r.NonASCII = false
	raw, escaped, ok := r.Str()
	switch {
	case !ok:
		return span, false
	case escaped || r.NonASCII: // invalid UTF-8 becomes U+FFFD, as in AppendString
		p.arena, ok = jsonedit.AppendUnescaped(p.arena, raw)
	default:
		p.arena = append(p.arena, raw...)
	}
	return [2]int{start, len(p.arena)}, ok
}

// fastBytes copies OpenAI's "bytes" ([72, 105]) into the arena: integers
// up to 255, else the generic reader.
func (p *parser) fastBytes(r *jsonedit.Reader) (span [2]int, ok bool) {
	start := len(p.arena)
	if !r.Next('[') {
		return span, false
	}
	for first := true; ; first = false {
		end, ok := r.Item(first)
		switch {
		case !ok:
			return span, false
		case end:
			return [2]int{start, len(p.arena)}, true
		}
		n, ok := r.Uint()
		if !ok || n > 255 {
			return span, false
		}
		p.arena = append(p.arena, byte(n))
	}
}
