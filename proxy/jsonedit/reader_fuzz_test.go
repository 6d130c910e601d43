package jsonedit

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// Reader.Skip reads a text whole exactly when encoding/json finds it
// valid, but for what it refuses on purpose: a surrogate escape that is
// not half of a pair, nesting past MaxDepth.
func FuzzSkipMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{
		`{"content": [{"id": 68483, "token": "\u0120result", "logprob": -0.0712890625, "top_logprobs": []}]}`,
		`[1, -0, 0.5e+3, 1E2, true, false, null, "\u00e9\ud83d\ude00"]`, `{"a": [}]`, `[01]`, `[1.]`, `-`, `"\x00"`,
		`{"a" : 1 , "b":{}}`, `NaN`, `[-Infinity]`, `"\ud83d"`, `tru`, `{"a":1,}`, " [ ] ",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r := Reader{B: b}
		got := r.Skip() && SkipSpace(b, r.I) == len(b)
		want := json.Valid(b)
		switch {
		case got && !want:
			t.Fatalf("%q: read, encoding/json finds it invalid", b)
		case want && !got && Depth(b) <= MaxDepth && !bytes.Contains(bytes.ToLower(b), []byte(`\ud`)):
			t.Fatalf("%q: not read, encoding/json finds it valid", b)
		}
	})
}

// Reader.Float is strconv.ParseFloat on a strict JSON number.
func FuzzFloatMatchesParseFloat(f *testing.F) {
	for _, s := range []string{"-0.0078125", "-2.359375", "-0.31725305", "-1.52587890625e-05", "1e999", "-0", "0.1e-30", "123456789012345678901", "01", "1.", ".5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := Reader{B: []byte(s)}
		got, ok := r.Float()
		if !ok || r.I != len(s) {
			return
		}
		var v float64
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatalf("%q: read as %v, encoding/json says %v", s, got, err)
		}
		want, _ := strconv.ParseFloat(strings.TrimLeft(s, " \t\n\r"), 64) // Float skips the white space before
		if got != want || v != want {
			t.Fatalf("%q: %v, ParseFloat %v, encoding/json %v", s, got, want, v)
		}
	})
}
