package confidence

import (
	"fmt"
	"strings"
	"testing"
)

// tok is a test token: an outer entry and a list ("token:logprob").
type tok struct {
	outer string
	list  []string
}

func entry(s string) string {
	text, lp, _ := strings.Cut(s, ":")
	return fmt.Sprintf(`{"token": %q, "logprob": %s}`, text, lp)
}

func build(toks ...tok) []byte {
	var es []string
	for _, t := range toks {
		e := entry(t.outer)
		var ls []string
		for _, c := range t.list {
			ls = append(ls, entry(c))
		}
		e = strings.TrimSuffix(e, "}") + `, "top_logprobs": [` + strings.Join(ls, ", ") + "]}"
		es = append(es, e)
	}
	return []byte(`{"content": [` + strings.Join(es, ", ") + "]}")
}

func TestIdentifyByText(t *testing.T) {
	for _, tc := range []struct {
		name    string
		toks    []tok
		text    string
		want    []float64
		methods []Method
	}{
		{
			name: "byte-level BPE, quirky outer entry",
			toks: []tok{{"Ġsea:-2.5", []string{"Ġsea:-2.5", "Ġocean:-0.125", "Ċ:-3"}}, {"Ċ:-4", []string{"Ċ:-4", ".:-0.5"}}},
			text: " ocean.", want: []float64{-0.125, -0.5}, methods: []Method{MethodText, MethodText},
		},
		{
			name: "SentencePiece pieces and byte tokens",
			toks: []tok{{"▁sea:-2.5", []string{"▁sea:-2.5", "▁ocean:-0.125"}}, {"<0x0A>:-1", []string{"<0x0A>:-1", ".:-0.5"}}},
			text: " ocean\n", want: []float64{-0.125, -1}, methods: []Method{MethodText, MethodText},
		},
		{
			// " a" and " an" both spell the start of " an apple"; only after
			// " an" does the next token follow.
			name: "prefix ambiguity settled by the next token",
			toks: []tok{{"Ġa:-0.5", []string{"Ġa:-0.5", "Ġan:-1.2"}}, {"Ġapple:-0.1", []string{"Ġapple:-0.1", "Ġpear:-3"}}},
			text: " an apple", want: []float64{-1.2, -0.1}, methods: []Method{MethodText, MethodText},
		},
		{
			// OpenAI: the outer entry is the sampled token, here outside the
			// top-2 list.
			name: "sampled token outside the list",
			toks: []tok{{" another:-3", []string{" a:-0.5", " an:-1.2"}}, {" day:-0.1", []string{" day:-0.1", " week:-3"}}},
			text: " another day", want: []float64{-3, -0.1}, methods: []Method{MethodText, MethodText},
		},
		{
			// The text has a character no token wrote (a trimmed or added
			// newline); the walk finds its place again.
			name: "resync after text no token wrote",
			toks: []tok{{"Hello:-0.1", []string{"Hello:-0.1", "Hi:-3"}}, {"Ġworld:-2", []string{"Ġworld:-2", "Ġthere:-0.2"}}},
			text: "Hello\n world", want: []float64{-0.1, -2}, methods: []Method{MethodText, MethodText},
		},
		{
			// mlx_lm: </think> is in the logprobs, not in reasoning+content.
			// Nothing spells the text there, so the added token is taken.
			name: "added tokens inside the text",
			toks: []tok{{"<think>:-0.01", []string{"<think>:-0.01", "Hello:-5"}}, {"ok:-0.3", []string{"ok:-0.3", "no:-1.5"}},
				{"Ġyes:-3", []string{"Ġyes:-3", "</think>:-0.9", "Ċ:-0.7"}}, {"Hi:-0.2", []string{"Hi:-0.2", "Hey:-1.9"}}},
			text: "okHi", want: []float64{-0.01, -0.3, -0.9, -0.2},
			methods: []Method{MethodFallback, MethodText, MethodFallback, MethodText},
		},
		{
			// The answer's last token is its end-of-sequence token, even when
			// the sampler took it as the runner-up.
			name: "end of sequence as the runner-up",
			toks: []tok{{"Hi:-0.2", []string{"Hi:-0.2", "Hey:-1.9"}}, {"Ġthere:-0.1", []string{"Ġthere:-0.1", "<|im_end|>:-2.5"}}},
			text: "Hi", want: []float64{-0.2, -2.5}, methods: []Method{MethodText, MethodFallback},
		},
		{
			// No text given, sorted lists (an OpenAI-conformant engine): the
			// outer entry is trusted.
			name: "fallback to a trusted outer entry",
			toks: []tok{{" b:-1", []string{" a:-0.5", " b:-1"}}},
			text: "", want: []float64{-1}, methods: []Method{MethodFallback},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := Parse(build(tc.toks...))
			picks := l.Identify(Options{Text: tc.text})
			for i, p := range picks {
				if p.Logprob != tc.want[i] || p.Method != tc.methods[i] {
					t.Errorf("token %d: %+v, want %v by %v", i, p, tc.want[i], tc.methods[i])
				}
			}
		})
	}
}

func TestToolCallText(t *testing.T) {
	if got := ToolCallText("get_weather", `{"city": "Paris"}`); got != "\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n" {
		t.Errorf("%q", got)
	}
}

func TestMatchLen(t *testing.T) {
	for _, tc := range []struct {
		text string
		c    Candidate
		want int
	}{
		{" word!", Candidate{Token: "Ġword"}, 5},
		{"\n\nx", Candidate{Token: "ĊĊ"}, 2},
		{" word", Candidate{Token: "▁word"}, 5},
		{"\nx", Candidate{Token: "<0x0A>"}, 1},
		{"é", Candidate{Token: "Ã©"}, 2}, // byte-level é
		{"é", Candidate{Token: "é"}, 2},  // decoded text
		{"Hi", Candidate{Token: "Hello", Bytes: "Hi", HasBytes: true}, 2},
		{"Hi", Candidate{Token: "Hi", Bytes: "", HasBytes: true}, 0},
		{"x", Candidate{Token: ""}, 0},
		{"", Candidate{Token: "a"}, 0},
		{"ab", Candidate{Token: "abc"}, 0},
	} {
		if got := matchLen(tc.text, 0, &tc.c); got != tc.want {
			t.Errorf("matchLen(%q, %+v) = %d, want %d", tc.text, tc.c, got, tc.want)
		}
	}
}
