package wire

import (
	"encoding/json"
	"testing"

	gojson "github.com/goccy/go-json"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/jsonedit"
)

// FuzzStrictValueIsReadWhole holds what DecodeStripped relies on: a value
// the strict reader reads is valid JSON, and both decoders keep it whole
// as a choice's raw logprobs, ending where the reader ended it.
func FuzzStrictValueIsReadWhole(f *testing.F) {
	for _, s := range []string{
		`{"content": [{"id": 1, "token": "\u0120a", "logprob": -0.5, "top_logprobs": []}]}`,
		`{"a": [}]`, "{\"a\": \"\x00\"}", `{"a": {"b": [1, 2.5e-3, true, null]}} `, `{"a": "\ud83d\ude00"}`,
		`{"a": "\udc00"}`, `{"a": -Infinity}`, `{"a": 01}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		if len(v) == 0 || v[0] != '{' {
			return
		}
		r := jsonedit.Reader{B: v}
		if !r.Skip() {
			return
		}
		v = v[:r.I]
		if !json.Valid(v) {
			t.Fatalf("%q: read strictly, not valid JSON", v)
		}
		doc := []byte(`{"choices": [{"logprobs": ` + string(v) + `}]}`)
		for name, unmarshal := range map[string]func([]byte, any) error{"goccy": gojson.Unmarshal, "encoding/json": json.Unmarshal} {
			var c Completion
			if err := unmarshal(doc, &c); err != nil || len(c.Choices) != 1 || string(c.Choices[0].Logprobs) != string(v) {
				t.Fatalf("%q: %s reads %+v (%v)", v, name, c, err)
			}
		}
	})
}
