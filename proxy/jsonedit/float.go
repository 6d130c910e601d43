package jsonedit

import (
	"math"
	"strconv"
)

// Float reads a JSON number with white space around it as json.Unmarshal
// into a float64 reads it: the strict grammar (no Python literals, no
// leading +, 0x or _, which strconv.ParseFloat takes), finite; anything
// else, or nothing, is false.
func Float(raw []byte) (float64, bool) {
	i, j := 0, len(raw)
	for i < j && IsSpace(raw[i]) {
		i++
	}
	for j > i && IsSpace(raw[j-1]) {
		j--
	}
	lit := raw[i:j]
	if !IsNumber(lit) {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(lit), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// IsNumber: b is a number as JSON spells it (RFC 8259, section 6),
// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?.
func IsNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(b)
}
