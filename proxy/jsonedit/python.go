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
	for i, n := nextPythonLiteral(b, 0); i >= 0; i, n = nextPythonLiteral(b, i+n) {
		out = append(out, b[last:i]...)
		out = append(out, "null"...)
		last = i + n
	}
	if out == nil {
		return b, false
	}
	return append(out, b[last:]...), true
}

// HasPythonLiterals reports whether b holds NaN, Infinity or -Infinity
// outside strings, without a copy of b. Of a body encoding/json reads
// once they are nulled (as the proxy reads requests), it is exactly
// whether encoding/json would refuse the body as it is.
func HasPythonLiterals(b []byte) bool {
	i, _ := nextPythonLiteral(b, 0)
	return i >= 0
}

// nextPythonLiteral returns where the first NaN, Infinity or -Infinity
// outside strings at or after b[from] starts, and its length; -1 when
// there is none.
func nextPythonLiteral(b []byte, from int) (int, int) {
	for i := from; i < len(b); i++ {
		var lit string
		switch c := b[i]; c {
		case '"':
			// To the string's closing quote, a run at a time.
			for i++; i < len(b); i++ {
				q := bytes.IndexByte(b[i:], '"')
				if q < 0 {
					i = len(b)
					break
				}
				if e := bytes.IndexByte(b[i:i+q], '\\'); e >= 0 {
					i += e + 1 // the escaped byte; the loop steps past it
					continue
				}
				i += q
				break
			}
			continue
		case 'N':
			lit = "NaN"
		case 'I':
			lit = "Infinity"
		case '-':
			lit = "-Infinity"
		default:
			continue
		}
		if bytes.HasPrefix(b[i:], []byte(lit)) {
			return i, len(lit)
		}
	}
	return -1, 0
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
