package wire

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/jsonedit"
)

// Decode reads with goccy/go-json for speed. A body that
// encoding/json reads (Python's NaN and Infinity read as null) it must read
// the same way, but for one difference: goccy keeps a logprobs value as it
// is, Python's literals included, where the fallback nulls them. The
// confidence parser reads those literals (and marks a logprobs value it
// cannot read as truncated), so this loses nothing. goccy does not check a
// logprobs value, so a body encoding/json refuses for it is read.
func FuzzDecodeCompletionMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}`,
		`{"choices":[{"index":0,"message":{"content":"a\u00e9\ud83d","tool_calls":[{"index":0,"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},"logprobs":{"content":[{"token":"a","logprob":-Infinity}]},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5,"prompt_tokens_details":{"cached_tokens":1}}}`,
		`{"Choices":[{"Index":1.5}]}`, `{"usage":{"prompt_tokens":1e400}}`, `{"id":"a"} x`, `{"id":"\x88"}`, `[1]`, `null`, `{"model":null,"id":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var got, want Completion
		gotErr := Decode(b, &got)
		wantErr := json.Unmarshal(b, &want)
		if wantErr != nil {
			fixed, changed := jsonedit.NullPythonLiterals(b)
			if changed {
				want = Completion{}
				wantErr = json.Unmarshal(fixed, &want)
			}
		}
		if wantErr != nil {
			return
		}
		if gotErr != nil {
			t.Fatalf("%q: Decode error %v, encoding/json read it", b, gotErr)
		}
		for i := range got.Choices {
			if fixed, changed := jsonedit.NullPythonLiterals(got.Choices[i].Logprobs); changed {
				got.Choices[i].Logprobs = fixed
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\ndecodeCompletion %+v\nencoding/json    %+v", b, got, want)
		}
	})
}
