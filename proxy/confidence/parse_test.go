package confidence

import (
	"math"
	"strings"
	"testing"
)

// Real shapes, as the engines write them. They also seed the fuzz corpus.
var shapes = map[string]string{
	// mlx_lm >= 0.30.6, logprobs: true: the sampled token's id and logprob.
	"mlx logprobs": `{"content": [{"id": 9707, "logprob": -0.0078125}, {"id": 11, "logprob": -1.25}]}`,
	// mlx_lm, top_logprobs: 3: the outer entry copies the first member of a
	// list in argpartition order (here not the most likely).
	"mlx top": `{"content": [{"id": 21806, "token": "Ġsea", "logprob": -2.5, "top_logprobs": [{"id": 21806, "token": "Ġsea", "logprob": -2.5}, {"id": 3015, "token": "Ġocean", "logprob": -0.125}, {"id": 13, "token": ".", "logprob": -3.0}]}, {"id": 151645, "token": "<|im_end|>", "logprob": -0.01, "top_logprobs": [{"id": 151645, "token": "<|im_end|>", "logprob": -0.01}, {"id": 198, "token": "Ċ", "logprob": -5.0}, {"id": 13, "token": ".", "logprob": -6.0}]}]}`,
	// mlx_lm when a list came back empty: {}.
	"mlx empty entry": `{"content": [{}, {"id": 1, "token": "a", "logprob": -0.5, "top_logprobs": [{"id": 1, "token": "a", "logprob": -0.5}]}]}`,
	// mlx_lm before 0.30.6 (#829): parallel arrays, (id, lp) pairs.
	"mlx legacy pairs": `{"token_logprobs": [-0.125, -0.5], "top_logprobs": [[[3015, -0.125], [21806, -2.5]], [[13, -1.0], [11, -0.5]]], "tokens": [3015, 11]}`,
	// older mlx_lm: {id: lp} dicts; no list asked: [].
	"mlx legacy dicts":  `{"token_logprobs": [-0.125], "top_logprobs": [{"3015": -0.125, "21806": -2.5}], "tokens": [3015]}`,
	"mlx legacy no top": `{"token_logprobs": [-0.125, -0.25], "top_logprobs": [], "tokens": [3015, 11]}`,
	// OpenAI chat (and vLLM, llama.cpp): decoded text, bytes, sorted, the
	// outer entry is the sampled token.
	"openai chat": `{"content": [{"token": "Hello", "logprob": -0.31725305, "bytes": [72, 101, 108, 108, 111], "top_logprobs": [{"token": "Hello", "logprob": -0.31725305, "bytes": [72, 101, 108, 108, 111]}, {"token": "Hi", "logprob": -1.3190403, "bytes": [72, 105]}]}, {"token": "!", "logprob": -0.02380986, "bytes": [33], "top_logprobs": []}], "refusal": null}`,
	// OpenAI text completions.
	"openai legacy": `{"tokens": [" Hello", "!"], "token_logprobs": [-0.5, -0.1], "top_logprobs": [{" Hello": -0.5, " Hi": -1.5}, {"!": -0.1, ".": -2.5}], "text_offset": [0, 6]}`,
}

func TestParseShapes(t *testing.T) {
	for _, tc := range []struct {
		shape  string
		kind   Shape
		tokens int
		check  func(t *testing.T, l *Logprobs)
	}{
		{"mlx logprobs", ShapeContent, 2, func(t *testing.T, l *Logprobs) {
			tk := l.Tokens[1]
			if tk.Outer.ID != 11 || tk.Outer.Logprob != -1.25 || tk.Outer.Token != "" || tk.Flags != NoTopList {
				t.Errorf("%+v", tk)
			}
		}},
		{"mlx top", ShapeContent, 2, func(t *testing.T, l *Logprobs) {
			tk := l.Tokens[0]
			if tk.Outer.Token != "Ġsea" || tk.Flags != Unsorted || tk.Candidates[0].Token != "Ġocean" || tk.Candidates[2].Logprob != -3 {
				t.Errorf("%+v", tk)
			}
			if l.Tokens[1].Flags != 0 {
				t.Errorf("sorted list flagged: %+v", l.Tokens[1])
			}
		}},
		{"mlx empty entry", ShapeContent, 2, func(t *testing.T, l *Logprobs) {
			if l.Tokens[0].Flags != NoOuterLogprob|NoTopList || len(l.Tokens[1].Candidates) != 1 {
				t.Errorf("%+v", l.Tokens)
			}
		}},
		{"mlx legacy pairs", ShapeLegacy, 2, func(t *testing.T, l *Logprobs) {
			tk := l.Tokens[1]
			if tk.Outer.ID != 11 || tk.Outer.Logprob != -0.5 || tk.Flags != OuterSampled|Unsorted || tk.Candidates[0].ID != 11 {
				t.Errorf("%+v", tk)
			}
		}},
		{"mlx legacy dicts", ShapeLegacy, 1, func(t *testing.T, l *Logprobs) {
			tk := l.Tokens[0]
			if tk.Candidates[0].ID != 3015 || tk.Candidates[0].Token != "" || tk.Candidates[1].ID != 21806 {
				t.Errorf("%+v", tk)
			}
		}},
		{"mlx legacy no top", ShapeLegacy, 2, func(t *testing.T, l *Logprobs) {
			if l.Tokens[0].Flags != OuterSampled|NoTopList {
				t.Errorf("%+v", l.Tokens[0])
			}
		}},
		{"openai chat", ShapeContent, 2, func(t *testing.T, l *Logprobs) {
			tk := l.Tokens[0]
			if tk.Outer.Token != "Hello" || tk.Outer.Bytes != "Hello" || !tk.Outer.HasBytes || tk.Outer.ID != -1 || len(tk.Candidates) != 2 || tk.Candidates[1].Bytes != "Hi" {
				t.Errorf("%+v", tk)
			}
			if l.Tokens[1].Flags != NoTopList {
				t.Errorf("%+v", l.Tokens[1])
			}
		}},
		{"openai legacy", ShapeLegacy, 2, func(t *testing.T, l *Logprobs) {
			tk := l.Tokens[0]
			if tk.Outer.Token != " Hello" || tk.Outer.ID != -1 || tk.Candidates[1].Token != " Hi" || tk.Candidates[1].ID != -1 {
				t.Errorf("%+v", tk)
			}
		}},
	} {
		t.Run(tc.shape, func(t *testing.T) {
			l := Parse([]byte(shapes[tc.shape]))
			if l.Shape != tc.kind || len(l.Tokens) != tc.tokens || l.Truncated {
				t.Fatalf("shape %v, %d tokens, truncated %v", l.Shape, len(l.Tokens), l.Truncated)
			}
			tc.check(t, l)
		})
	}
}

// A stream sends one logprobs value per chunk (or null).
func TestParseStreamChunks(t *testing.T) {
	l := &Logprobs{}
	for _, chunk := range []string{
		`{"content": [{"token": "Hel", "logprob": -0.1, "bytes": [72, 101, 108], "top_logprobs": [{"token": "Hel", "logprob": -0.1, "bytes": [72, 101, 108]}, {"token": "Hi", "logprob": -2.5, "bytes": [72, 105]}]}], "refusal": null}`,
		`null`,
		`{"content": [{"token": "lo", "logprob": -0.2, "bytes": [108, 111], "top_logprobs": [{"token": "lo", "logprob": -0.2, "bytes": [108, 111]}]}]}`,
		`{"content": [], "refusal": null}`,
	} {
		l.Add([]byte(chunk))
	}
	if len(l.Tokens) != 2 || l.Shape != ShapeContent || l.Truncated {
		t.Fatalf("%+v", l)
	}
	s := l.Score(Options{Text: "Hello", LowConfidence: .5})
	if s.Tokens != 2 || s.ByText != 2 || !near(s.Perplexity, math.Exp(.15)) {
		t.Errorf("%+v", s)
	}
}

// Malformed or partial logprobs degrade to what can be scored, never panic.
func TestParseMalformed(t *testing.T) {
	for _, tc := range []struct {
		name      string
		raw       string
		tokens    int // entries
		scored    int
		truncated bool
		flags     []Flags // of the first tokens
	}{
		{"empty", ``, 0, 0, false, nil},
		{"null", `null`, 0, 0, false, nil},
		{"not an object", `[1, 2]`, 0, 0, true, nil},
		{"empty object", `{}`, 0, 0, false, nil},
		{"empty content", `{"content": []}`, 0, 0, false, nil},
		{"content null", `{"content": null}`, 0, 0, false, nil},
		{"content not a list", `{"content": "x"}`, 0, 0, false, nil},
		{"missing logprob", `{"content": [{"id": 1}, {"id": 2, "logprob": -0.5}]}`, 2, 1, false, []Flags{NoOuterLogprob | NoTopList, NoTopList}},
		{"NaN and Infinity", `{"content": [{"id": 1, "logprob": NaN}, {"id": 2, "logprob": -Infinity}, {"id": 3, "logprob": Infinity}, {"id": 4, "logprob": -0.5}]}`, 4, 1, false, nil},
		{"non-numbers", `{"content": [{"id": "x", "logprob": "-0.5"}, {"id": 2, "logprob": true}, {"id": 3, "logprob": [1]}, {"id": 4, "logprob": {"a": 1}}, {"id": 5, "logprob": -0.25}]}`, 5, 1, false, nil},
		{"entries not objects", `{"content": [1, "x", null, [], {"id": 1, "logprob": -0.5}]}`, 5, 1, false, []Flags{Malformed | NoOuterLogprob | NoTopList}},
		{"bad candidates dropped", `{"content": [{"id": 1, "logprob": -0.5, "top_logprobs": [{"id": 1, "logprob": -0.5}, {"id": 2}, 7, {"id": 3, "logprob": NaN}]}]}`, 1, 1, false, []Flags{DroppedCandidates}},
		{"all candidates bad", `{"content": [{"id": 1, "logprob": -0.5, "top_logprobs": [{"id": 2}]}]}`, 1, 1, false, []Flags{NoTopList | DroppedCandidates}},
		{"top list not a list", `{"content": [{"id": 1, "logprob": -0.5, "top_logprobs": {"a": 1}}]}`, 1, 1, false, []Flags{NoTopList}},
		{"empty lists", `{"content": [{"id": 1, "logprob": -0.5, "top_logprobs": []}]}`, 1, 1, false, []Flags{NoTopList}},
		{"truncated mid-entry", `{"content": [{"id": 1, "logprob": -0.5}, {"id": 2, "logprob": -0.2}, {"id": 3, "lo`, 2, 2, true, nil},
		{"truncated mid-list", `{"content": [{"id": 1, "logprob": -0.5, "top_logprobs": [{"id": 1, "logprob": -0.5}, {"id"`, 0, 0, true, nil},
		{"trailing garbage in entry", `{"content": [{"id": 1, "logprob": -0.5} x]}`, 1, 1, true, nil},
		{"bad id", `{"content": [{"id": -3, "logprob": -0.5}, {"id": 1.5, "logprob": -0.5}, {"id": 1e30, "logprob": -0.5}]}`, 3, 3, false, nil},
		{"bad bytes", `{"content": [{"token": "a", "bytes": [300, "x"], "logprob": -0.5}]}`, 1, 1, false, nil},
		{"escaped keys", `{"con\u0074ent": [{"log\u0070rob": -0.5, "token": "a\"b\u00e9"}]}`, 1, 1, false, nil},
		{"legacy nulls", `{"token_logprobs": [null, -0.5, "x"], "tokens": [1, null], "top_logprobs": [null, [[1, -0.5], [2], "x", [3, NaN]], 5]}`, 3, 1, false, []Flags{OuterSampled | NoOuterLogprob | NoTopList}},
		{"legacy lengths differ", `{"token_logprobs": [-0.5], "top_logprobs": [[[1, -0.5]], [[2, -0.1]]], "tokens": []}`, 2, 1, false, nil},
		{"legacy truncated", `{"token_logprobs": [-0.5, -0.25, -0.1`, 3, 3, true, nil},
		{"deep nesting", `{"content": [{"x": ` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `, "logprob": -0.5}]}`, 1, 1, false, nil},
		{"unterminated string", `{"content": [{"token": "abc`, 0, 0, true, nil},
		{"numbers out of range", `{"content": [{"logprob": 1e999}, {"logprob": -1e400}, {"logprob": 0x10}, {"logprob": 1_0}]}`, 4, 0, false, nil},
		{"positive logprob", `{"content": [{"logprob": 0.001}]}`, 1, 1, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := Parse([]byte(tc.raw))
			if len(l.Tokens) != tc.tokens || l.Truncated != tc.truncated {
				t.Fatalf("%d tokens (want %d), truncated %v: %+v", len(l.Tokens), tc.tokens, l.Truncated, l.Tokens)
			}
			for i, f := range tc.flags {
				if l.Tokens[i].Flags != f {
					t.Errorf("token %d flags %b, want %b", i, l.Tokens[i].Flags, f)
				}
			}
			s := l.Score(Options{})
			if s.Tokens != tc.scored || s.OK != (tc.scored > 0) || s.Tokens+s.Unscored != len(l.Tokens) {
				t.Errorf("%+v", s)
			}
			checkScore(t, s)
		})
	}
}

// checkScore holds a score to its ranges.
func checkScore(t testing.TB, s Score) {
	t.Helper()
	for _, f := range []float64{s.Perplexity, s.ConfidenceMean, s.ConfidenceMin, s.ConfidenceStd, s.LowConfidenceRatio, s.MarginMean, s.EntropyMean, s.EntropyBoundMean, s.TopMassMean} {
		if math.IsNaN(f) || f < 0 {
			t.Fatalf("bad figure in %+v", s)
		}
	}
	if !s.OK {
		return
	}
	if s.Perplexity < 1 || s.ConfidenceMean > 1 || s.ConfidenceMin > s.ConfidenceMean+1e-12 || s.ConfidenceStd > .5 ||
		s.LowConfidenceRatio > 1 || s.MarginMean > 1 || s.TopMassMean > 1 || s.EntropyBoundMean < s.EntropyMean-1e-12 {
		t.Fatalf("out of range: %+v", s)
	}
	if s.Given+s.Greedy+s.ByText+s.Fallbacks != s.Tokens {
		t.Fatalf("methods do not add up: %+v", s)
	}
}
