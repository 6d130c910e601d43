package confidence

import (
	"strings"
	"testing"
)

func TestInjectLogprobs(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string // want "" means unchanged
		err            bool
	}{
		{name: "empty object", in: `{}`, want: `{"logprobs": true, "top_logprobs": 3}`},
		{name: "python style", in: `{"messages": [{"role": "user", "content": "hi"}], "model": "m"}`,
			want: `{"messages": [{"role": "user", "content": "hi"}], "model": "m", "logprobs": true, "top_logprobs": 3}`},
		{name: "compact style", in: `{"messages":[],"model":"m"}`, want: `{"messages":[],"model":"m","logprobs":true,"top_logprobs":3}`},
		{name: "one compact member", in: `{"messages":[]}`, want: `{"messages":[],"logprobs":true,"top_logprobs":3}`},
		{name: "pretty printed", in: "{\n  \"messages\": []\n}\n", want: "{\n  \"messages\": [], \"logprobs\": true, \"top_logprobs\": 3\n}\n"},
		{name: "logprobs false replaced in place", in: `{"logprobs": false, "messages": []}`, want: `{"logprobs": true, "messages": [], "top_logprobs": 3}`},
		{name: "top_logprobs -1 and 0 replaced", in: `{"top_logprobs": -1, "x": 1}`, want: `{"top_logprobs": 3, "x": 1, "logprobs": true}`},
		{name: "both replaced", in: `{"top_logprobs": 0, "logprobs": false}`, want: `{"top_logprobs": 3, "logprobs": true}`},
		{name: "client asked logprobs", in: `{"logprobs": true}`},
		{name: "client asked top_logprobs", in: `{"top_logprobs": 2}`},
		{name: "client asked top_logprobs, logprobs false", in: `{"logprobs": false, "top_logprobs": 5}`},
		{name: "escaped key", in: `{"log\u0070robs": true}`},
		// Values mlx_lm rejects stay, so the client gets the server's error.
		{name: "logprobs int", in: `{"logprobs": 1}`},
		{name: "logprobs null", in: `{"logprobs": null}`},
		{name: "logprobs string", in: `{"logprobs": "true"}`},
		{name: "top_logprobs float", in: `{"top_logprobs": 2.0}`},
		{name: "top_logprobs -2", in: `{"top_logprobs": -2}`},
		{name: "top_logprobs string", in: `{"top_logprobs": "3"}`},
		// Python keeps the last of duplicate keys.
		{name: "duplicate, last false", in: `{"logprobs": true, "logprobs": false}`, want: `{"logprobs": true, "logprobs": true, "top_logprobs": 3}`},
		{name: "duplicate, last true", in: `{"logprobs": false, "logprobs": true}`},
		{name: "not an object", in: `[]`, err: true},
		{name: "empty", in: ``, err: true},
		{name: "trailing data", in: `{"a": 1} x`, err: true},
		{name: "malformed", in: `{"a": }`, err: true},
		{name: "truncated", in: `{"a": [1, 2`, err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, changed, err := InjectLogprobs([]byte(tc.in), 3)
			if (err != nil) != tc.err {
				t.Fatalf("err %v", err)
			}
			want := tc.want
			if want == "" {
				want = tc.in
			}
			if string(out) != want || changed != (tc.want != "") {
				t.Errorf("got %q (changed %v), want %q", out, changed, want)
			}
		})
	}
	if _, _, err := InjectLogprobs([]byte(`{}`), 0); err == nil {
		t.Error("top_logprobs 0 accepted")
	}
}

func TestStripLogprobs(t *testing.T) {
	const msg = `"message": {"role": "assistant", "content": "Hi"}`
	for _, tc := range []struct {
		name, in, want string // want "" means unchanged
		err            bool
	}{
		{name: "mlx_lm: member before the message",
			in:   `{"id": "x", "choices": [{"index": 0, "finish_reason": "stop", "logprobs": {"content": [{"id": 1, "logprob": -0.5}]}, ` + msg + `}], "usage": {}}`,
			want: `{"id": "x", "choices": [{"index": 0, "finish_reason": "stop", ` + msg + `}], "usage": {}}`},
		{name: "last member", in: `{"choices": [{"index": 0, "logprobs": {"content": []}}]}`, want: `{"choices": [{"index": 0}]}`},
		{name: "only member", in: `{"choices": [{"logprobs": {"content": []}}]}`, want: `{"choices": [{}]}`},
		{name: "compact", in: `{"choices":[{"index":0,"logprobs":{"content":[]},"x":1}]}`, want: `{"choices":[{"index":0,"x":1}]}`},
		{name: "several choices", in: `{"choices": [{"logprobs": {}, "a": 1}, {"a": 2, "logprobs": {}}]}`, want: `{"choices": [{"a": 1}, {"a": 2}]}`},
		{name: "mlx_lm before 0.30.6",
			in:   `{"choices": [{"index": 0, "finish_reason": "stop", "logprobs": {"token_logprobs": [-0.5], "top_logprobs": [[[1, -0.5]]], "tokens": [1]}, ` + msg + `}]}`,
			want: `{"choices": [{"index": 0, "finish_reason": "stop", "logprobs": {"token_logprobs": [-0.5], "top_logprobs": [], "tokens": [1]}, ` + msg + `}]}`},
		{name: "openai style", in: `{"choices":[{"index":0,"message":{},"logprobs":{"content":[{"token":"Hi","logprob":-0.1,"bytes":[72,105],"top_logprobs":[]}]},"finish_reason":"stop"}]}`,
			want: `{"choices":[{"index":0,"message":{},"logprobs":null,"finish_reason":"stop"}]}`},
		{name: "null stays", in: `{"choices": [{"logprobs": null}]}`},
		{name: "no logprobs", in: `{"choices": [{"index": 0, ` + msg + `}]}`},
		{name: "error body", in: `{"error": "Invalid JSON in request body"}`},
		{name: "NaN elsewhere", in: `{"choices": [{"logprobs": {"content": [{"id": 1, "logprob": NaN}]}, "x": -Infinity}]}`, want: `{"choices": [{"x": -Infinity}]}`},
		{name: "not an object", in: `Not Found`, err: true},
		{name: "truncated", in: `{"choices": [{"logprobs": {"content": [`, err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := StripLogprobs([]byte(tc.in))
			if (err != nil) != tc.err {
				t.Fatalf("err %v", err)
			}
			want := tc.want
			if want == "" {
				want = tc.in
			}
			if string(out) != want {
				t.Errorf("got  %s\nwant %s", out, want)
			}
		})
	}
}

// A 100 kB body keeps every byte outside the edit.
func TestRewriteLargeBody(t *testing.T) {
	content := strings.Repeat("word ", 20000)
	req := `{"messages": [{"role": "user", "content": "` + content + `"}], "max_tokens": 10}`
	out, changed, err := InjectLogprobs([]byte(req), 5)
	if err != nil || !changed || string(out) != strings.TrimSuffix(req, "}")+`, "logprobs": true, "top_logprobs": 5}` {
		t.Fatalf("%v %v %.100s", changed, err, out)
	}
}
