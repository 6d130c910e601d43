package mlxsim

// A JSON codec that behaves like CPython's json module (3.12, C accelerator).
//
// encoding/json cannot be used, in either direction:
//
//   - Encoding: mlx_lm builds every body with json.dumps, i.e. separators ", "
//     and ": ", keys in dict insertion order (not sorted, not struct order),
//     ensure_ascii (every non-ASCII character as \uXXXX, astral characters as
//     surrogate pairs, lowercase hex), floats in Python repr (1e-05, 1.0,
//     -0.00390625, 1e+16) and NaN/Infinity literals. encoding/json writes
//     compact separators, escapes <, > and & instead, leaves non-ASCII raw and
//     formats floats differently.
//   - Decoding: mlx_lm's validation depends on Python types: 5 is an int but
//     5.0 is a float ("max_tokens must be of type int"), true is also an int,
//     NaN and Infinity parse, duplicate keys keep the first position and the
//     last value. The 400 body quotes Python's exact error text, e.g.
//     "Expecting value: line 1 column 1 (char 0)", with positions counted in
//     code points. encoding/json gives none of that.
//
// Values are represented as: nil (None), bool, PyInt (int), float64 (float),
// string (str), []any (list) and *Dict (dict).

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// PyInt is a Python int as decoded from JSON. Text keeps the literal (Python
// ints are unbounded); V is the value saturated to the int64 range.
type PyInt struct {
	Text string
	V    int64
}

func newPyInt(text string) PyInt {
	if text == "-0" {
		text = "0"
	}
	v, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		if strings.HasPrefix(text, "-") {
			v = math.MinInt64
		} else {
			v = math.MaxInt64
		}
	}
	return PyInt{Text: text, V: v}
}

// Dict is an insertion-ordered string-keyed dict, like a Python dict built
// from JSON or from a literal.
type Dict struct {
	keys []string
	vals map[string]any
}

// NewDict builds a dict from alternating keys and values.
func NewDict(kv ...any) *Dict {
	d := &Dict{vals: make(map[string]any, len(kv)/2)}
	for i := 0; i+1 < len(kv); i += 2 {
		d.Set(kv[i].(string), kv[i+1])
	}
	return d
}

// Set stores a value; an existing key keeps its position (Python semantics).
func (d *Dict) Set(k string, v any) {
	if d.vals == nil {
		d.vals = map[string]any{}
	}
	if _, ok := d.vals[k]; !ok {
		d.keys = append(d.keys, k)
	}
	d.vals[k] = v
}

// Get returns the value and whether the key is present.
func (d *Dict) Get(k string) (any, bool) {
	if d == nil {
		return nil, false
	}
	v, ok := d.vals[k]
	return v, ok
}

// GetDefault is dict.get(k, def).
func (d *Dict) GetDefault(k string, def any) any {
	if v, ok := d.Get(k); ok {
		return v
	}
	return def
}

// Keys returns the keys in insertion order.
func (d *Dict) Keys() []string {
	if d == nil {
		return nil
	}
	return d.keys
}

// Len is len(d).
func (d *Dict) Len() int {
	if d == nil {
		return 0
	}
	return len(d.keys)
}

// Copy is a shallow copy.
func (d *Dict) Copy() *Dict {
	c := &Dict{vals: map[string]any{}}
	for _, k := range d.Keys() {
		c.Set(k, d.vals[k])
	}
	return c
}

// ---------------------------------------------------------------- encoding

// dumpOptions mirror the json.dumps arguments mlx_lm and Jinja's tojson use.
type dumpOptions struct {
	ensureASCII bool
	indent      string // "" = no indent
	hasIndent   bool
}

// pyDumps is json.dumps(v) with default arguments.
func pyDumps(v any) string {
	var b strings.Builder
	encodeValue(&b, v, dumpOptions{ensureASCII: true}, 0)
	return b.String()
}

// pyDumpsNoASCII is json.dumps(v, ensure_ascii=False).
func pyDumpsNoASCII(v any) string {
	var b strings.Builder
	encodeValue(&b, v, dumpOptions{ensureASCII: false}, 0)
	return b.String()
}

// pyDumpsIndent is json.dumps(v, indent=indent).
func pyDumpsIndent(v any, indent string) string {
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
	case PyInt:
		b.WriteString(x.Text)
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		b.WriteString(pyFloatJSON(x))
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
		panic(fmt.Sprintf("mlxsim: cannot encode %T", v))
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
// Lone surrogates, which Python strings may hold, are carried in Go strings
// as their 3-byte generalized UTF-8 form (see decodeSurrogate).
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

// encodeSurrogate returns the generalized UTF-8 (WTF-8) bytes of a lone surrogate.
func encodeSurrogate(r rune) string {
	return string([]byte{0xe0 | byte(r>>12), 0x80 | byte((r>>6)&0x3f), 0x80 | byte(r&0x3f)})
}

func decodeSurrogate(s string) (rune, bool) {
	if len(s) < 3 || s[0] != 0xed || s[1] < 0xa0 || s[1] > 0xbf || s[2]&0xc0 != 0x80 {
		return 0, false
	}
	return rune(s[0]&0x0f)<<12 | rune(s[1]&0x3f)<<6 | rune(s[2]&0x3f), true
}

// pyFloatJSON is float.__repr__ plus json's NaN/Infinity spelling.
func pyFloatJSON(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return pyFloatRepr(f)
}

// pyFloatRepr is repr(float): the shortest round-tripping digits, in
// positional notation when the decimal exponent is in [-4, 16), otherwise in
// exponent notation with at least two exponent digits.
func pyFloatRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	sign := ""
	if math.Signbit(f) {
		sign = "-"
		f = -f
	}
	if f == 0 {
		return sign + "0.0"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, expStr, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	decpt := exp + 1
	if decpt <= -4 || decpt > 16 {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		es := "+"
		if exp < 0 {
			es = "-"
			exp = -exp
		}
		return fmt.Sprintf("%s%se%s%02d", sign, m, es, exp)
	}
	switch {
	case decpt <= 0:
		return sign + "0." + strings.Repeat("0", -decpt) + digits
	case decpt >= len(digits):
		return sign + digits + strings.Repeat("0", decpt-len(digits)) + ".0"
	default:
		return sign + digits[:decpt] + "." + digits[decpt:]
	}
}

// ---------------------------------------------------------------- decoding

// JSONDecodeError is json.JSONDecodeError; Error() is str(e).
type JSONDecodeError struct {
	Msg    string
	Pos    int // in code points
	Lineno int
	Colno  int
}

func (e *JSONDecodeError) Error() string {
	return fmt.Sprintf("%s: line %d column %d (char %d)", e.Msg, e.Lineno, e.Colno, e.Pos)
}

// RecursionError is raised for nesting deeper than Python's recursion limit.
type RecursionError struct{ What string }

func (e *RecursionError) Error() string {
	return "maximum recursion depth exceeded while decoding a JSON " + e.What + " from a unicode string"
}

// maxJSONDepth approximates the nesting at which CPython's scanner hits the
// recursion limit when called from a request handler thread.
const maxJSONDepth = 980

type stopIteration struct{ pos int }

func (s *stopIteration) Error() string { return "StopIteration" }

type pyDecoder struct {
	s     []rune
	depth int
}

func newDecodeError(s []rune, msg string, pos int) *JSONDecodeError {
	line := 1
	last := -1
	for i := 0; i < pos && i < len(s); i++ {
		if s[i] == '\n' {
			line++
			last = i
		}
	}
	return &JSONDecodeError{Msg: msg, Pos: pos, Lineno: line, Colno: pos - last}
}

// pyLoads is json.loads(s) for a str (already decoded from UTF-8).
// The error is a *JSONDecodeError or a *RecursionError.
func pyLoads(str string) (any, error) {
	s := []rune(str)
	if len(s) > 0 && s[0] == 0xfeff {
		return nil, newDecodeError(s, "Unexpected UTF-8 BOM (decode using utf-8-sig)", 0)
	}
	d := &pyDecoder{s: s}
	idx := d.skipWS(0)
	v, end, err := d.scanOnce(idx)
	if err != nil {
		if si, ok := err.(*stopIteration); ok {
			return nil, newDecodeError(s, "Expecting value", si.pos)
		}
		return nil, err
	}
	end = d.skipWS(end)
	if end != len(s) {
		return nil, newDecodeError(s, "Extra data", end)
	}
	return v, nil
}

func isJSONWS(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }

func (d *pyDecoder) skipWS(i int) int {
	for i < len(d.s) && isJSONWS(d.s[i]) {
		i++
	}
	return i
}

func (d *pyDecoder) hasPrefix(i int, lit string) bool {
	rs := []rune(lit)
	if i+len(rs) > len(d.s) {
		return false
	}
	for k, r := range rs {
		if d.s[i+k] != r {
			return false
		}
	}
	return true
}

func (d *pyDecoder) scanOnce(idx int) (any, int, error) {
	s := d.s
	if idx >= len(s) {
		return nil, 0, &stopIteration{idx}
	}
	switch s[idx] {
	case '"':
		str, end, err := d.scanString(idx + 1)
		return str, end, err
	case '{':
		d.depth++
		if d.depth > maxJSONDepth {
			return nil, 0, &RecursionError{"object"}
		}
		v, end, err := d.parseObject(idx + 1)
		d.depth--
		return v, end, err
	case '[':
		d.depth++
		if d.depth > maxJSONDepth {
			return nil, 0, &RecursionError{"array"}
		}
		v, end, err := d.parseArray(idx + 1)
		d.depth--
		return v, end, err
	case 'n':
		if d.hasPrefix(idx, "null") {
			return nil, idx + 4, nil
		}
	case 't':
		if d.hasPrefix(idx, "true") {
			return true, idx + 4, nil
		}
	case 'f':
		if d.hasPrefix(idx, "false") {
			return false, idx + 5, nil
		}
	case 'N':
		if d.hasPrefix(idx, "NaN") {
			return math.NaN(), idx + 3, nil
		}
	case 'I':
		if d.hasPrefix(idx, "Infinity") {
			return math.Inf(1), idx + 8, nil
		}
	case '-':
		if d.hasPrefix(idx, "-Infinity") {
			return math.Inf(-1), idx + 9, nil
		}
	}
	return d.matchNumber(idx)
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

func (d *pyDecoder) matchNumber(start int) (any, int, error) {
	s := d.s
	end := len(s) - 1
	idx := start
	if s[idx] == '-' {
		idx++
		if idx > end {
			return nil, 0, &stopIteration{start}
		}
	}
	switch {
	case s[idx] >= '1' && s[idx] <= '9':
		idx++
		for idx <= end && isDigit(s[idx]) {
			idx++
		}
	case s[idx] == '0':
		idx++
	default:
		return nil, 0, &stopIteration{start}
	}
	isFloat := false
	if idx < end && s[idx] == '.' && isDigit(s[idx+1]) {
		isFloat = true
		idx += 2
		for idx <= end && isDigit(s[idx]) {
			idx++
		}
	}
	if idx < end && (s[idx] == 'e' || s[idx] == 'E') {
		eStart := idx
		idx++
		if idx < end && (s[idx] == '-' || s[idx] == '+') {
			idx++
		}
		for idx <= end && isDigit(s[idx]) {
			idx++
		}
		if isDigit(s[idx-1]) {
			isFloat = true
		} else {
			idx = eStart
		}
	}
	lit := string(s[start:idx])
	if isFloat {
		f, err := strconv.ParseFloat(lit, 64)
		if err != nil && !math.IsInf(f, 0) && f != 0 {
			return nil, 0, &stopIteration{start}
		}
		return f, idx, nil
	}
	return newPyInt(lit), idx, nil
}

func hexVal(r rune) (rune, bool) {
	switch {
	case r >= '0' && r <= '9':
		return r - '0', true
	case r >= 'a' && r <= 'f':
		return r - 'a' + 10, true
	case r >= 'A' && r <= 'F':
		return r - 'A' + 10, true
	}
	return 0, false
}

// scanString follows _json.c scanstring_unicode with strict=True.
func (d *pyDecoder) scanString(end int) (string, int, error) {
	s := d.s
	n := len(s)
	begin := end - 1
	var b strings.Builder
	for {
		var c rune
		next := end
		for ; next < n; next++ {
			c = s[next]
			if c == '"' || c == '\\' {
				break
			}
			if c <= 0x1f {
				return "", 0, newDecodeError(s, "Invalid control character at", next)
			}
		}
		if next >= n || !(c == '"' || c == '\\') {
			return "", 0, newDecodeError(s, "Unterminated string starting at", begin)
		}
		for _, r := range s[end:next] {
			b.WriteRune(r)
		}
		next++
		if c == '"' {
			end = next
			break
		}
		if next == n {
			return "", 0, newDecodeError(s, "Unterminated string starting at", begin)
		}
		c = s[next]
		if c != 'u' {
			end = next + 1
			switch c {
			case '"', '\\', '/':
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			default:
				return "", 0, newDecodeError(s, `Invalid \escape`, end-2)
			}
			b.WriteRune(c)
			continue
		}
		c = 0
		next++
		end = next + 4
		if end >= n {
			return "", 0, newDecodeError(s, `Invalid \uXXXX escape`, next-1)
		}
		for ; next < end; next++ {
			h, ok := hexVal(s[next])
			if !ok {
				return "", 0, newDecodeError(s, `Invalid \uXXXX escape`, end-5)
			}
			c = c<<4 | h
		}
		if c >= 0xd800 && c <= 0xdbff && end+6 < n && s[next] == '\\' && s[next+1] == 'u' {
			next += 2
			var c2 rune
			end += 6
			for ; next < end; next++ {
				h, ok := hexVal(s[next])
				if !ok {
					return "", 0, newDecodeError(s, `Invalid \uXXXX escape`, end-5)
				}
				c2 = c2<<4 | h
			}
			if c2 >= 0xdc00 && c2 <= 0xdfff {
				c = 0x10000 + ((c - 0xd800) << 10) + (c2 - 0xdc00)
			} else {
				end -= 6
			}
		}
		if c >= 0xd800 && c <= 0xdfff {
			b.WriteString(encodeSurrogate(c))
		} else {
			b.WriteRune(c)
		}
	}
	return b.String(), end, nil
}

func (d *pyDecoder) parseObject(idx int) (any, int, error) {
	s := d.s
	endIdx := len(s) - 1
	obj := &Dict{vals: map[string]any{}}
	idx = d.skipWS(idx)
	if idx > endIdx || s[idx] != '}' {
		for {
			if idx > endIdx || s[idx] != '"' {
				return nil, 0, newDecodeError(s, "Expecting property name enclosed in double quotes", idx)
			}
			key, next, err := d.scanString(idx + 1)
			if err != nil {
				return nil, 0, err
			}
			idx = d.skipWS(next)
			if idx > endIdx || s[idx] != ':' {
				return nil, 0, newDecodeError(s, "Expecting ':' delimiter", idx)
			}
			idx = d.skipWS(idx + 1)
			val, next, err := d.scanOnce(idx)
			if err != nil {
				return nil, 0, err
			}
			obj.Set(key, val)
			idx = d.skipWS(next)
			if idx <= endIdx && s[idx] == '}' {
				break
			}
			if idx > endIdx || s[idx] != ',' {
				return nil, 0, newDecodeError(s, "Expecting ',' delimiter", idx)
			}
			idx = d.skipWS(idx + 1)
		}
	}
	return obj, idx + 1, nil
}

func (d *pyDecoder) parseArray(idx int) (any, int, error) {
	s := d.s
	endIdx := len(s) - 1
	arr := []any{}
	idx = d.skipWS(idx)
	if idx > endIdx || s[idx] != ']' {
		for {
			val, next, err := d.scanOnce(idx)
			if err != nil {
				return nil, 0, err
			}
			arr = append(arr, val)
			idx = d.skipWS(next)
			if idx <= endIdx && s[idx] == ']' {
				break
			}
			if idx > endIdx || s[idx] != ',' {
				return nil, 0, newDecodeError(s, "Expecting ',' delimiter", idx)
			}
			idx = d.skipWS(idx + 1)
		}
	}
	return arr, idx + 1, nil
}

// ---------------------------------------------------------------- Python value helpers

// pyTypeName is type(v).__name__.
func pyTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case PyInt, int, int64:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case []any:
		return "list"
	case *Dict:
		return "dict"
	}
	return "object"
}

// pyTruthy is bool(v).
func pyTruthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case PyInt:
		return x.V != 0
	case float64:
		return x != 0
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case *Dict:
		return x.Len() > 0
	}
	return true
}

// pyRepr is repr(v) for the simple values that appear in error messages.
func pyRepr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case PyInt:
		return x.Text
	case float64:
		return pyFloatRepr(x)
	case string:
		return pyStrRepr(x)
	}
	return pyDumps(v)
}

// pyStrRepr is repr(str): single quotes unless the string holds a single
// quote and no double quote.
func pyStrRepr(s string) string {
	q := byte('\'')
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// ---------------------------------------------------------------- UTF-8

// UnicodeDecodeError is bytes.decode("utf-8") failing.
type UnicodeDecodeError struct {
	Start, End int // byte positions, End exclusive
	Byte       byte
	Reason     string
}

func (e *UnicodeDecodeError) Error() string {
	if e.End-e.Start <= 1 {
		return fmt.Sprintf("'utf-8' codec can't decode byte 0x%02x in position %d: %s", e.Byte, e.Start, e.Reason)
	}
	return fmt.Sprintf("'utf-8' codec can't decode bytes in position %d-%d: %s", e.Start, e.End-1, e.Reason)
}

// pyDecodeUTF8 is bytes.decode() with Python's strict UTF-8 error reporting.
func pyDecodeUTF8(b []byte) (string, error) {
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
			return "", &UnicodeDecodeError{Start: i, End: i + 1, Byte: c, Reason: "invalid start byte"}
		}
		j := 1
		for ; j <= need; j++ {
			if i+j >= len(b) {
				return "", &UnicodeDecodeError{Start: i, End: len(b), Byte: c, Reason: "unexpected end of data"}
			}
			x := b[i+j]
			l, h := byte(0x80), byte(0xbf)
			if j == 1 {
				l, h = lo, hi
			}
			if x < l || x > h {
				return "", &UnicodeDecodeError{Start: i, End: i + j, Byte: c, Reason: "invalid continuation byte"}
			}
		}
		i += need + 1
	}
	return string(b), nil
}
