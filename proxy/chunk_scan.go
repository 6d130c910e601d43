package proxy

import (
	"encoding/binary"
	"unicode/utf16"
	"unicode/utf8"
)

// chunkScan reads JSON tokens from a chunk for chunkDecoder, strictly: it
// says no (ok false) to anything it is not sure every decoder reads alike,
// and the chunk is then decoded the ordinary way. Nothing here allocates.
type chunkScan struct {
	b []byte
	i int
	// nonASCII: a string held a byte past ASCII, so the chunk's UTF-8 is
	// to be checked (Python's json.dumps escapes all of them, but the
	// arguments of a tool call are dumped with ensure_ascii=False).
	nonASCII bool
	// key is where the key of the member last read starts, at its quote:
	// a member taken out of the chunk starts there (chunk_strip.go).
	key int
}

func (s *chunkScan) skipSpace() {
	i, b := s.i, s.b // in registers: the loop does not go through s
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	s.i = i
}

// next skips white space and takes c if it is the next byte.
func (s *chunkScan) next(c byte) bool {
	s.skipSpace()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// peek is the next byte past white space, 0 at the end.
func (s *chunkScan) peek() byte {
	s.skipSpace()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// null takes a null if it is the next value.
func (s *chunkScan) null() bool {
	if s.peek() == 'n' && len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

// member reads an object's next key and its colon, or the object's end:
// first is whether no member was read yet. A key with an escape is
// refused: none of the keys read here has one, and decoders match keys
// in ways (case folded, escapes undone) not worth following.
func (s *chunkScan) member(first bool) (key []byte, end, ok bool) {
	if s.next('}') {
		return nil, true, true
	}
	if !first && !s.next(',') {
		return nil, false, false
	}
	s.skipSpace()
	s.key = s.i
	raw, escaped, ok := s.str()
	if !ok || escaped || !s.next(':') {
		return nil, false, false
	}
	return raw, false, true
}

// item reads the comma before an array's next value, or the array's end.
func (s *chunkScan) item(first bool) (end, ok bool) {
	if s.next(']') {
		return true, true
	}
	return false, first || s.next(',')
}

// str reads a string and returns its bytes between the quotes, as they
// are (escaped says whether there is an escape to undo, unescape). Control
// bytes, unknown escapes and \u with no four hex digits are refused, as
// JSON refuses them.
func (s *chunkScan) str() (raw []byte, escaped, ok bool) {
	if !s.next('"') {
		return nil, false, false
	}
	start := s.i
	for s.i < len(s.b) {
		s.plainRun()
		if s.i == len(s.b) {
			break
		}
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return s.b[start : s.i-1], escaped, true
		case c == '\\':
			escaped = true
			if s.i+1 >= len(s.b) {
				return nil, false, false
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if _, ok := hex4(s.b[s.i+2:]); !ok {
					return nil, false, false
				}
				s.i += 6
			default:
				return nil, false, false
			}
		case c < 0x20:
			return nil, false, false
		default:
			if c >= 0x80 {
				s.nonASCII = true
			}
			s.i++
		}
	}
	return nil, false, false
}

// plainRun skips the bytes of a string that need no look: not a quote,
// backslash, control byte or byte past ASCII. Eight at a time while it can
// (a chunk is mostly strings), then one at a time.
func (s *chunkScan) plainRun() {
	i, b := s.i, s.b
	for i+8 <= len(b) && !hasSpecial(binary.LittleEndian.Uint64(b[i:])) {
		i += 8
	}
	for i < len(b) && plainByte[b[i]] {
		i++
	}
	s.i = i
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

// maxChunkDigits keeps an integer well inside int64: decoders refuse one
// that overflows the field, and a longer one is left to them.
const maxChunkDigits = 18

// uint reads a non-negative integer written as json.dumps writes one: no
// sign, no leading zero, no fraction or exponent.
func (s *chunkScan) uint() (int, bool) {
	s.skipSpace()
	n, digits := 0, 0
	for ; s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9'; s.i++ {
		if digits > 0 && n == 0 {
			return 0, false // a leading zero
		}
		n = n*10 + int(s.b[s.i]-'0')
		digits++
	}
	if digits == 0 || digits > maxChunkDigits || s.i < len(s.b) && isNumberTail(s.b[s.i]) {
		return 0, false
	}
	return n, true
}

// isNumberTail: c would carry on a number (fraction, exponent, more
// digits), which uint does not read.
func isNumberTail(c byte) bool {
	return c == '.' || c == 'e' || c == 'E' || c >= '0' && c <= '9'
}

// hex4 is the value of four hex digits at b's start.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// unescape appends raw (a string's bytes from str) to dst with its escapes
// undone. A surrogate that is not half of a pair is refused: decoders make
// it U+FFFD, and real chunks (Python escapes a character past U+FFFF as a
// pair) do not have one.
func unescape(dst, raw []byte) ([]byte, bool) {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			dst = append(dst, c)
			i++
			continue
		}
		switch e := raw[i+1]; e {
		case 'u':
			r, _ := hex4(raw[i+2:])
			i += 6
			if utf16.IsSurrogate(r) {
				if r >= 0xdc00 || i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
					return dst, false
				}
				lo, _ := hex4(raw[i+2:])
				if r = utf16.DecodeRune(r, lo); r == 0xfffd {
					return dst, false
				}
				i += 6
			}
			dst = utf8.AppendRune(dst, r)
		default:
			dst = append(dst, unescaped[e])
			i += 2
		}
	}
	return dst, true
}

// unescaped is the byte each one-letter escape stands for.
var unescaped = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}
