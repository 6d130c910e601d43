package proxy

import (
	"testing"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/confidence"
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
		end, plain, err := jsonedit.SkipObjectPlain(b, 0, confidence.MaxPlainDepth)
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

// keptAsDecoded is the plain check as it was first written, a pass of its
// own over the kept values: decoding the engine's bytes reads every kept
// value as that same raw value. The strip pass's scanner matches brackets by depth
// and takes any byte in a string; goccy skips a raw object by counting its
// braces alone and ends at a NUL byte (its end of input), so an object
// whose brackets do not pair by kind, or that holds a NUL, ends elsewhere
// there or fails the whole decoding. Values that are not objects or null
// (Python's NaN as the value, say) are left to decoding as well.
func keptAsDecoded(kept [][]byte) bool {
	for _, v := range kept {
		if len(v) == 0 || string(v) == "null" {
			continue
		}
		if v[0] != '{' || !bracesEndAt(v) {
			return false
		}
	}
	return true
}

// bracesEndAt is keptAsDecoded's check of one value, a pass of its
// own over a kept value: the object opening v closes at v's last byte, its
// braces counted as goccy counts them, with no NUL byte and no deeper
// nesting than confidence.MaxPlainDepth.
func bracesEndAt(v []byte) bool {
	braces, depth := 0, 0
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case 0:
			return false
		case '{':
			braces++
			depth++
		case '[':
			depth++
		case ']':
			depth--
		case '}':
			braces--
			depth--
			if braces == 0 {
				return i == len(v)-1
			}
		case '"':
			for i++; i < len(v) && v[i] != '"'; i++ {
				switch v[i] {
				case 0:
					return false
				case '\\':
					if i++; i < len(v) && v[i] == 0 {
						return false
					}
				}
			}
		}
		if depth > confidence.MaxPlainDepth {
			return false
		}
	}
	return false
}
