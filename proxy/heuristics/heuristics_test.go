package heuristics

import (
	"math"
	"strings"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestRepetition(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       float64
	}{
		{"empty", "", 0},
		{"too few words", "alpha beta gamma alpha beta gamma alpha beta", 0},
		// 9 words, 7 trigrams: (alpha beta gamma) 3 times.
		{"period three loop", "alpha beta gamma alpha beta gamma alpha beta gamma", 3.0 / 7},
		{"one word loop", strings.Repeat("spam ", 12), 1},
		// Stopwords are dropped first: cat sat mat cat sat mat cat sat mat.
		{"stopwords dropped", strings.Repeat("The cat sat on the mat. ", 3), 3.0 / 7},
		{"no repeats", "one two three four five six seven eight nine ten", 1.0 / 8},
		{"case and punctuation", "Alpha, BETA gamma! alpha beta: gamma? ALPHA beta gamma", 3.0 / 7},
		{"code is not prose", "Look:\n```\n" + strings.Repeat("x = x + 1\n", 20) + "```\nDone.", 0},
	} {
		if got := Repetition(tc.text); !near(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestRefusal(t *testing.T) {
	long := strings.Repeat("Here is a thorough answer with many words in it. ", 6)
	for _, tc := range []struct {
		name, text string
		want       float64
	}{
		{"plain", "I can't help with that.", 1},
		{"curly apostrophe", "I’m unable to browse the web.", 1},
		{"no apostrophe", "i cant do that", 1},
		{"after an apology", "Sorry, but I cannot share that.", 1},
		{"no information", "There is no information about that person.", 1},
		{"as an ai", "As an AI, I do not have opinions.", 1},
		{"late in a long answer", long + "I don't know why it fails, though.", 0},
		{"helpful", "Sure! Here is how to do it.", 0},
		{"not a word match", "Icannot", 0},
		{"in code", "```\nprint(\"I can't\")\n```", 0},
		// A known false positive: the phrase leads, the answer helps.
		{"known false positive", "I can't stress this enough: back up first.", 1},
	} {
		if got := Refusal(tc.text); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestHedging(t *testing.T) {
	filler := func(n int) string { return strings.Repeat("word ", n) }
	for _, tc := range []struct {
		name, text string
		want       float64
	}{
		{"none", "The answer is four.", 0},
		{"one in a short answer", "It is probably fine.", 0.2},
		{"whole words only", "That is unlikely.", 0},
		{"phrases", "As far as I know, it is maybe fine. I think so.", 0.6},
		{"five saturate a short answer", "maybe perhaps probably possibly likely", 1},
		{"density in a long answer", "maybe perhaps probably possibly likely " + filler(195), 0.5},
		{"capped", strings.Repeat("maybe ", 20), 1},
		{"in code", "`maybe()` is a function.", 0},
	} {
		if got := Hedging(tc.text); !near(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestUngrounded(t *testing.T) {
	offered := func(text string) Input { return Input{Text: text, ToolsOffered: true} }
	for _, tc := range []struct {
		name string
		in   Input
		want float64
	}{
		{"no tools offered", Input{Text: "It was founded in 1969 by Marie."}, 0},
		{"tool called", Input{Text: "It was founded in 1969.", ToolsOffered: true, ToolCalled: true}, 0},
		{"tool results in the conversation", Input{Text: "It was founded in 1969.", ToolsOffered: true, ToolResults: true}, 0},
		{"nothing factual", offered("Sure, I can help with that."), 0},
		{"a number", offered("It is 21 degrees."), 0.5},
		{"a year: number and date", offered("It was founded in 1969."), 1},
		{"a month", offered("It opens in March."), 0.5},
		{"may the verb", offered("You may want to wait."), 0},
		{"may the month", offered("We met on May 5."), 1},
		{"a name inside a sentence", offered("Paris is lovely, says Marie."), 0.5},
		{"sentence starts are not names", offered("Paris is lovely. Rome too."), 0},
		{"I is not a name", offered("Well, I think so."), 0},
		{"a citation", offered("according to the manual, restart it."), 0.5},
		{"a bracket reference", offered("restart it [2]."), 0.5},
		{"list markers are not numbers", offered("1. open the file\n2) save it"), 0},
		{"numbers in code", offered("run `sleep 10` then\n```\nport = 8080\n```"), 0},
		{"all kinds", offered("according to Marie, on March 3, 1969 it rained [1]."), 1},
	} {
		if got := Ungrounded(tc.in); !near(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestRiskAndFlag(t *testing.T) {
	c := Compile(Default)
	for _, tc := range []struct {
		r    Result
		want float64
	}{
		{Result{}, 0},
		{Result{Repetition: 1}, 0.5},
		{Result{Refusal: 1}, 0.25},
		{Result{Hedging: 1}, 0.4},
		{Result{Ungrounded: 1}, 0.7},
		{Result{Repetition: 1, Refusal: 1, Hedging: 1, Ungrounded: 1}, 1},
	} {
		if got := c.Risk(tc.r); !near(got, tc.want) {
			t.Errorf("%+v: %v, want %v", tc.r, got, tc.want)
		}
	}
	// The flag is strictly above the threshold.
	r := Evaluate(Input{Text: strings.Repeat("spam ", 12)}) // repetition 1: risk 0.5
	if !near(r.Risk, 0.5) || r.Flagged {
		t.Errorf("%+v", r)
	}
	r = Evaluate(Input{Text: "It was founded in 1969.", ToolsOffered: true}) // 0.7
	if !near(r.Risk, 0.7) || !r.Flagged {
		t.Errorf("%+v", r)
	}
	strict := Default
	strict.FlagThreshold = 0.8
	if r = Compile(strict).Evaluate(Input{Text: "It was founded in 1969.", ToolsOffered: true}); r.Flagged {
		t.Errorf("threshold 0.8: %+v", r)
	}
}

func TestWords(t *testing.T) {
	ws := words("Don’t stop.\n3.5 Paris: Rome")
	var got []string
	for _, w := range ws {
		got = append(got, w.norm)
	}
	if strings.Join(got, "|") != "dont|stop|3|5|paris|rome" {
		t.Errorf("%v", got)
	}
	if !ws[0].sentStart || ws[1].sentStart || !ws[2].lineStart || ws[3].sentStart || !ws[4].upper || !ws[5].sentStart {
		t.Errorf("%+v", ws)
	}
}

func FuzzEvaluate(f *testing.F) {
	for _, s := range []string{
		"", "I can't help with that.", "It was founded in 1969 by Marie [1].", strings.Repeat("spam ", 12),
		"```\ncode\n", "<think>x</think>maybe", "`a` `b", "Don’t", "\xff\xfe", "1. a\n2) b",
	} {
		f.Add(s, true, false, false)
	}
	f.Fuzz(func(t *testing.T, text string, offered, called, results bool) {
		r := Evaluate(Input{Text: text, ToolsOffered: offered, ToolCalled: called, ToolResults: results})
		for _, v := range []float64{r.Repetition, r.Refusal, r.Hedging, r.Ungrounded, r.Risk} {
			if math.IsNaN(v) || v < 0 || v > 1 {
				t.Fatalf("%q: %+v", text, r)
			}
		}
		if r.Flagged != (r.Risk > Default.FlagThreshold) {
			t.Fatalf("%+v", r)
		}
	})
}

func BenchmarkEvaluate(b *testing.B) {
	text := strings.Repeat("Paris was founded around 250 BC. It is probably the largest city in France, according to most sources. ", 40)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		Evaluate(Input{Text: text, ToolsOffered: true})
	}
}
