package proxy

import (
	"testing"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/jsonedit"
)

// FuzzSkipObjectPlain holds the strip pass's check, made while it finds
// a value's end, to SkipValue's end and to bracesEndAt on the value.
func FuzzSkipObjectPlain(f *testing.F) {
	for _, s := range []string{`{"content": [{"id": 1, "token": "a\"}", "logprob": -0.5, "top_logprobs": []}]}`,
		`{"a": [}]}`, "{\"a\": \"\x00\"}", `{"a": "\\`, `{}}`, `{"a": {"b": []}}`, `[{}]`, `{[}]`, `null`, `{"a": 1} x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		end, plain, err := jsonedit.SkipObjectPlain(b, 0, maxKeptDepth)
		wantEnd, wantErr := jsonedit.SkipValue(b, 0)
		if end != wantEnd || (err == nil) != (wantErr == nil) {
			t.Fatalf("SkipObjectPlain(%q) ends at %d (%v), SkipValue at %d (%v)", b, end, err, wantEnd, wantErr)
		}
		if err != nil {
			return
		}
		if want := b[0] == '{' && bracesEndAt(b[:end]); plain != want {
			t.Fatalf("SkipObjectPlain(%q): plain %v, bracesEndAt %v", b, plain, want)
		}
	})
}
