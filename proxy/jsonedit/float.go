package jsonedit

import (
	"math"
	"strconv"
)

// Float reads a JSON number with white space around it as json.Unmarshal
// into a float64 reads it: the strict grammar of Reader.Number (no Python
// literals, no leading +, 0x or _, which strconv.ParseFloat takes), of any
// length, finite; anything else, or nothing, is false.
func Float(raw []byte) (float64, bool) {
	r := Reader{B: raw}
	num, ok := r.Number()
	r.SkipSpace()
	if !ok || r.I != len(raw) {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(num), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}
