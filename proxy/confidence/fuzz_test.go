package confidence

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"testing"
)

// Seeds: the shapes the engines write (parse_test.go), what the simulated
// mlx_lm.server answers, and broken pieces of them.
func seedLogprobs(f *testing.F) [][]byte {
	var seeds [][]byte
	for _, s := range shapes {
		seeds = append(seeds, []byte(s))
	}
	s := newSim(f)
	for _, extra := range []string{`, "logprobs": true`, `, "top_logprobs": 3`, `, "logprobs": true, "top_logprobs": 1`} {
		c := choiceOf(f, s.post(chatBody("Hello there", 0.7, extra+`, "max_tokens": 12`)))
		seeds = append(seeds, c.Logprobs)
	}
	_, lp, _ := synth(20, 3, 9)
	seeds = append(seeds, lp, lp[:len(lp)/2], []byte(`{"content": [{"logprob": NaN, "top_logprobs": [{"logprob": -Infinity}]}]}`))
	return seeds
}

func FuzzParse(f *testing.F) {
	for _, s := range seedLogprobs(f) {
		f.Add(s, "Hello there, how are you?", false)
		f.Add(s, "", true)
	}
	f.Fuzz(func(t *testing.T, raw []byte, text string, greedy bool) {
		l := Parse(raw)
		for i, tk := range l.Tokens {
			for k, c := range tk.Candidates {
				if math.IsNaN(c.Logprob) || math.IsInf(c.Logprob, 0) {
					t.Fatalf("token %d candidate %d: %v", i, k, c.Logprob)
				}
				if k > 0 && c.Logprob > tk.Candidates[k-1].Logprob {
					t.Fatalf("token %d: list not sorted", i)
				}
			}
			if tk.HasOuter() && (math.IsNaN(tk.Outer.Logprob) || math.IsInf(tk.Outer.Logprob, 0)) {
				t.Fatalf("token %d outer %v", i, tk.Outer.Logprob)
			}
		}
		opt := Options{Greedy: greedy, Text: text}
		picks := l.Identify(opt)
		if len(picks) != len(l.Tokens) {
			t.Fatal("picks and tokens differ in number")
		}
		for i, p := range picks {
			if p.Candidate >= len(l.Tokens[i].Candidates) {
				t.Fatalf("pick %d names candidate %d of %d", i, p.Candidate, len(l.Tokens[i].Candidates))
			}
		}
		checkScore(t, l.ScorePicks(picks, opt))
		// A stream's chunks add up like one value.
		l2 := &Logprobs{}
		l2.Add(raw)
		l2.Add(raw)
		if len(l2.Tokens) != 2*len(l.Tokens) {
			t.Fatalf("Add twice: %d tokens, want %d", len(l2.Tokens), 2*len(l.Tokens))
		}
	})
}

func FuzzInjectLogprobs(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"messages": [{"role": "user", "content": "hi"}], "model": "m"}`, `{"messages":[],"stream":false}`,
		`{"logprobs": false, "top_logprobs": -1}`, `{"logprobs": true}`, `{"top_logprobs": 0}`, `{"logprobs": 1}`,
		`{"log\u0070robs": false}`, "{\n  \"a\": [1, {\"b\": \"}\"}]\n}", `{"a": NaN}`, `[]`, `{"a": 1`,
	} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, body []byte, n uint8) {
		topN := int(n%12) + 1
		out, changed, err := InjectLogprobs(body, topN)
		if err != nil || !changed {
			if !bytes.Equal(out, body) {
				t.Fatalf("unchanged body differs: %q -> %q", body, out)
			}
			return
		}
		if json.Valid(body) && !json.Valid(out) {
			t.Fatalf("valid JSON made invalid: %q -> %q", body, out)
		}
		var m map[string]any
		if json.Unmarshal(out, &m) == nil {
			// encoding/json keeps the last of duplicate keys, as Python.
			if m["logprobs"] != true || m["top_logprobs"] != float64(topN) {
				t.Fatalf("%q -> %q: %v", body, out, m)
			}
		}
		again, changed2, err := InjectLogprobs(out, topN)
		if err != nil || changed2 || !bytes.Equal(again, out) {
			t.Fatalf("second injection changed %q: %q %v", out, again, err)
		}
	})
}

func FuzzStripLogprobs(f *testing.F) {
	for _, lp := range seedLogprobs(f) {
		f.Add([]byte(fmt.Sprintf(`{"id": "x", "choices": [{"index": 0, "finish_reason": "stop", "logprobs": %s, "message": {"role": "assistant", "content": "Hi"}}], "usage": {}}`, lp)))
	}
	resp, _, _ := synth(10, 3, 4)
	f.Add(resp)
	f.Add([]byte(`{"choices": [{"logprobs": {"token_logprobs": [-0.5], "top_logprobs": [[[1, -0.5]]], "tokens": [1]}}]}`))
	f.Add([]byte(`{"choices":[{"logprobs":{"content":[{"token":"a","logprob":-1,"bytes":[97]}]}}]}`))
	f.Add([]byte(`{"choices": [{"logprobs": {}, "logprobs": {}}]}`))
	f.Fuzz(func(t *testing.T, resp []byte) {
		out, err := StripLogprobs(resp)
		if err != nil {
			if !bytes.Equal(out, resp) {
				t.Fatal("failed strip changed the body")
			}
			return
		}
		if json.Valid(resp) && !json.Valid(out) {
			t.Fatalf("valid JSON made invalid: %q -> %q", resp, out)
		}
		if len(out) > len(resp)+2 { // "[]" or "null" replace values of at least 2 bytes
			t.Fatalf("strip grew the body: %q -> %q", resp, out)
		}
	})
}
