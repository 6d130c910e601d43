package jsonedit

// What Python's json.loads takes but the engine cannot live with, found in
// one pass over the raw text (encoding/json hides both: it reads a lone
// surrogate escape as U+FFFD, and an integer of any length as a number).

// MaxIntDigits is CPython's default limit on the digits of an integer read
// from text (sys.int_info.default_max_str_digits, CPython 3.11+ and the
// 3.8-3.10 security releases): json.loads reads a longer integer literal
// with int(), which raises a ValueError that is not the JSONDecodeError
// mlx_lm catches (mlx_lm v0.31.3 server.py, do_POST).
const MaxIntDigits = 4300

// Hazard kinds of FirstHazard.
const (
	// HazardNone: nothing found.
	HazardNone = iota
	// HazardSurrogate: a \uXXXX escape of a UTF-16 surrogate that is not
	// half of a pair. json.loads keeps it in the str; the tokenizers
	// binding cannot encode such a str and raises.
	HazardSurrogate
	// HazardLongInt: an integer literal of more than MaxIntDigits digits.
	HazardLongInt
)

// FirstHazard returns the kind and the offset of the first lone surrogate
// escape or over-long integer literal in b, a JSON text. It reads bytes
// only and never fails: on text that is not JSON it reports what it finds
// up to where the text stops making sense.
func FirstHazard(b []byte) (kind, at int) {
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '"':
			end, k, pos := scanStringHazard(b, i)
			if k != HazardNone {
				return k, pos
			}
			i = end
		case c == '-' || ('0' <= c && c <= '9'):
			end, digits, isInt := scanNumber(b, i)
			if isInt && digits > MaxIntDigits {
				return HazardLongInt, i
			}
			i = end
		default:
			i++
		}
	}
	return HazardNone, 0
}

// scanStringHazard walks the string opening at b[i] and returns the index
// after it, or the first lone surrogate escape in it.
func scanStringHazard(b []byte, i int) (end, kind, at int) {
	j := i + 1
	for j < len(b) {
		switch b[j] {
		case '"':
			return j + 1, HazardNone, 0
		case '\\':
			if j+1 < len(b) && b[j+1] == 'u' {
				r, ok := Hex4(b[j:])
				if !ok {
					j += 2
					continue
				}
				switch {
				case 0xd800 <= r && r < 0xdc00:
					// Python's scanstring joins a high surrogate with a
					// low one that follows as an escape; else it stays.
					if lo, ok := Hex4(b[j+6:]); ok && 0xdc00 <= lo && lo < 0xe000 {
						j += 12
						continue
					}
					return len(b), HazardSurrogate, j
				case 0xdc00 <= r && r < 0xe000:
					return len(b), HazardSurrogate, j
				}
				j += 6
				continue
			}
			j += 2
		default:
			j++
		}
	}
	return len(b), HazardNone, 0
}

// scanNumber reads the number at b[i] as Python's json scanner does
// (-?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?): its end, the digits of its
// integer part, and whether it is an int (no fraction, no exponent).
func scanNumber(b []byte, i int) (end, digits int, isInt bool) {
	j := i
	if j < len(b) && b[j] == '-' {
		j++
	}
	for j < len(b) && '0' <= b[j] && b[j] <= '9' {
		j++
		digits++
	}
	isInt = true
	for j < len(b) {
		switch c := b[j]; {
		case c == '.' || c == 'e' || c == 'E':
			isInt = false
		case c == '+' || c == '-' || ('0' <= c && c <= '9'):
		default:
			return j, digits, isInt && digits > 0
		}
		j++
	}
	return j, digits, isInt && digits > 0
}
