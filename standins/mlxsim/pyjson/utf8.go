package pyjson

import (
	"fmt"
	"unicode/utf8"
)

// unicodeDecodeError is bytes.decode("utf-8") failing; Error() is str(e).
type unicodeDecodeError struct {
	start, end int // byte positions, end exclusive
	startByte  byte
	reason     string
}

func (e *unicodeDecodeError) Error() string {
	if e.end-e.start <= 1 {
		return fmt.Sprintf("'utf-8' codec can't decode byte 0x%02x in position %d: %s", e.startByte, e.start, e.reason)
	}
	return fmt.Sprintf("'utf-8' codec can't decode bytes in position %d-%d: %s", e.start, e.end-1, e.reason)
}

// DecodeUTF8 is bytes.decode() with Python's strict UTF-8 error reporting:
// the error's text is str(UnicodeDecodeError).
func DecodeUTF8(b []byte) (string, error) {
	if utf8.Valid(b) {
		return string(b), nil
	}
	for i := 0; i < len(b); {
		c := b[i]
		if c < 0x80 {
			i++
			continue
		}
		var need int
		lo, hi := byte(0x80), byte(0xbf)
		switch {
		case c >= 0xc2 && c <= 0xdf:
			need = 1
		case c == 0xe0:
			need, lo = 2, 0xa0
		case c == 0xed:
			need, hi = 2, 0x9f
		case c >= 0xe1 && c <= 0xef:
			need = 2
		case c == 0xf0:
			need, lo = 3, 0x90
		case c == 0xf4:
			need, hi = 3, 0x8f
		case c >= 0xf1 && c <= 0xf3:
			need = 3
		default:
			return "", &unicodeDecodeError{start: i, end: i + 1, startByte: c, reason: "invalid start byte"}
		}
		j := 1
		for ; j <= need; j++ {
			if i+j >= len(b) {
				return "", &unicodeDecodeError{start: i, end: len(b), startByte: c, reason: "unexpected end of data"}
			}
			x := b[i+j]
			l, h := byte(0x80), byte(0xbf)
			if j == 1 {
				l, h = lo, hi
			}
			if x < l || x > h {
				return "", &unicodeDecodeError{start: i, end: i + j, startByte: c, reason: "invalid continuation byte"}
			}
		}
		i += need + 1
	}
	return string(b), nil
}

// encodeSurrogate returns the generalized UTF-8 (WTF-8) bytes of a lone surrogate.
func encodeSurrogate(r rune) string {
	return string([]byte{0xe0 | byte(r>>12), 0x80 | byte((r>>6)&0x3f), 0x80 | byte(r&0x3f)})
}

// decodeSurrogate reads a lone surrogate's generalized UTF-8 bytes at the
// start of s.
func decodeSurrogate(s string) (rune, bool) {
	if len(s) < 3 || s[0] != 0xed || s[1] < 0xa0 || s[1] > 0xbf || s[2]&0xc0 != 0x80 {
		return 0, false
	}
	return rune(s[0]&0x0f)<<12 | rune(s[1]&0x3f)<<6 | rune(s[2]&0x3f), true
}
