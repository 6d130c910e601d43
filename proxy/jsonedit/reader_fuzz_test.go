package jsonedit

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
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
		if math.Float64bits(got) != math.Float64bits(want) || v != want {
			t.Fatalf("%q: %v, ParseFloat %v, encoding/json %v", s, got, want, v)
		}
	})
}

// Reader.Float is ParseFloat to the bit on the numbers engines write
// (bfloat16 and float32 reprs, fixed and exponent forms), where its exact
// path reads them.
func TestFloatIsParseFloatToTheBit(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	var nums []string
	for range 100_000 {
		x := -math.Exp(r.NormFloat64() * 8)
		bf16 := math.Float64frombits(math.Float64bits(float64(float32(x))) &^ (1<<45 - 1))
		nums = append(nums,
			strconv.FormatFloat(x, 'g', -1, 64),
			strconv.FormatFloat(bf16, 'g', -1, 64),
			strconv.FormatFloat(float64(float32(x)), 'g', -1, 32),
			strconv.FormatFloat(x, 'f', r.IntN(25), 64),
			strconv.FormatFloat(x, 'e', r.IntN(20), 64))
	}
	nums = append(nums, "0", "-0", "-0.0", "0e5", "1E+2", "9007199254740993", "9007199254740992", "-123456789012345678901234567890",
		"1.0000000000000000000000000001", "0.1000000000000000000000", "1e22", "1e23", "1e-22", "1e-23", "4.9e-324", "1.7976931348623157e308")
	for _, s := range nums {
		rd := Reader{B: []byte(s)}
		got, ok := rd.Float()
		want, err := strconv.ParseFloat(s, 64)
		if !ok || err != nil || rd.I != len(s) || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("%q: Float %v %v (to %d), ParseFloat %v %v", s, got, ok, rd.I, want, err)
		}
	}
}
