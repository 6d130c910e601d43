package confidence

import (
	"errors"
	"math"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// A small JSON scanner that works on byte spans of the original text.
//
// Why not encoding/json: mlx_lm writes its bodies with Python's json.dumps,
// which emits NaN, Infinity and -Infinity for non-finite floats; encoding/json
// rejects the whole document for one of them, and re-marshalling would change
// bytes (", " and ": " separators, key order, escapes) that StripLogprobs must
// give back unchanged. Why not gjson/sjson: gjson returns the first of
// duplicate keys where Python keeps the last, and neither reports member
// spans with their separators, which the byte-exact removal needs. The
// scanner below is tolerant (a scalar is whatever runs to the next
// delimiter; brackets are matched by depth, not by kind), never recurses,
// and never panics on any input: the fuzz tests hold it to that.

var errSyntax = errors.New("malformed JSON")

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipString returns the index after the string that opens at b[i] ('"'),
// and whether it holds escapes.
func skipString(b []byte, i int) (end int, escaped bool, err error) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '"':
			return j + 1, escaped, nil
		case '\\':
			escaped = true
			j++
		}
	}
	return len(b), escaped, errSyntax
}

func isDelim(c byte) bool {
	switch c {
	case ',', ':', '[', ']', '{', '}', '"':
		return true
	}
	return isSpace(c)
}

// skipValue returns the index after the value that starts at b[i].
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return i, errSyntax
	}
	switch b[i] {
	case '"':
		end, _, err := skipString(b, i)
		return end, err
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, _, err := skipString(b, j)
				if err != nil {
					return end, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return len(b), errSyntax
	}
	j := i
	for j < len(b) && !isDelim(b[j]) {
		j++
	}
	if j == i {
		return i, errSyntax
	}
	return j, nil
}

// member is one "key": value of an object, as spans of the text: the key
// with its quotes is b[ks:ke], the value b[vs:ve].
type member struct {
	ks, ke, vs, ve int
	escaped        bool // the key holds escapes: compare with keyIs
}

// eachMember walks the object that opens at b[i] ('{'). For every member
// it calls value with the value's start; value returns the value's end
// (skipValue, or a parser that reads it). Members whose value failed are
// not passed on and end the walk with the error. It returns the index
// after the object.
func eachMember(b []byte, i int, value func(m member) (int, error)) (int, error) {
	if i >= len(b) || b[i] != '{' {
		return i, errSyntax
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, errSyntax
		}
		ke, esc, err := skipString(b, i)
		if err != nil {
			return ke, err
		}
		j := skipSpace(b, ke)
		if j >= len(b) || b[j] != ':' {
			return j, errSyntax
		}
		m := member{ks: i, ke: ke, vs: skipSpace(b, j+1), escaped: esc}
		if m.ve, err = value(m); err != nil {
			return m.ve, err
		}
		k := skipSpace(b, m.ve)
		if k < len(b) && b[k] == ',' {
			i = skipSpace(b, k+1)
			continue
		}
		if k < len(b) && b[k] == '}' {
			return k + 1, nil
		}
		return k, errSyntax
	}
}

// eachElem walks the array that opens at b[i] ('['), like eachMember.
func eachElem(b []byte, i int, value func(vs int) (int, error)) (int, error) {
	if i >= len(b) || b[i] != '[' {
		return i, errSyntax
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		ve, err := value(i)
		if err != nil {
			return ve, err
		}
		k := skipSpace(b, ve)
		if k < len(b) && b[k] == ',' {
			i = skipSpace(b, k+1)
			continue
		}
		if k < len(b) && b[k] == ']' {
			return k + 1, nil
		}
		return k, errSyntax
	}
}

// keyIs reports whether the member's key is name.
func keyIs(b []byte, m member, name string) bool {
	if !m.escaped {
		return string(b[m.ks+1:m.ke-1]) == name
	}
	key, ok := appendString(nil, b[m.ks:m.ke])
	return ok && string(key) == name
}

// number reads a JSON number (or Python's NaN, Infinity, -Infinity) and
// reports whether it is finite.
func number(b []byte) (float64, bool) {
	if len(b) == 0 || len(b) > 64 {
		return 0, false
	}
	// Reject what ParseFloat takes but JSON never writes: hex, underscores.
	for _, c := range b {
		if c == '_' || c == 'x' || c == 'X' || c == 'p' || c == 'P' {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// integer reads a JSON integer literal (no fraction, no exponent).
func integer(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	return n, err == nil
}

// tokenID reads a token id: a non-negative integral number (Python may
// write it as an int; some engines write 12.0).
func tokenID(b []byte) (int, bool) {
	if n, ok := integer(b); ok {
		if n < 0 || n > math.MaxInt32 {
			return 0, false
		}
		return int(n), true
	}
	f, ok := number(b)
	if !ok || f < 0 || f > math.MaxInt32 || f != math.Trunc(f) {
		return 0, false
	}
	return int(f), true
}

// appendString appends the contents of the JSON string b (with quotes) to
// dst, unescaping it, and reports whether it was a well-formed string. It
// reads a string as encoding/json does (FuzzAppendStringMatchesEncodingJSON
// holds it to that), without its reflection and allocations: every token
// of every logprobs list goes through here.
func appendString(dst, b []byte) ([]byte, bool) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return dst, false
	}
	inner := b[1 : len(b)-1]
	plain := true
	for _, c := range inner {
		if c < 0x20 {
			return dst, false // JSON has no raw control characters in strings
		}
		if c == '\\' || c >= utf8.RuneSelf {
			plain = false
		}
	}
	if plain {
		return append(dst, inner...), true
	}
	return appendUnescaped(dst, inner)
}

// appendUnescaped appends the unescaped JSON string body s (between its
// quotes) to dst. As in encoding/json, invalid UTF-8 and a surrogate that
// is not half of a pair become U+FFFD; a bad escape is an error.
func appendUnescaped(dst, s []byte) ([]byte, bool) {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 >= len(s) {
				return dst, false
			}
			switch e := s[i+1]; e {
			case '"', '\\', '/':
				dst = append(dst, e)
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r, ok := hex4(s[i:])
				if !ok {
					return dst, false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					r2, ok := hex4(s[i:])
					if dec := utf16.DecodeRune(r, r2); ok && dec != unicode.ReplacementChar {
						r = dec
						i += 6
					} else {
						r = unicode.ReplacementChar
					}
				}
				dst = utf8.AppendRune(dst, r)
				continue
			default:
				return dst, false
			}
			i += 2
		case c < 0x20:
			return dst, false
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			i++
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = utf8.AppendRune(dst, unicode.ReplacementChar)
			} else {
				dst = append(dst, s[i:i+size]...)
			}
			i += size
		}
	}
	return dst, true
}

// hex4 reads the escape \uXXXX at the start of s.
func hex4(s []byte) (rune, bool) {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r*16 + rune(c)
	}
	return r, true
}
