package jsonedit

import (
	"bytes"
	"math"
	"strconv"
)

// Python's json.dumps writes NaN, Infinity and -Infinity for floats that
// are not finite (a logprob of -inf, for one), which encoding/json refuses.
// This file is where the proxy handles them: the scanner takes them as
// scalars like any other, Number reads them as not finite, and
// NullPythonLiterals makes a body encoding/json can read.

// NullPythonLiterals returns b with every NaN, Infinity and -Infinity
// outside strings replaced by null, and whether it replaced any. Valid
// JSON comes back as it is.
func NullPythonLiterals(b []byte) ([]byte, bool) {
	var out []byte
	last := 0
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		if c == '"' {
			inString = true
			continue
		}
		var lit string
		switch {
		case bytes.HasPrefix(b[i:], []byte("NaN")):
			lit = "NaN"
		case bytes.HasPrefix(b[i:], []byte("Infinity")):
			lit = "Infinity"
		case bytes.HasPrefix(b[i:], []byte("-Infinity")):
			lit = "-Infinity"
		default:
			continue
		}
		out = append(out, b[last:i]...)
		out = append(out, "null"...)
		i += len(lit) - 1
		last = i + 1
	}
	if out == nil {
		return b, false
	}
	return append(out, b[last:]...), true
}

// Number reads a JSON number (or Python's NaN, Infinity, -Infinity) and
// reports whether it is finite.
func Number(b []byte) (float64, bool) {
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

// Integer reads a JSON integer literal (no fraction, no exponent).
func Integer(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	return n, err == nil
}
