package heuristics

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// Texts of the kinds answers are: prose with names, numbers and
// references, refusals, hedges, loops, code, reasoning, other scripts and
// apostrophes.
var referenceTexts = []string{
	"", "I can't help with that.", "It was founded in 1969 by Marie [1].", strings.Repeat("spam ", 12),
	"```\ncode\n", "<think>x</think>maybe", "`a` `b", "Don’t", "\xff\xfe", "1. a\n2) b",
	strings.Repeat("Paris was founded around 250 BC. It is probably the largest city in France, according to most sources. ", 40),
	"Hello! How can I help you today? I think the answer is 42, roughly.",
	"As an AI, I don't have access to real-time data. According to Smith et al., the population of Tokyo was 13,960,000 in 2021 (see https://example.org).",
	"Look:\n```\n" + strings.Repeat("x = x + 1\n", 20) + "```\nDone.",
	"  ~~~python\nprint('Hi')\n~~~\nThe Eiffel Tower opened on March 31, 1889.",
	"ÉCOLE Ⱥ ǅ İstanbul KELVIN straße Ǆemal l'Été — ça va? Δ Σίσυφος ΣΑΣ",
	"<think>Let me think about May 5.</think>We met in May. You may go. May 5 it is.",
	strings.Repeat("The cat sat on the mat. ", 3) + "The Cat SAT on THE mat!",
	"It's Bob's dog's bone; isn't it? 'quoted' words' ends’ and ’starts",
	"1) First\n2. Second\n  3. Third [12] [x] [] [123456]",
}

// randomText draws n words from a vocabulary that mixes stopwords,
// capitalised and non-ASCII words, numbers, punctuation and code marks.
func randomText(r *rand.Rand, n int) string {
	vocab := []string{"the", "a", "The", "Paris", "paris", "PARIS", "maybe", "I", "can't", "cannot", "know", "don’t",
		"1969", "3.5", "[2]", "according", "to", "May", "march", "Été", "été", "İ", "K", "straße", "spam", "loop",
		".", "!", "?", ";", ":", "\n", "\n\n", "`x`", "```", "~~~", "<think>", "</think>", "•", "1.", "2)", "’", "'"}
	var b strings.Builder
	for i := range n {
		if i > 0 && r.IntN(4) > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(vocab[r.IntN(len(vocab))])
	}
	return b.String()
}

// FuzzEvaluateMatchesReference: Evaluate, with its pooled scratch and
// shared norms, gives what the code before them gave, bit for bit, and
// words gives the same words.
func FuzzEvaluateMatchesReference(f *testing.F) {
	for _, s := range referenceTexts {
		f.Add(s, true, false, false)
		f.Add(s, false, false, false)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		f.Add(randomText(r, r.IntN(300)), r.IntN(2) == 0, r.IntN(4) == 0, r.IntN(4) == 0)
	}
	loose := Default
	loose.RepetitionMinWords = 0
	checkers := []*Checker{defaultChecker, Compile(loose)}
	f.Fuzz(func(t *testing.T, text string, offered, called, results bool) {
		in := Input{Text: text, ToolsOffered: offered, ToolCalled: called, ToolResults: results}
		for _, c := range checkers {
			want := c.refEvaluate(in)
			// Twice: the second one runs on a scratch the first one used.
			for range 2 {
				if got := c.Evaluate(in); got != want {
					t.Fatalf("%q: %+v, want %+v", text, got, want)
				}
			}
		}
		if got, want := words(text), refWords(text); !reflect.DeepEqual(got, want) && len(got)+len(want) > 0 {
			t.Fatalf("%q: words %+v, want %+v", text, got, want)
		}
		if got, want := prose(text), refProse(text); got != want {
			t.Fatalf("%q: prose %q, want %q", text, got, want)
		}
	})
}

// Evaluations of different texts, one after another and at once, each
// match the reference: what one leaves in a pooled scratch never reaches
// the next.
func TestEvaluateMatchesReferenceConcurrently(t *testing.T) {
	texts := append([]string(nil), referenceTexts...)
	r := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		texts = append(texts, randomText(r, r.IntN(600)))
	}
	texts = append(texts, randomText(r, 3*maxPooledWords)) // past what a scratch keeps
	done := make(chan struct{})
	for w := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range texts {
				in := Input{Text: texts[(i*7+w)%len(texts)], ToolsOffered: true}
				if got, want := Evaluate(in), defaultChecker.refEvaluate(in); got != want {
					t.Errorf("%q: %+v, want %+v", in.Text, got, want)
					return
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
}
