package jsonedit

import (
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// AppendString appends the contents of the JSON string b (with quotes) to
// dst, unescaping it, and reports whether it was a well-formed string. It
// reads a string as encoding/json does (FuzzAppendStringMatchesEncodingJSON
// holds it to that), without its reflection and allocations: every token
// of every logprobs list goes through here.
func AppendString(dst, b []byte) ([]byte, bool) {
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
	return AppendUnescaped(dst, inner)
}

// AppendUnescaped appends the unescaped JSON string body s (between its
// quotes, as Reader.Str returns it) to dst. As in encoding/json, invalid UTF-8 and a surrogate that
// is not half of a pair become U+FFFD; a bad escape is an error.
func AppendUnescaped(dst, s []byte) ([]byte, bool) {
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
				r, ok := Hex4(s[i:])
				if !ok {
					return dst, false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					r2, ok := Hex4(s[i:])
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

// Hex4 reads the escape \uXXXX at the start of s.
func Hex4(s []byte) (rune, bool) {
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
