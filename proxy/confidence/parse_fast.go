package confidence

import (
	"math"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/jsonedit"
)

// The fast path behind Parse: one pass over the "content" layout as the
// engines write it (mlx_lm's server.py json.dumps with ", " and ": ",
// OpenAI's compact or indented JSON), with no callbacks and no second scan
// of a value. It fills the same pending tokens as the generic parser
// (parse_shapes.go) and gives up, leaving the value to that parser, at the
// first thing it does not know how to read exactly as it would: another
// layout (legacy), an escaped or repeated key, a value of an unexpected
// kind (null, NaN, Infinity, a string id), a list entry that is not an
// object, a string the generic reader would reject, broken or truncated
// JSON. FuzzFastParseMatchesGeneric holds the two to the same results.

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

// fastObject reads the logprobs object at b[i] ('{'); ok false means the
// generic parser must read it (what was pending is then discarded).
func (p *parser) fastObject(i int) (shape Shape, ok bool) {
	b := p.b
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return ShapeUnknown, true
	}
	seen := false
	for {
		key, ki, ok := p.fastKey(i, true)
		if !ok {
			return 0, false
		}
		switch key {
		case keyContent:
			if seen || ki >= len(b) || b[ki] != '[' {
				return 0, false
			}
			seen = true
			if i, ok = p.fastContent(ki); !ok {
				return 0, false
			}
		case keyOther:
			var err error
			if i, err = jsonedit.SkipValue(b, ki); err != nil {
				return 0, false
			}
		default:
			return 0, false
		}
		var more bool
		if i, more, ok = next(b, i, '}'); !ok {
			return 0, false
		}
		if !more {
			break
		}
	}
	if seen {
		return ShapeContent, true
	}
	return ShapeUnknown, true
}

// fastKey reads the key at b[i] and its colon, and returns which key it is
// and where its value starts. An escaped key is not read (KeyIs decodes it).
func (p *parser) fastKey(i int, top bool) (key fastKey, vs int, ok bool) {
	b := p.b
	if i >= len(b) || b[i] != '"' {
		return 0, 0, false
	}
	j := i + 1
	for j < len(b) && b[j] != '"' && b[j] != '\\' {
		j++
	}
	if j >= len(b) || b[j] != '"' {
		return 0, 0, false
	}
	switch string(b[i+1 : j]) {
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
	j = skipWS(b, j+1)
	if j >= len(b) || b[j] != ':' {
		return 0, 0, false
	}
	return key, skipWS(b, j+1), true
}

// fastContent reads the "content" array at b[i] ('['): one entry per
// generated token, each an object.
func (p *parser) fastContent(i int) (int, bool) {
	b := p.b
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		var ok, more bool
		if i, ok = p.fastEntry(i); !ok {
			return 0, false
		}
		if i, more, ok = next(b, i, ']'); !ok {
			return 0, false
		}
		if !more {
			return i, true
		}
	}
}

// fastEntry reads one generated token's entry at b[i] ('{'), as content
// does in parse_shapes.go.
func (p *parser) fastEntry(i int) (int, bool) {
	mark := len(p.cands)
	t := pendingTok{tok: Token{Outer: Candidate{ID: -1}}}
	end, f, ok := p.fastFields(i, &t.tok.Outer, &t.outer, true)
	if !ok {
		return 0, false
	}
	t.cand = [2]int{mark, len(p.cands)}
	t.tok.Flags = f.flags(mark == len(p.cands))
	p.toks = append(p.toks, t)
	return end, true
}

// fastTopList reads a "top_logprobs" list at b[i] ('['); dropped reports
// candidates left out for want of a logprob.
func (p *parser) fastTopList(i int) (end int, dropped, ok bool) {
	b := p.b
	if i >= len(b) || b[i] != '[' {
		return 0, false, false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, false, true
	}
	for {
		c := pendingCand{c: Candidate{ID: -1}}
		var f entryFound
		if i, f, ok = p.fastFields(i, &c.c, &c.refs, false); !ok {
			return 0, false, false
		}
		if f.logprob {
			p.cands = append(p.cands, c)
		} else {
			dropped = true
		}
		var more bool
		if i, more, ok = next(b, i, ']'); !ok {
			return 0, false, false
		}
		if !more {
			return i, dropped, true
		}
	}
}

// fastFields reads the members of an entry (with its top list) or of a
// candidate (where a "top_logprobs" is skipped) at b[i] ('{') into c.
func (p *parser) fastFields(i int, c *Candidate, r *textRefs, entry bool) (end int, f entryFound, ok bool) {
	b := p.b
	if i >= len(b) || b[i] != '{' {
		return 0, f, false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, f, true
	}
	var seen uint8
	for {
		key, vs, ok := p.fastKey(i, false)
		if !ok || (key != keyOther && seen&(1<<key) != 0) {
			return 0, f, false
		}
		seen |= 1 << key
		switch {
		case key == keyTopLogprobs && entry:
			f.topList = true
			var dropped bool
			i, dropped, ok = p.fastTopList(vs)
			f.dropped = f.dropped || dropped
		case key == keyTopLogprobs:
			i, _, ok = p.fastMember(c, r, keyOther, vs)
		default:
			var lp bool
			i, lp, ok = p.fastMember(c, r, key, vs)
			f.logprob = f.logprob || lp
		}
		if !ok {
			return 0, f, false
		}
		var more bool
		if i, more, ok = next(b, i, '}'); !ok {
			return 0, f, false
		}
		if !more {
			return i, f, true
		}
	}
}

// fastMember reads the value at b[i] of one id, token, logprob or bytes
// member into c (skipping any other), as member does in parse_shapes.go.
func (p *parser) fastMember(c *Candidate, r *textRefs, key fastKey, i int) (end int, lp, ok bool) {
	b := p.b
	switch key {
	case keyLogprob:
		f, end, ok := fastNumber(b, i)
		c.Logprob = f
		return end, ok, ok
	case keyID:
		n, end := digits(b, i)
		if end == i || end-i > 10 || n > math.MaxInt32 {
			return 0, false, false
		}
		c.ID = int(n)
		return end, false, true
	case keyToken:
		r.tok, end, ok = p.fastString(i)
		return end, false, ok
	case keyBytes:
		r.byt, end, ok = p.fastBytes(i)
		c.HasBytes = ok
		return end, false, ok
	}
	end, err := jsonedit.SkipValue(b, i)
	return end, false, err == nil
}

// fastString copies the string at b[i] into the arena, unescaped, in the
// same pass that finds its end. It decodes what the engines write: plain
// ASCII, valid UTF-8, the short escapes and \uXXXX outside the surrogates
// (mlx_lm's json.dumps writes "Ġ" as "\u0120"); a surrogate pair, invalid
// UTF-8 or a bad escape goes to jsonedit.AppendString, whose results these
// are for the rest.
func (p *parser) fastString(i int) (span [2]int, end int, ok bool) {
	b := p.b
	if i >= len(b) || b[i] != '"' {
		return span, 0, false
	}
	start := len(p.arena)
	run := i + 1 // start of the bytes not copied yet
	for j := run; j < len(b); {
		c := b[j]
		switch {
		case c == '"':
			p.arena = append(p.arena, b[run:j]...)
			return [2]int{start, len(p.arena)}, j + 1, true
		case c == '\\':
			p.arena = append(p.arena, b[run:j]...)
			n := unescape(b[j:])
			if n == 0 {
				return p.slowString(i, start)
			}
			p.arena = appendEscaped(p.arena, b[j:j+n])
			j += n
			run = j
		case c < 0x20:
			return p.slowString(i, start)
		case c < utf8.RuneSelf:
			j++
		default:
			r, size := utf8.DecodeRune(b[j:])
			if r == utf8.RuneError && size == 1 {
				return p.slowString(i, start)
			}
			j += size
		}
	}
	return span, 0, false
}

// slowString reads the string at b[i] with the generic reader, dropping
// what fastString copied of it.
func (p *parser) slowString(i, start int) (span [2]int, end int, ok bool) {
	p.arena = p.arena[:start]
	end, _, err := jsonedit.SkipString(p.b, i)
	if err != nil {
		return span, 0, false
	}
	if p.arena, ok = jsonedit.AppendString(p.arena, p.b[i:end]); !ok {
		return span, 0, false
	}
	return [2]int{start, len(p.arena)}, end, true
}

// unescape is the length of the escape at the start of s, 0 for one that
// fastString leaves to the generic reader.
func unescape(s []byte) int {
	if len(s) < 2 {
		return 0
	}
	switch s[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if r, ok := jsonedit.Hex4(s); ok && !utf16.IsSurrogate(r) {
			return 6
		}
	}
	return 0
}

// appendEscaped appends what the escape e (as unescape measured it) stands for.
func appendEscaped(dst, e []byte) []byte {
	switch e[1] {
	case 'b':
		return append(dst, '\b')
	case 'f':
		return append(dst, '\f')
	case 'n':
		return append(dst, '\n')
	case 'r':
		return append(dst, '\r')
	case 't':
		return append(dst, '\t')
	case 'u':
		r, _ := jsonedit.Hex4(e)
		return utf8.AppendRune(dst, r)
	}
	return append(dst, e[1])
}

// fastBytes copies OpenAI's "bytes" at b[i] ([72, 105]) into the arena:
// integers of one to three digits up to 255, else the generic reader.
func (p *parser) fastBytes(i int) (span [2]int, end int, ok bool) {
	b := p.b
	if i >= len(b) || b[i] != '[' {
		return span, 0, false
	}
	start := len(p.arena)
	span = [2]int{start, start}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return span, i + 1, true
	}
	for {
		n, e := digits(b, i)
		if e == i || e-i > 3 || n > 255 {
			return span, 0, false
		}
		p.arena = append(p.arena, byte(n))
		var more bool
		if i, more, ok = next(b, e, ']'); !ok {
			return span, 0, false
		}
		if !more {
			return [2]int{start, len(p.arena)}, i, true
		}
	}
}

// next steps over the white space after a value to the comma (more) or
// the closing bracket, and past it.
func next(b []byte, i int, closing byte) (j int, more, ok bool) {
	i = skipWS(b, i)
	if i >= len(b) {
		return 0, false, false
	}
	switch b[i] {
	case ',':
		return skipWS(b, i+1), true, true
	case closing:
		return i + 1, false, true
	}
	return 0, false, false
}

// skipWS is jsonedit.SkipSpace, written out so that the common case (one
// space, or none) costs a compare.
func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// digits reads the run of decimal digits at b[i] (at most 19 are summed:
// callers take no more than ten).
func digits(b []byte, i int) (n uint64, end int) {
	for end = i; end < len(b) && b[end] >= '0' && b[end] <= '9'; end++ {
		if end-i < 19 {
			n = n*10 + uint64(b[end]-'0')
		}
	}
	return n, end
}
