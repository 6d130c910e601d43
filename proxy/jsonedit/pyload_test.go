package jsonedit

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFirstHazard(t *testing.T) {
	for _, c := range []struct {
		in       string
		kind, at int
	}{
		{`{"a": "\ud83d\ude00"}`, HazardNone, 0},
		{`{"a": "\ud800"}`, HazardSurrogate, 7},
		{`{"a": "\udc00"}`, HazardSurrogate, 7},
		{`{"a": "\ud800\u0041"}`, HazardSurrogate, 7},
		{`{"a": "\ud800\ud800\udc00"}`, HazardSurrogate, 7},
		{`{"a": "\ud83d\ude00\ude00"}`, HazardSurrogate, 19},
		{`{"a": "\\ud800"}`, HazardNone, 0},
		{`{"a": "\"\ud800"}`, HazardSurrogate, 9},
		{`{"a\ud800": 1}`, HazardSurrogate, 3},
		{`{"a": "\ud800`, HazardSurrogate, 7},
		{`{"a": "` + strings.Repeat("1", 5000) + `"}`, HazardNone, 0},
		{`{"a": ` + strings.Repeat("1", MaxIntDigits) + `}`, HazardNone, 0},
		{`{"a": -` + strings.Repeat("1", MaxIntDigits) + `}`, HazardNone, 0},
		{`{"a": ` + strings.Repeat("1", MaxIntDigits+1) + `}`, HazardLongInt, 6},
		{`{"a": [0, -` + strings.Repeat("1", MaxIntDigits+1) + `]}`, HazardLongInt, 10},
		{`{"a": ` + strings.Repeat("1", MaxIntDigits+1) + `.5}`, HazardNone, 0},
		{`{"a": ` + strings.Repeat("1", MaxIntDigits+1) + `e5}`, HazardNone, 0},
		{`{"a": 1E` + strings.Repeat("1", MaxIntDigits+1) + `}`, HazardNone, 0},
		{`{"a": -Infinity, "b": NaN}`, HazardNone, 0},
	} {
		kind, at := FirstHazard([]byte(c.in))
		assert.Equal(t, c.kind, kind, c.in)
		assert.Equal(t, c.at, at, c.in)
	}
}

// FirstHazard never panics, and what it reports is where it says.
func FuzzFirstHazard(f *testing.F) {
	for _, s := range []string{`{"a": "\ud800"}`, `{"a": "\ud83d\ude00"}`, `[1, -2.5e3, "\\u"]`, `"\u`, `-`, `{"a": 1` + strings.Repeat("0", 4301) + `}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		kind, at := FirstHazard(b)
		switch kind {
		case HazardNone:
		case HazardSurrogate:
			r, ok := Hex4(b[at:])
			if !ok || r < 0xd800 || r > 0xdfff {
				t.Fatalf("a surrogate reported at %d of %q", at, b)
			}
		case HazardLongInt:
			i := at
			if b[i] == '-' {
				i++
			}
			n := 0
			for i < len(b) && b[i] >= '0' && b[i] <= '9' {
				i++
				n++
			}
			if n <= MaxIntDigits {
				t.Fatalf("a long integer reported at %d of %q", at, b)
			}
		default:
			t.Fatalf("kind %d", kind)
		}
	})
}
