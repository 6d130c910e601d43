package confidence

import (
	"sync"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/jsonedit"
)

// Shape is which logprobs layout a value had.
type Shape uint8

const (
	// ShapeUnknown: nothing recognisable (null, not an object, no known key).
	ShapeUnknown Shape = iota
	// ShapeContent: {"content": [...]}, mlx_lm >= 0.30.6 and OpenAI chat
	// (whole responses and stream chunks).
	ShapeContent
	// ShapeLegacy: {"token_logprobs": [...], "top_logprobs": [...],
	// "tokens": [...]}, mlx_lm before 0.30.6 and OpenAI's text completions.
	ShapeLegacy
)

func (s Shape) String() string {
	switch s {
	case ShapeContent:
		return "content"
	case ShapeLegacy:
		return "legacy"
	}
	return "unknown"
}

// Candidate is one token with its log-probability: an entry of a top-N list
// or a generated token's own entry.
type Candidate struct {
	// Logprob is the natural log of the token's probability, always finite.
	Logprob float64
	// ID is the token id, or -1 when the engine did not send one (OpenAI).
	ID int
	// Token is the token as the engine spelled it: mlx_lm sends the raw
	// tokenizer piece ("Ġword", "▁word"), OpenAI the decoded text. Empty
	// when not sent.
	Token string
	// Bytes is OpenAI's "bytes" (the token's UTF-8 bytes), when HasBytes.
	Bytes    string
	HasBytes bool
}

// Flags say what a generated token's entry lacked or how it looked.
type Flags uint16

const (
	// NoOuterLogprob: the entry had no usable logprob of its own (missing,
	// null, NaN, ±Infinity, not a number).
	NoOuterLogprob Flags = 1 << iota
	// NoTopList: no top-N list (absent, null, empty or unusable).
	NoTopList
	// DroppedCandidates: some top-N entries had no usable logprob and were
	// left out.
	DroppedCandidates
	// Unsorted: the top-N list did not arrive most likely first. mlx_lm's
	// argpartition order does this; an engine that copies its outer entry
	// from such a list cannot be trusted to name the sampled token.
	Unsorted
	// OuterSampled: the layout guarantees the outer entry is the sampled
	// token (the legacy layout: token_logprobs[i] is logprobs[token]).
	OuterSampled
	// Malformed: the entry was not an object (or broke off): nothing usable.
	Malformed
)

// Token is one generated token's logprobs entry.
type Token struct {
	// Outer is the entry's own id/token/logprob, as given (valid unless
	// Flags has NoOuterLogprob). With mlx_lm's top_logprobs it is a copy of
	// an arbitrary member of the list, not the sampled token.
	Outer Candidate
	// Candidates is the top-N list, most likely first (ties: lower id
	// first, else as sent).
	Candidates []Candidate
	Flags      Flags
}

// HasOuter reports whether the entry's own logprob is usable.
func (t *Token) HasOuter() bool { return t.Flags&NoOuterLogprob == 0 }

// Logprobs is a parsed logprobs value: one Token per generated token.
type Logprobs struct {
	Shape  Shape
	Tokens []Token
	// Truncated: the JSON broke off or went wrong part way; Tokens holds
	// what came before.
	Truncated bool
}

// Add appends the tokens of one more logprobs value: a stream sends one per
// chunk, each covering the chunk's tokens.
func (l *Logprobs) Add(raw []byte) { l.add(raw, true) }

// add is Add, with the fast path (parse_fast.go) tried first when fast;
// it reports whether the fast path read the value (tests hold the two
// paths to the same results, and the real layouts to the fast one).
func (l *Logprobs) add(raw []byte, fast bool) (fastRead bool) {
	p := parsers.Get().(*parser)
	defer p.release()
	p.b = raw
	i := jsonedit.SkipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		if i < len(raw) && string(raw[i:]) != "null" {
			l.Truncated = true
		}
		return false
	}
	var shape Shape
	if fast {
		shape, fastRead = p.fastObject(i)
	}
	if !fastRead {
		p.toks, p.cands, p.arena = p.toks[:0], p.cands[:0], p.arena[:0]
		var err error
		if shape, err = p.object(i); err != nil {
			l.Truncated = true
		}
	}
	if len(p.toks) == 0 {
		if l.Shape == ShapeUnknown {
			l.Shape = shape
		}
		return fastRead
	}
	if l.Shape == ShapeUnknown {
		l.Shape = shape
	}
	// Token strings were gathered in one byte arena and candidates in one
	// slice: one string conversion and one allocation serve every token.
	all := string(p.arena)
	text := func(c *Candidate, r textRefs) {
		c.Token = all[r.tok[0]:r.tok[1]]
		c.Bytes = all[r.byt[0]:r.byt[1]]
	}
	cands := make([]Candidate, len(p.cands))
	for j := range p.cands {
		cands[j] = p.cands[j].c
		text(&cands[j], p.cands[j].refs)
	}
	if l.Tokens == nil {
		l.Tokens = make([]Token, 0, len(p.toks))
	}
	for k := range p.toks {
		t := &p.toks[k]
		text(&t.tok.Outer, t.outer)
		if a, b := t.cand[0], t.cand[1]; b > a {
			t.tok.Candidates = cands[a:b:b]
			sortCandidates(&t.tok)
		}
		l.Tokens = append(l.Tokens, t.tok)
	}
	return fastRead
}

// parsers keeps the parser's scratch (pending tokens and candidates, the
// string arena) from one Add to the next: everything Add returns is copied
// out of it.
var parsers = sync.Pool{New: func() any { return new(parser) }}

// maxPooledCands: a parser that read a larger value (a long answer with
// long top lists) is not kept.
const maxPooledCands = 1 << 14

func (p *parser) release() {
	if cap(p.cands) > maxPooledCands {
		return
	}
	clear(p.toks) // they point at the returned candidates
	p.b, p.toks, p.cands, p.arena = nil, p.toks[:0], p.cands[:0], p.arena[:0]
	parsers.Put(p)
}

// sortCandidates orders a token's list most likely first (insertion sort:
// lists are at most a few dozen long) and flags one that was not sent so.
func sortCandidates(t *Token) {
	cs := t.Candidates
	for i := 1; i < len(cs); i++ {
		if cs[i].Logprob > cs[i-1].Logprob {
			t.Flags |= Unsorted
		}
		for j := i; j > 0 && before(&cs[j], &cs[j-1]); j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
}

// before: higher logprob first; on a tie the lower id, which is what
// mx.argmax picks at temperature 0.
func before(a, b *Candidate) bool {
	if a.Logprob != b.Logprob {
		return a.Logprob > b.Logprob
	}
	return a.ID >= 0 && b.ID >= 0 && a.ID < b.ID
}
