package pyjson

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// dumpOptions mirror the json.dumps arguments mlx_lm and Jinja's tojson use.
type dumpOptions struct {
	ensureASCII bool
	indent      string // "" = no indent
	hasIndent   bool
}

// Dumps is json.dumps(v) with default arguments.
func Dumps(v any) string {
	var b strings.Builder
	encodeValue(&b, v, dumpOptions{ensureASCII: true}, 0)
	return b.String()
}

// DumpsNoASCII is json.dumps(v, ensure_ascii=False).
func DumpsNoASCII(v any) string {
	var b strings.Builder
	encodeValue(&b, v, dumpOptions{ensureASCII: false}, 0)
	return b.String()
}

// DumpsIndent is json.dumps(v, indent=indent).
func DumpsIndent(v any, indent string) string {
	var b strings.Builder
	encodeValue(&b, v, dumpOptions{ensureASCII: true, indent: indent, hasIndent: true}, 0)
	return b.String()
}

func encodeValue(b *strings.Builder, v any, o dumpOptions, level int) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case Int:
		b.WriteString(x.Text)
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		b.WriteString(floatJSON(x))
	case string:
		encodeString(b, x, o.ensureASCII)
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
				if !o.hasIndent {
					b.WriteByte(' ')
				}
			}
			newline(b, o, level+1)
			encodeValue(b, e, o, level+1)
		}
		newline(b, o, level)
		b.WriteByte(']')
	case *Dict:
		if x.Len() == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteByte(',')
				if !o.hasIndent {
					b.WriteByte(' ')
				}
			}
			newline(b, o, level+1)
			encodeString(b, k, o.ensureASCII)
			b.WriteString(": ")
			encodeValue(b, x.vals[k], o, level+1)
		}
		newline(b, o, level)
		b.WriteByte('}')
	default:
		panic(fmt.Sprintf("pyjson: cannot encode %T", v))
	}
}

func newline(b *strings.Builder, o dumpOptions, level int) {
	if !o.hasIndent {
		return
	}
	b.WriteByte('\n')
	for i := 0; i < level; i++ {
		b.WriteString(o.indent)
	}
}

const hexDigits = "0123456789abcdef"

func writeU(b *strings.Builder, r rune) {
	b.WriteString(`\u`)
	b.WriteByte(hexDigits[(r>>12)&0xf])
	b.WriteByte(hexDigits[(r>>8)&0xf])
	b.WriteByte(hexDigits[(r>>4)&0xf])
	b.WriteByte(hexDigits[r&0xf])
}

// encodeString writes a JSON string like json.encoder's (py_)encode_basestring(_ascii).
// Lone surrogates are written from their generalized UTF-8 form (see
// decodeSurrogate).
func encodeString(b *strings.Builder, s string, ascii bool) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			if sr, ok := decodeSurrogate(s[i:]); ok {
				writeU(b, sr)
				i += 3
				continue
			}
			r = 0xfffd
		}
		i += size
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			switch {
			case r < 0x20:
				writeU(b, r)
			case !ascii || (r >= 0x20 && r <= 0x7e):
				b.WriteRune(r)
			case r > 0xffff:
				r -= 0x10000
				writeU(b, 0xd800|((r>>10)&0x3ff))
				writeU(b, 0xdc00|(r&0x3ff))
			default:
				writeU(b, r)
			}
		}
	}
	b.WriteByte('"')
}

// floatJSON is float.__repr__ plus json's NaN/Infinity spelling.
func floatJSON(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return FloatRepr(f)
}
