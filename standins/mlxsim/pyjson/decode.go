package pyjson

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// JSONDecodeError is json.JSONDecodeError; Error() is str(e).
type JSONDecodeError struct {
	msg    string
	pos    int // in code points
	lineno int
	colno  int
}

func (e *JSONDecodeError) Error() string {
	return fmt.Sprintf("%s: line %d column %d (char %d)", e.msg, e.lineno, e.colno, e.pos)
}

// RecursionError is raised for nesting deeper than Python's recursion limit.
type RecursionError struct{ what string }

func (e *RecursionError) Error() string {
	return "maximum recursion depth exceeded while decoding a JSON " + e.what + " from a unicode string"
}

// IntDigitsError is the ValueError int() raises for a decimal literal of
// more than 4,300 digits (CPython 3.12 Objects/longobject.c,
// sys.int_info.default_max_str_digits): json.loads lets it out, and it is
// no JSONDecodeError.
type IntDigitsError struct{ Digits int }

func (e *IntDigitsError) Error() string {
	return fmt.Sprintf("Exceeds the limit (4300 digits) for integer string conversion: value has %d digits; use sys.set_int_max_str_digits() to increase the limit", e.Digits)
}

// maxIntDigits is CPython's default int_max_str_digits.
const maxIntDigits = 4300

// maxDepth approximates the nesting at which CPython's scanner hits the
// recursion limit when called from a request handler thread.
const maxDepth = 980

type stopIteration struct{ pos int }

func (s *stopIteration) Error() string { return "StopIteration" }

type decoder struct {
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
	return &JSONDecodeError{msg: msg, pos: pos, lineno: line, colno: pos - last}
}

// Loads is json.loads(s) for a str (already decoded from UTF-8).
// The error is a *JSONDecodeError, a *RecursionError or an *IntDigitsError.
func Loads(str string) (any, error) {
	s := []rune(str)
	if len(s) > 0 && s[0] == 0xfeff {
		return nil, newDecodeError(s, "Unexpected UTF-8 BOM (decode using utf-8-sig)", 0)
	}
	d := &decoder{s: s}
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

func isWS(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }

func (d *decoder) skipWS(i int) int {
	for i < len(d.s) && isWS(d.s[i]) {
		i++
	}
	return i
}

func (d *decoder) hasPrefix(i int, lit string) bool {
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

func (d *decoder) scanOnce(idx int) (any, int, error) {
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
		if d.depth > maxDepth {
			return nil, 0, &RecursionError{"object"}
		}
		v, end, err := d.parseObject(idx + 1)
		d.depth--
		return v, end, err
	case '[':
		d.depth++
		if d.depth > maxDepth {
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

func (d *decoder) matchNumber(start int) (any, int, error) {
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
	if n := len(strings.TrimPrefix(lit, "-")); n > maxIntDigits {
		return nil, 0, &IntDigitsError{n}
	}
	return NewInt(lit), idx, nil
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
func (d *decoder) scanString(end int) (string, int, error) {
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

func (d *decoder) parseObject(idx int) (any, int, error) {
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

func (d *decoder) parseArray(idx int) (any, int, error) {
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
