package heuristics

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// prose returns the text without fenced code blocks (``` or ~~~ lines
// open and close them; an open fence runs to the end), inline code spans
// and <think>…</think> sections: identifiers, literals and numbers in code
// are neither claims nor hedges, and code repeats itself legitimately.
// Each removed part leaves a newline, so sentences do not run together.
func prose(text string) string {
	text = dropSections(text, "<think>", "</think>")
	if !strings.Contains(text, "`") && !strings.Contains(text, "~~~") {
		// No fence and no code span: the prose is the text, without
		// a copy of it (most answers).
		return text
	}
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

// dropSections replaces every open…close section by a newline (a space for
// the one-character inline code delimiters); an unclosed one is kept.
func dropSections(s, open, close string) string {
	if !strings.Contains(s, open) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, open)
		if i < 0 {
			break
		}
		j := strings.Index(s[i+len(open):], close)
		if j < 0 {
			break
		}
		b.WriteString(s[:i])
		if len(open) == 1 {
			b.WriteByte(' ')
		} else {
			b.WriteByte('\n')
		}
		s = s[i+len(open)+j+len(close):]
	}
	b.WriteString(s)
	return b.String()
}

// word is one word of the prose.
type word struct {
	norm      string // lower case, apostrophes removed
	start     int    // byte offsets in the prose
	end       int
	digit     bool // holds a digit
	upper     bool // starts with an upper-case letter
	sentStart bool // first word of a sentence, a line or a list item
	lineStart bool // first word of its line
}

func isApostrophe(r rune) bool { return r == '\'' || r == '’' }

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

// words splits the prose into words: runs of letters, digits and marks,
// with apostrophes inside a word kept out of its normal form ("don't" is
// "dont"). Anything else separates words.
func words(s string) []word {
	var sc scratch
	return sc.words(s)
}

// words is words(s) in the scratch's slices. A norm that is not a slice of
// s (upper case, an apostrophe, non-ASCII) is written to sc.folded, and
// all of them become one string at the end: one allocation per text, not
// one per capitalised word.
func (sc *scratch) words(s string) []word {
	out := sc.ws[:0]
	folded, ends := sc.folded[:0], sc.ends[:0]
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
		plain := true // lower-case ASCII so far: the norm is a slice of s
		for i < len(s) {
			r, n := utf8.DecodeRuneInString(s[i:])
			if isApostrophe(r) && i+n < len(s) {
				next, _ := utf8.DecodeRuneInString(s[i+n:])
				if isWordRune(next) {
					if plain {
						folded, plain = append(folded, s[w.start:i]...), false
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
				folded, plain = append(folded, s[w.start:i]...), false
			}
			if !plain {
				folded = utf8.AppendRune(folded, lower)
			}
			i += n
		}
		w.end = i
		if plain {
			w.norm = s[w.start:i]
		} else {
			ends = append(ends, len(folded)) // its norm is set below
		}
		out = append(out, w)
		sent, line = false, false
	}
	if len(ends) > 0 {
		all := string(folded)
		at, k := 0, 0
		for i := range out {
			if out[i].norm == "" { // the words above left without a norm
				out[i].norm = all[at:ends[k]]
				at = ends[k]
				k++
			}
		}
	}
	sc.ws, sc.folded, sc.ends = out, folded, ends
	return out
}

func isDigitByte(c byte) bool { return c >= '0' && c <= '9' }

// phrases is a set of word sequences, indexed by first word.
type phrases map[string][][]string

func compilePhrases(list []string) phrases {
	p := phrases{}
	for _, s := range list {
		ws := words(s)
		if len(ws) == 0 {
			continue
		}
		seq := make([]string, len(ws))
		for i, w := range ws {
			seq[i] = w.norm
		}
		p[seq[0]] = append(p[seq[0]], seq)
	}
	return p
}

// at returns the length in words of the longest phrase starting at ws[i],
// or 0.
func (p phrases) at(ws []word, i int) int {
	best := 0
	for _, seq := range p[ws[i].norm] {
		if len(seq) <= best || i+len(seq) > len(ws) {
			continue
		}
		ok := true
		for k := 1; k < len(seq); k++ {
			if ws[i+k].norm != seq[k] {
				ok = false
				break
			}
		}
		if ok {
			best = len(seq)
		}
	}
	return best
}

// count counts non-overlapping occurrences, longest first at each word.
func (p phrases) count(ws []word) int {
	n := 0
	for i := 0; i < len(ws); {
		if l := p.at(ws, i); l > 0 {
			n++
			i += l
			continue
		}
		i++
	}
	return n
}

func set(list []string) map[string]bool {
	m := make(map[string]bool, len(list))
	for _, s := range list {
		for _, w := range words(s) {
			m[w.norm] = true
		}
	}
	return m
}
