package applesrc

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"strings"
)

// Errors shared by every parser. They are wrapped with the name of the
// command, so errors.Is works on the result of any Parse function.
var (
	// ErrEmpty: the input holds nothing but white space.
	ErrEmpty = errors.New("empty input")
	// ErrBinary: the input holds a NUL byte, which none of the text
	// commands read here ever print.
	ErrBinary = errors.New("binary input")
	// ErrNoData: the input is text, but not one value of the expected
	// format could be read from it.
	ErrNoData = errors.New("no recognised data")
	// ErrMalformed: a value the format requires is present but unreadable.
	ErrMalformed = errors.New("malformed input")
)

// textLines checks the input common to every parser and splits it into
// lines, with any trailing carriage return removed. It returns ErrEmpty for
// blank input and ErrBinary for input holding a NUL byte.
func textLines(b []byte) ([]string, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, ErrEmpty
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return nil, ErrBinary
	}
	ls := strings.Split(string(b), "\n")
	for i, l := range ls {
		ls[i] = strings.TrimSuffix(l, "\r")
	}
	return ls, nil
}

// isDigits reports whether s is a non-empty run of ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseUint reads a non-empty run of ASCII digits (no sign, no spaces)
// that fits in a uint64.
func parseUint(s string) (uint64, bool) {
	if !isDigits(s) {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}

// parseDecimal reads a plain non-negative decimal such as "12", "12.5",
// "12." or ".54". Signs, exponents, hex, underscores, "NaN" and "Inf" are
// refused (strconv.ParseFloat would take them), so the result is always a
// finite number >= 0.
func parseDecimal(s string) (float64, bool) {
	digits, dots := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			dots++
		default:
			return 0, false
		}
	}
	if digits == 0 || dots > 1 {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// mulBytes multiplies a count by a unit size, refusing overflow.
func mulBytes(n, unit uint64) (uint64, bool) {
	if unit != 0 && n > math.MaxUint64/unit {
		return 0, false
	}
	return n * unit, true
}

// floatToBytes rounds a non-negative finite byte count to a uint64,
// refusing values that do not fit.
func floatToBytes(v float64) (uint64, bool) {
	v = math.Round(v)
	if math.IsNaN(v) || v < 0 || v >= 18446744073709551615.0 {
		return 0, false
	}
	return uint64(v), true
}

func ptr[T any](v T) *T { return &v }
