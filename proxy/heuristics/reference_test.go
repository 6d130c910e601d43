package heuristics

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The heuristics as they were before their scratch was pooled and their
// words' norms shared one buffer: the reference FuzzEvaluateMatchesReference
// holds the current code to. Only the functions that changed are here;
// the rules that read the words (refusal1, hedging, kinds), dropSections
// and the way the rules combine (Checker.result) are shared.

// Evaluate applies every rule and combines them.
func (c *Checker) refEvaluate(in Input) Result {
	p := refProse(in.Text)
	ws := refWords(p)
	return c.result(in, p, ws, c.refRepetition(ws))
}

// repetition: of the words that are not stopwords, the count of the most
// frequent word trigram over the number of trigrams.
func (c *Checker) refRepetition(ws []word) float64 {
	var content []string
	for _, w := range ws {
		if !c.stop[w.norm] {
			content = append(content, w.norm)
		}
	}
	if len(content) < max(c.r.RepetitionMinWords, 3) {
		return 0
	}
	counts := make(map[[3]string]int, len(content))
	top := 0
	for i := 0; i+3 <= len(content); i++ {
		k := [3]string{content[i], content[i+1], content[i+2]}
		counts[k]++
		top = max(top, counts[k])
	}
	return float64(top) / float64(len(content)-2)
}

// prose returns the text without fenced code blocks (``` or ~~~ lines
// open and close them; an open fence runs to the end), inline code spans
// and <think>…</think> sections: identifiers, literals and numbers in code
// are neither claims nor hedges, and code repeats itself legitimately.
// Each removed part leaves a newline, so sentences do not run together.
func refProse(text string) string {
	text = dropSections(text, "<think>", "</think>")
	var b strings.Builder
	b.Grow(len(text))
	fenced := false
	for line := range strings.Lines(text) {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			b.WriteByte('\n')
			continue
		}
		if fenced {
			continue
		}
		b.WriteString(dropSections(line, "`", "`"))
	}
	return b.String()
}

// words splits the prose into words: runs of letters, digits and marks,
// with apostrophes inside a word kept out of its normal form ("don't" is
// "dont"). Anything else separates words.
func refWords(s string) []word {
	var out []word
	sent, line := true, true
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isWordRune(r) {
			switch {
			case r == '\n':
				sent, line = true, true
			case r == '.' || r == '!' || r == '?' || r == ':' || r == ';' || r == '•':
				// What follows starts anew, except after the point of a
				// decimal number ("3.5" is the words "3" and "5").
				sent = sent || r != '.' || i+1 >= len(s) || !isDigitByte(s[i+1])
			}
			i += n
			continue
		}
		w := word{start: i, sentStart: sent, lineStart: line, upper: unicode.IsUpper(r)}
		var nb []byte
		plain := true // lower-case ASCII so far: the norm is a slice of s
		for i < len(s) {
			r, n := utf8.DecodeRuneInString(s[i:])
			if isApostrophe(r) && i+n < len(s) {
				next, _ := utf8.DecodeRuneInString(s[i+n:])
				if isWordRune(next) {
					if plain {
						nb, plain = append(nb, s[w.start:i]...), false
					}
					i += n
					continue
				}
			}
			if !isWordRune(r) {
				break
			}
			if unicode.IsDigit(r) {
				w.digit = true
			}
			lower := unicode.ToLower(r)
			if plain && (r >= utf8.RuneSelf || lower != r) {
				nb, plain = append(nb, s[w.start:i]...), false
			}
			if !plain {
				nb = utf8.AppendRune(nb, lower)
			}
			i += n
		}
		w.end = i
		if plain {
			w.norm = s[w.start:i]
		} else {
			w.norm = string(nb)
		}
		out = append(out, w)
		sent, line = false, false
	}
	return out
}
