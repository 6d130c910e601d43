// Package heuristics scores an answer's text for signs of hallucination:
// repetition, refusal, hedging, and factual-looking claims made without
// the tools that were offered. They are cheap text heuristics, not a
// detector: README.md gives every rule, list and weight (all in rules.go)
// and what each one misses.
package heuristics

import "math"

// Input is what the rules look at.
type Input struct {
	// Text is the answer's content (not its reasoning).
	Text string
	// ToolsOffered: the request carried tools.
	ToolsOffered bool
	// ToolCalled: the answer called a tool.
	ToolCalled bool
	// ToolResults: the conversation already holds tool results (a message
	// with role "tool"), which the answer may rest on.
	ToolResults bool
}

// Result holds each rule's value (0..1), the composite risk and the flag:
// mlx_heuristic_repetition/_refusal/_hedging/_ungrounded,
// mlx_hallucination_risk, mlx_hallucination_flag_total.
type Result struct {
	Repetition, Refusal, Hedging, Ungrounded float64
	Risk                                     float64
	Flagged                                  bool
}

// Checker is a compiled Rules.
type Checker struct {
	r         Rules
	stop      map[string]bool
	refusal   phrases
	hedges    phrases
	months    map[string]bool
	notNames  map[string]bool
	citations phrases
}

// Compile prepares rules for use. The Checker is safe for concurrent use.
func Compile(r Rules) *Checker {
	return &Checker{
		r:         r,
		stop:      set(r.Stopwords),
		refusal:   compilePhrases(r.RefusalPhrases),
		hedges:    compilePhrases(r.HedgePhrases),
		months:    set(r.Months),
		notNames:  set(r.NotNames),
		citations: compilePhrases(r.CitationPhrases),
	}
}

// Evaluate applies every rule and combines them.
func (c *Checker) Evaluate(in Input) Result {
	sc := getScratch()
	defer sc.put()
	p := prose(in.Text)
	ws := sc.words(p)
	return c.result(in, p, ws, c.repetition(ws, sc))
}

// result is the rules applied to the words ws of the prose p of in, with
// the repetition found in them, and combined.
func (c *Checker) result(in Input, p string, ws []word, repetition float64) Result {
	res := Result{
		Repetition: repetition,
		Refusal:    c.refusal1(ws),
		Hedging:    c.hedging(ws),
		Ungrounded: c.ungrounded(in, p, ws),
	}
	res.Risk = c.Risk(res)
	res.Flagged = res.Risk > c.r.FlagThreshold
	return res
}

// Risk is the weighted sum of the rules, at most 1.
func (c *Checker) Risk(r Result) float64 {
	w := &c.r
	return math.Min(1, w.WeightRepetition*r.Repetition+w.WeightRefusal*r.Refusal+
		w.WeightHedging*r.Hedging+w.WeightUngrounded*r.Ungrounded)
}

// repetition: of the words that are not stopwords, the count of the most
// frequent word trigram over the number of trigrams. The words are counted
// as ids (equal norms, equal ids), so that a trigram is 12 bytes to hash
// rather than three strings.
func (c *Checker) repetition(ws []word, sc *scratch) float64 {
	if sc.ids == nil {
		sc.ids = make(map[string]int32, len(ws))
		sc.counts = make(map[[3]int32]int32, len(ws))
	}
	content := sc.content[:0]
	for _, w := range ws {
		if c.stop[w.norm] {
			continue
		}
		id, ok := sc.ids[w.norm]
		if !ok {
			id = int32(len(sc.ids))
			sc.ids[w.norm] = id
		}
		content = append(content, id)
	}
	sc.content = content
	if len(content) < max(c.r.RepetitionMinWords, 3) {
		return 0
	}
	top := int32(0)
	for i := 0; i+3 <= len(content); i++ {
		k := [3]int32{content[i], content[i+1], content[i+2]}
		sc.counts[k]++
		top = max(top, sc.counts[k])
	}
	return float64(top) / float64(len(content)-2)
}

// refusal1: 1 when a refusal phrase starts within the first words.
func (c *Checker) refusal1(ws []word) float64 {
	for i := 0; i < len(ws) && i < c.r.RefusalWindow; i++ {
		if c.refusal.at(ws, i) > 0 {
			return 1
		}
	}
	return 0
}

// hedging: hedges per word, 1 at HedgeSaturation per 100 words.
func (c *Checker) hedging(ws []word) float64 {
	n := c.hedges.count(ws)
	if n == 0 || c.r.HedgeSaturation <= 0 {
		return 0
	}
	per100 := float64(n) * 100 / float64(max(len(ws), c.r.HedgeMinWords, 1))
	return math.Min(1, per100/c.r.HedgeSaturation)
}

// ungrounded: with tools offered and neither called nor already answered,
// UngroundedPerKind for each kind of factual-looking content.
func (c *Checker) ungrounded(in Input, p string, ws []word) float64 {
	if !in.ToolsOffered || in.ToolCalled || in.ToolResults {
		return 0
	}
	k := c.kinds(p, ws)
	return math.Min(1, float64(k.count())*c.r.UngroundedPerKind)
}

// kinds of factual-looking content.
type kinds struct{ number, date, name, citation bool }

func (k kinds) count() int {
	n := 0
	for _, b := range [4]bool{k.number, k.date, k.name, k.citation} {
		if b {
			n++
		}
	}
	return n
}

func (c *Checker) kinds(p string, ws []word) kinds {
	var k kinds
	for i, w := range ws {
		switch {
		case w.digit:
			if isListMarker(p, w) {
				continue
			}
			if w.start > 0 && p[w.start-1] == '[' && w.end < len(p) && p[w.end] == ']' {
				k.citation = true // "[2]" is a reference, not a figure
				continue
			}
			k.number = true
			if isYear(w.norm) {
				k.date = true
			}
		case w.upper && c.months[w.norm]:
			// "May" is a date only next to a number ("May 5", "5 May").
			if w.norm != "may" || i > 0 && ws[i-1].digit || i+1 < len(ws) && ws[i+1].digit {
				k.date = true
			}
		case w.upper && !w.sentStart && !c.notNames[w.norm]:
			k.name = true
		}
		if c.citations.at(ws, i) > 0 {
			k.citation = true
		}
	}
	if hasBracketRef(p) {
		k.citation = true
	}
	return k
}

// isListMarker: "1." or "2)" opening a line.
func isListMarker(p string, w word) bool {
	return w.lineStart && w.end-w.start <= 3 && w.end < len(p) && (p[w.end] == '.' || p[w.end] == ')')
}

func isYear(s string) bool {
	if len(s) != 4 {
		return false
	}
	for i := range 4 {
		if !isDigitByte(s[i]) {
			return false
		}
	}
	return s >= "1000" && s <= "2099"
}

// hasBracketRef finds a "[12]"-style reference.
func hasBracketRef(p string) bool {
	for i := 0; i < len(p); i++ {
		if p[i] != '[' {
			continue
		}
		j := i + 1
		for j < len(p) && j-i <= 4 && isDigitByte(p[j]) {
			j++
		}
		if j > i+1 && j < len(p) && p[j] == ']' {
			return true
		}
	}
	return false
}
