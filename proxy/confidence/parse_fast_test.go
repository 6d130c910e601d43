package confidence

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The layouts real engines write, which must take the fast path: a
// regression to the generic parser would change no result, only the cost.
var fastLayouts = map[string]string{
	"mlx logprobs":    shapes["mlx logprobs"],
	"mlx top":         shapes["mlx top"],
	"mlx empty entry": shapes["mlx empty entry"],
	"openai chat":     shapes["openai chat"],
	// mlx_lm 0.31.3's json.dumps (ensure_ascii): "Ġ" is written "\u0120";
	// one stream chunk's logprobs (mlxsim's bytes, proxy/bench_test.go).
	"mlx stream chunk": `{"content": [{"id": 68483, "token": "\u0120result", "logprob": -0.0712890625, "top_logprobs": [{"id": 68483, "token": "\u0120result", "logprob": -0.0712890625}, {"id": 30452, "token": "\u0120to", "logprob": -3.25}, {"id": 98962, "token": "\u0120machine", "logprob": -4.09375}]}]}`,
	// OpenAI's stream chunks are compact, its whole answers indented.
	"openai compact":  `{"content":[{"token":"Hel","logprob":-0.1,"bytes":[72,101,108],"top_logprobs":[{"token":"Hel","logprob":-0.1,"bytes":[72,101,108]},{"token":"Hi","logprob":-2.5,"bytes":[72,105]}]}],"refusal":null}`,
	"openai indented": "{\n  \"content\": [\n    {\n      \"token\": \"Hello\",\n      \"logprob\": -0.31725305,\n      \"bytes\": [\n        72,\n        101\n      ],\n      \"top_logprobs\": []\n    }\n  ],\n  \"refusal\": null\n}",
	"openai empty":    `{"content": [], "refusal": null}`,
	"small exponent":  `{"content": [{"id": 1, "logprob": -1.52587890625e-05}, {"id": 2, "logprob": -2.220446049250313e-16}, {"id": 3, "logprob": 0}]}`,
}

func TestFastPathTakenForRealLayouts(t *testing.T) {
	for name, raw := range fastLayouts {
		if !(&Logprobs{}).add([]byte(raw), true) {
			t.Errorf("%s: read by the generic parser", name)
		}
		sameAsGeneric(t, []byte(raw))
	}
	s := newSim(t)
	for _, extra := range []string{`, "logprobs": true`, `, "top_logprobs": 3`, `, "top_logprobs": 10`} {
		raw := choiceOf(t, s.post(chatBody("Hello there", 0.7, extra+`, "max_tokens": 40`))).Logprobs
		if !(&Logprobs{}).add(raw, true) {
			t.Errorf("simulated engine %s: read by the generic parser: %s", extra, raw)
		}
		sameAsGeneric(t, raw)
	}
	_, lp, _ := synth(200, 5, 7)
	if !(&Logprobs{}).add(lp, true) {
		t.Error("synth: read by the generic parser")
	}
	sameAsGeneric(t, lp)
}

// The generic parser reads what the fast path does not know, so the
// results stay the same.
func TestFastPathFallsBack(t *testing.T) {
	for _, raw := range []string{
		shapes["mlx legacy pairs"], shapes["openai legacy"],
		`{"content": [{"id": 1, "logprob": NaN}]}`,
		`{"content": [{"id": 1, "logprob": -Infinity}]}`,
		`{"content": [{"id": 1, "logprob": 1e999}]}`,
		`{"content": [{"id": 1, "logprob": -0.5, "logprob": -0.25}]}`,
		`{"con\u0074ent": [{"logprob": -0.5}]}`,
		`{"content": [{"id": "7", "logprob": -0.5}]}`,
		`{"content": [{"id": 1.0, "logprob": -0.5}]}`,
		`{"content": [{"token": null, "logprob": -0.5}]}`,
		`{"content": [{"logprob": -0.5, "top_logprobs": null}]}`,
		`{"content": [{"logprob": -0.5, "bytes": [256]}]}`,
		`{"content": [1, {"logprob": -0.5}]}`,
		`{"content": [{"token": "a` + "\x01" + `", "logprob": -0.5}]}`,
		`{"content": [{"id": 1, "logprob": -0.5}, {"id": 2, "lo`,
		`{"content": null}`,
	} {
		if (&Logprobs{}).add([]byte(raw), true) {
			t.Errorf("fast path read %s", raw)
		}
		sameAsGeneric(t, []byte(raw))
	}
}

// The differential test: whatever the input, the fast path (when it
// reads it) gives exactly what the generic parser gives, and so the same
// scores.
func FuzzFastParseMatchesGeneric(f *testing.F) {
	for _, s := range seedLogprobs(f) {
		f.Add(s)
	}
	for _, s := range fastLayouts {
		f.Add([]byte(s))
	}
	// The corpus FuzzParse found.
	files, _ := filepath.Glob("testdata/fuzz/FuzzParse/*")
	for _, name := range files {
		if raw, ok := corpusBytes(name); ok {
			f.Add(raw)
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		sameAsGeneric(t, raw)
	})
}

// corpusBytes reads the first []byte of a go test fuzz v1 file.
func corpusBytes(name string) ([]byte, bool) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if q, ok := strings.CutPrefix(line, "[]byte("); ok {
			s, err := strconv.Unquote(strings.TrimSuffix(q, ")"))
			return []byte(s), err == nil
		}
	}
	return nil, false
}

// sameAsGeneric parses raw both ways, once and as two stream chunks, and
// compares every field and the scores, floats to the bit.
func sameAsGeneric(t *testing.T, raw []byte) {
	t.Helper()
	fast, generic := &Logprobs{}, &Logprobs{}
	fast.add(raw, true)
	generic.add(raw, false)
	if got, want := dumpLogprobs(fast), dumpLogprobs(generic); got != want {
		t.Fatalf("%q:\nfast    %s\ngeneric %s", raw, got, want)
	}
	fast.add(raw, true)
	generic.add(raw, false)
	if got, want := dumpLogprobs(fast), dumpLogprobs(generic); got != want {
		t.Fatalf("%q added twice:\nfast    %s\ngeneric %s", raw, got, want)
	}
	for _, opt := range []Options{{}, {Greedy: true}, {Text: "Hello there, how are you?"}} {
		if got, want := fmt.Sprintf("%#v", fast.Score(opt)), fmt.Sprintf("%#v", generic.Score(opt)); got != want {
			t.Fatalf("%q scores:\nfast    %s\ngeneric %s", raw, got, want)
		}
	}
}

// dumpLogprobs spells out every field; floats by their bits (%v would
// read -0 and 0 as one).
func dumpLogprobs(l *Logprobs) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v %v %d:", l.Shape, l.Truncated, len(l.Tokens))
	cand := func(c Candidate) {
		fmt.Fprintf(&b, " {%x %d %q %q %v}", math.Float64bits(c.Logprob), c.ID, c.Token, c.Bytes, c.HasBytes)
	}
	for _, tk := range l.Tokens {
		fmt.Fprintf(&b, "\n  %b", tk.Flags)
		cand(tk.Outer)
		b.WriteString(" [")
		for _, c := range tk.Candidates {
			cand(c)
		}
		fmt.Fprintf(&b, "] nil %v", tk.Candidates == nil)
	}
	return b.String()
}
