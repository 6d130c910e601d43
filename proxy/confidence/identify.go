package confidence

import "encoding/json"

// Which candidate was sampled. See README.md, "The sampled token".

// Method says how a token's sampled logprob was found.
type Method uint8

const (
	// MethodNone: nothing usable; the token is not scored.
	MethodNone Method = iota
	// MethodGiven: the entry's own logprob, which is the sampled token's:
	// entries without a top-N list (mlx_lm's logprobs: true, where
	// server.py stores logprobs[token]), and the legacy layout.
	MethodGiven
	// MethodGreedy: temperature 0, so the most likely candidate.
	MethodGreedy
	// MethodText: the candidate that spells the output text at this point.
	MethodText
	// MethodFallback: no candidate spelled the text (an added token such
	// as <|im_end|>, tool-call text, text the caller did not pass, or a
	// sampled token outside the top-N): the outer entry, or the most
	// likely candidate when the list arrived unsorted, since an outer
	// entry copied from an unsorted list is arbitrary.
	MethodFallback
)

func (m Method) String() string {
	return [...]string{"none", "given", "greedy", "text", "fallback"}[m]
}

// Pick is the sampled token identified for one generated token.
type Pick struct {
	Logprob float64
	Method  Method
	// Candidate indexes Token.Candidates; -1 for the outer entry or none.
	Candidate int
}

// Options says what is known about the generation.
type Options struct {
	// Greedy: the request ran at temperature 0 (the request's temperature,
	// else the server's --temp, mlx_lm's default 0.0).
	Greedy bool
	// Text is the generated text in generation order: the reasoning, then
	// the content, as the engine returned them (concatenate the stream's
	// deltas). Empty: no text walk (only Greedy or given logprobs and
	// fallbacks).
	Text string
	// LowConfidence is the threshold for low-confidence tokens and
	// responses; 0 means DefaultLowConfidence.
	LowConfidence float64
}

// DefaultLowConfidence is the default low-confidence threshold.
const DefaultLowConfidence = 0.5

// resyncWindow is how far (in bytes, each way) the text walk looks for its
// place again after a token that did not match at the cursor.
const resyncWindow = 16

// Identify finds the sampled token of every generated token.
func (l *Logprobs) Identify(opt Options) []Pick {
	picks := make([]Pick, len(l.Tokens))
	w := walker{toks: l.Tokens, text: opt.Text}
	for i := range l.Tokens {
		picks[i] = w.pick(i, opt.Greedy)
	}
	return picks
}

type walker struct {
	toks []Token
	text string
	pos  int
}

func (w *walker) pick(i int, greedy bool) Pick {
	t := &w.toks[i]
	none := Pick{Method: MethodNone, Candidate: -1}
	if t.Flags&Malformed != 0 {
		return none
	}
	if len(t.Candidates) == 0 || t.Flags&OuterSampled != 0 {
		if !t.HasOuter() {
			return none
		}
		// Keep the walk in step for the tokens after (a stream can mix
		// entries with and without lists).
		if n := matchLen(w.text, w.pos, &t.Outer); n > 0 {
			w.pos += n
		}
		return Pick{Logprob: t.Outer.Logprob, Method: MethodGiven, Candidate: -1}
	}
	if greedy {
		// The list is sorted, ties broken by the lower id as mx.argmax does.
		if n := matchLen(w.text, w.pos, &t.Candidates[0]); n > 0 {
			w.pos += n
		}
		return Pick{Logprob: t.Candidates[0].Logprob, Method: MethodGreedy, Candidate: 0}
	}
	if k, n := w.choose(i, w.pos); k != noMatch {
		w.pos += n
		return w.result(t, k, MethodText)
	}
	if w.pos < len(w.text) {
		if k, at, n := w.resync(i); k != noMatch {
			w.pos = at + n
			return w.result(t, k, MethodText)
		}
	}
	// Nothing spells the text here. Inside the text (the walk is in step:
	// resync found nothing), and at the last token of an answer whose text
	// is all read (its end-of-sequence token), the sampled token is one
	// that writes no text: an added token such as </think> or <|im_end|>.
	if w.pos < len(w.text) || i == len(w.toks)-1 && w.pos == len(w.text) && w.text != "" {
		for k := range t.Candidates {
			if looksAdded(t.Candidates[k].Token) {
				return Pick{Logprob: t.Candidates[k].Logprob, Method: MethodFallback, Candidate: k}
			}
		}
	}
	if t.HasOuter() && t.Flags&Unsorted == 0 {
		return w.result(t, outerOption, MethodFallback)
	}
	return Pick{Logprob: t.Candidates[0].Logprob, Method: MethodFallback, Candidate: 0}
}

// looksAdded reports whether a token is spelled like an added (special)
// token: "<|im_end|>", "<think>", "</s>"; not a byte token like "<0x0A>".
func looksAdded(tok string) bool {
	if len(tok) < 3 || tok[0] != '<' || tok[len(tok)-1] != '>' {
		return false
	}
	if len(tok) == 6 && tok[1] == '0' && tok[2] == 'x' {
		return false
	}
	for _, r := range tok {
		if r == ' ' || r == '\t' || r == '\n' || r == '▁' || r == 'Ġ' || r == 'Ċ' {
			return false
		}
	}
	return true
}

const (
	noMatch     = -2
	outerOption = -1
)

func (w *walker) result(t *Token, k int, m Method) Pick {
	if k == outerOption {
		// The outer entry may be a copy of a list member: name that one.
		return Pick{Logprob: t.Outer.Logprob, Method: m, Candidate: outerIndex(t)}
	}
	return Pick{Logprob: t.Candidates[k].Logprob, Method: m, Candidate: k}
}

// outerIndex finds the list member the outer entry copies, or -1.
func outerIndex(t *Token) int {
	for k := range t.Candidates {
		if same(&t.Outer, &t.Candidates[k]) {
			return k
		}
	}
	return -1
}

func same(a, b *Candidate) bool {
	if a.Logprob != b.Logprob {
		return false
	}
	if a.ID >= 0 && b.ID >= 0 {
		return a.ID == b.ID
	}
	return a.Token == b.Token && a.Bytes == b.Bytes
}

// options lists what token i may have been: its candidates, and its outer
// entry when that is usable and not a copy of one (OpenAI: the sampled
// token, which may lie outside the top-N).
func (w *walker) each(i int, f func(k int, c *Candidate)) {
	t := &w.toks[i]
	for k := range t.Candidates {
		f(k, &t.Candidates[k])
	}
	if t.HasOuter() && outerIndex(t) < 0 {
		f(outerOption, &t.Outer)
	}
}

// choose picks the option of token i that spells the text at pos; among
// several, the one after which token i+1 also matches, then the longest,
// then the most likely. It returns the option and its length.
func (w *walker) choose(i, pos int) (best, bestLen int) {
	best, bestLen = noMatch, 0
	bestNext := false
	var bestLP float64
	w.each(i, func(k int, c *Candidate) {
		n := matchLen(w.text, pos, c)
		if n == 0 {
			return
		}
		next := w.matchesAt(i+1, pos+n)
		better := best == noMatch ||
			next && !bestNext ||
			next == bestNext && (n > bestLen || n == bestLen && c.Logprob > bestLP)
		if better {
			best, bestLen, bestNext, bestLP = k, n, next, c.Logprob
		}
	})
	return best, bestLen
}

// matchesAt reports whether token i (if any) has an option spelling the
// text at pos.
func (w *walker) matchesAt(i, pos int) bool {
	if i >= len(w.toks) || pos > len(w.text) {
		return false
	}
	found := false
	w.each(i, func(_ int, c *Candidate) {
		found = found || matchLen(w.text, pos, c) > 0
	})
	return found
}

// resync looks near the cursor for a place where token i matches and token
// i+1 follows it (or token i is the last): the walk lost its place, e.g.
// after a token that matched text it did not produce, or text no token
// produced (a trimmed newline).
func (w *walker) resync(i int) (k, at, n int) {
	for d := 1; d <= resyncWindow; d++ {
		for _, p := range [2]int{w.pos + d, w.pos - d} {
			if p < 0 || p >= len(w.text) {
				continue
			}
			if k, n := w.choose(i, p); k != noMatch && (i+1 == len(w.toks) || w.matchesAt(i+1, p+n)) {
				return k, p, n
			}
		}
	}
	return noMatch, 0, 0
}

// ToolCallText is the text a Hermes-style model (Qwen, and most models
// mlx_lm parses tool calls for) wrote between <tool_call> and </tool_call>
// for a call: "\n{"name": NAME, "arguments": ARGUMENTS}\n", with arguments
// the call's JSON string as the response gave it. Appended to
// Options.Text after the content, it lets the walk read tool-call tokens
// too; where the model wrote otherwise those tokens fall back.
func ToolCallText(name, arguments string) string {
	q, err := json.Marshal(name)
	if err != nil {
		q = []byte(`""`)
	}
	return "\n{\"name\": " + string(q) + ", \"arguments\": " + arguments + "}\n"
}
