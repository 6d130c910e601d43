package jsonedit

import (
	"encoding/binary"
	"unicode/utf16"
)

// Reader reads JSON tokens from B at I, strictly: it says no (ok false) to
// anything that is not RFC 8259 JSON or that decoders read differently (a
// lone surrogate escape, an integer past int64), and its caller then reads
// the text the ordinary way (a library decoder, or the tolerant walkers in
// scan.go). It is the proxy's one reader of JSON tokens on the hot path:
// the stream chunk decoder and the logprobs fast path read with it.
// Nothing here allocates.
type Reader struct {
	B []byte
	I int
	// NonASCII: a string held a byte past ASCII, so the text's UTF-8 is to
	// be checked (Python's json.dumps escapes every such byte, but mlx_lm
	// dumps a tool call's arguments with ensure_ascii=False).
	NonASCII bool
}

// SkipSpace steps over white space.
func (r *Reader) SkipSpace() { r.I = SkipSpace(r.B, r.I) }

// Next skips white space and takes c if it is the next byte.
func (r *Reader) Next(c byte) bool {
	r.SkipSpace()
	if r.I < len(r.B) && r.B[r.I] == c {
		r.I++
		return true
	}
	return false
}

// Peek is the next byte past white space, 0 at the end.
func (r *Reader) Peek() byte {
	r.SkipSpace()
	if r.I < len(r.B) {
		return r.B[r.I]
	}
	return 0
}

// Word takes the literal w (true, false, null) if it is next.
func (r *Reader) Word(w string) bool {
	r.SkipSpace()
	if len(r.B)-r.I >= len(w) && string(r.B[r.I:r.I+len(w)]) == w {
		r.I += len(w)
		return true
	}
	return false
}

// Null takes a null if it is the next value.
func (r *Reader) Null() bool { return r.Word("null") }

// Member reads an object's next key and its colon, or the object's end
// (end true); first is whether no member was read yet. A key with an
// escape is refused: decoders match keys in ways (case folded, escapes
// undone) not worth following, and no key the proxy reads has one.
func (r *Reader) Member(first bool) (key []byte, end, ok bool) {
	if r.Next('}') {
		return nil, true, true
	}
	if !first && !r.Next(',') {
		return nil, false, false
	}
	raw, escaped, ok := r.Str()
	if !ok || escaped || !r.Next(':') {
		return nil, false, false
	}
	return raw, false, true
}

// Item reads the comma before an array's next value, or the array's end.
func (r *Reader) Item(first bool) (end, ok bool) {
	if r.Next(']') {
		return true, true
	}
	return false, first || r.Next(',')
}

// Str reads a string and returns its bytes between the quotes as they are
// (escaped: there is an escape to undo, AppendUnescaped). Control bytes,
// unknown escapes, \u without four hex digits and a surrogate escape that
// is not half of a pair are refused.
func (r *Reader) Str() (raw []byte, escaped, ok bool) {
	if !r.Next('"') {
		return nil, false, false
	}
	b, start := r.B, r.I
	for i := start; ; {
		i = plainRun(b, i)
		if i >= len(b) {
			return nil, false, false
		}
		switch c := b[i]; {
		case c == '"':
			r.I = i + 1
			return b[start:i], escaped, true
		case c == '\\':
			escaped = true
			n := escapeLen(b[i:])
			if n == 0 {
				return nil, false, false
			}
			i += n
		case c < 0x20:
			return nil, false, false
		default: // past ASCII
			r.NonASCII = true
			i++
		}
	}
}

// escapeLen is the length of the escape at the start of s, a surrogate
// pair as one; 0 for one Str refuses.
func escapeLen(s []byte) int {
	if len(s) < 2 {
		return 0
	}
	switch s[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		r, ok := Hex4(s)
		switch {
		case !ok:
			return 0
		case !utf16.IsSurrogate(r):
			return 6
		case r >= 0xdc00: // a low half first
			return 0
		}
		if lo, ok := Hex4(s[6:]); ok && utf16.DecodeRune(r, lo) != 0xfffd {
			return 12
		}
	}
	return 0
}

// plainRun is the index of the first byte at or after b[i] that a string
// cannot hold as it is: a quote, backslash, control byte or byte past
// ASCII. Eight at a time while it can (the text is mostly strings), then
// one at a time.
func plainRun(b []byte, i int) int {
	for i+8 <= len(b) && !hasSpecial(binary.LittleEndian.Uint64(b[i:])) {
		i += 8
	}
	for i < len(b) && plainByte[b[i]] {
		i++
	}
	return i
}

// hasSpecial: one of x's eight bytes is not plain (plainByte). A byte
// below n shows as (x - ones*n) &^ x having its high bit set, where no
// byte below it is below n (the borrow comes from one that is): so the
// test is exact for the word, if not for which byte.
func hasSpecial(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote, backslash := x^(ones*'"'), x^(ones*'\\')
	return ((x-ones*0x20)&^x|(quote-ones)&^quote|(backslash-ones)&^backslash|x)&highs != 0
}

// plainByte is true for the bytes plainRun skips.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// maxUintDigits keeps an integer well inside int64: decoders refuse one
// that overflows the field, and a longer one is left to them.
const maxUintDigits = 18

// Uint reads a non-negative integer as json.dumps writes one: no sign, no
// leading zero, no fraction or exponent.
func (r *Reader) Uint() (int, bool) {
	r.SkipSpace()
	b, i := r.B, r.I
	n, start := 0, i
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		n = n*10 + int(b[i]-'0')
	}
	switch digits := i - start; {
	case digits == 0 || digits > maxUintDigits || digits > 1 && b[start] == '0':
		return 0, false
	case i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E'):
		return 0, false
	}
	r.I = i
	return n, true
}

// Number reads a JSON number (Python's floats: -0.5, 1e-05) and returns
// its text: an optional minus, no leading zero, digits after a point and
// in an exponent.
func (r *Reader) Number() ([]byte, bool) {
	r.SkipSpace()
	b, i := r.B, r.I
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digitsEnd(b, i)
	default:
		return nil, false
	}
	if i < len(b) && b[i] == '.' {
		j := digitsEnd(b, i+1)
		if j == i+1 {
			return nil, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digitsEnd(b, i)
		if j == i {
			return nil, false
		}
		i = j
	}
	num := b[r.I:i]
	r.I = i
	return num, true
}

// Float reads a JSON number that a float64 holds finitely, rounded as
// strconv.ParseFloat rounds it.
func (r *Reader) Float() (float64, bool) {
	num, ok := r.Number()
	if !ok {
		return 0, false
	}
	return Number(num)
}

// digitsEnd is the index past the digits at b[i:].
func digitsEnd(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// MaxDepth is the deepest nesting Skip reads: far more than any answer
// has, and less than goccy/go-json's and encoding/json's limits, so that a
// value Skip reads a decoder reads too.
const MaxDepth = 1000

// Skip reads one value of any kind, strictly: brackets paired by kind,
// keys and strings as Str reads them, numbers as Number, the literals
// true, false and null (not Python's NaN or Infinity), nested at most
// MaxDepth deep. What follows the value is the caller's to check.
func (r *Reader) Skip() bool {
	var objects [MaxDepth/64 + 1]uint64 // bit n: the bracket open at depth n+1 is a '{'
	depth := 0
	for {
		// A value is next.
		switch c := r.Peek(); c {
		case '{', '[':
			if depth == MaxDepth {
				return false
			}
			r.I++
			w, bit := depth/64, uint64(1)<<(depth%64)
			if c == '{' {
				objects[w] |= bit
			} else {
				objects[w] &^= bit
			}
			depth++
			if r.Next(c + 2) { // '}' and ']' are two past their openers
				depth--
				break
			}
			if c == '{' && !r.key() {
				return false
			}
			continue
		case '"':
			if _, _, ok := r.Str(); !ok {
				return false
			}
		case 't':
			if !r.Word("true") {
				return false
			}
		case 'f':
			if !r.Word("false") {
				return false
			}
		case 'n':
			if !r.Word("null") {
				return false
			}
		default:
			if _, ok := r.Number(); !ok {
				return false
			}
		}
		// A value was read: what follows it, up to the next value.
		for {
			if depth == 0 {
				return true
			}
			d := depth - 1
			object := objects[d/64]>>(d%64)&1 == 1
			closer := byte(']')
			if object {
				closer = '}'
			}
			if r.Next(closer) {
				depth--
				continue
			}
			if !r.Next(',') || object && !r.key() {
				return false
			}
			break
		}
	}
}

// key reads a key of an object Skip reads, escapes and all, and its colon.
func (r *Reader) key() bool {
	_, _, ok := r.Str()
	return ok && r.Next(':')
}
