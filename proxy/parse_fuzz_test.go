package proxy

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/jsonedit"
)

// FuzzParseBody: whatever the bytes, parseBody does not panic, and what it
// accepts is what Python's json.loads reads as an object: valid UTF-8, an
// object once NaN and Infinity are read as null, no deeper than the bound;
// its members are that object's (the last of duplicate keys).
func FuzzParseBody(f *testing.F) {
	for _, s := range []string{`{"model": "m", "messages": []}`, `{"x": NaN, "y": [-Infinity]}`, `{"a": 1, "a": 2}`,
		`[1]`, `{"a": "\ud800"}`, "{\"a\": \"\xff\"}", `{"mod\u0065l": "x"}`, `{"a": [[[[]]]]}`, ``, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		pb, err := parseBody(body)
		if err != nil {
			return
		}
		if !utf8.Valid(body) || jsonedit.Depth(body) > maxBodyDepth {
			t.Fatalf("accepted %q", body)
		}
		nulled, _ := jsonedit.NullPythonLiterals(body)
		var want map[string]json.RawMessage
		if err := json.Unmarshal(nulled, &want); err != nil || want == nil {
			t.Fatalf("accepted %q, which is no object: %v", body, err)
		}
		if len(want) != len(pb.fields) {
			t.Fatalf("%q: %d members, want %d", body, len(pb.fields), len(want))
		}
		for k, v := range want {
			if string(pb.fields[k]) != string(v) {
				t.Fatalf("%q: member %q is %s, want %s", body, k, pb.fields[k], v)
			}
		}
	})
}
