package confidence

import (
	"math"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/jsonedit"
)

// The legacy layout: parallel arrays, mlx_lm before 0.30.6 (#829) and
// OpenAI's text completions:
//
//	{"token_logprobs": [lp, ...], "top_logprobs": [top, ...], "tokens": [t, ...]}
//
// token_logprobs[i] is the sampled token's logprob (mlx_lm computed it as
// logprobs[token]); tokens[i] is its id (mlx_lm) or text (OpenAI); top[i]
// is mlx_lm's tuple of (id, logprob) pairs in argpartition order, written
// [[id, lp], ...], an older mlx_lm's dict {"id": lp}, OpenAI's {"text": lp},
// or null. The arrays may differ in length (mlx_lm trims tokens after a
// stop sequence but not the others).

type legacyTok struct {
	lp    float64
	hasLP bool
}

type legacy struct {
	lps      []legacyTok
	ids      []int    // from "tokens", -1 for a string or bad entry
	texts    [][2]int // arena spans of string tokens
	top      [][2]int // spans of parser.cands; {-1,-1} for none
	numToks  int      // tokens sent as numbers
	strToks  int      // tokens sent as strings
	keyCands []int    // indexes of parser.cands read from {"key": lp}
}

func (g *legacy) logprobs(p *parser, vs int) (int, error) {
	if vs >= len(p.b) || p.b[vs] != '[' {
		return jsonedit.SkipValue(p.b, vs)
	}
	return jsonedit.EachElem(p.b, vs, func(es int) (int, error) {
		ee, err := jsonedit.SkipValue(p.b, es)
		if err == nil {
			f, ok := jsonedit.Number(p.b[es:ee])
			g.lps = append(g.lps, legacyTok{f, ok})
		}
		return ee, err
	})
}

func (g *legacy) tokens(p *parser, vs int) (int, error) {
	if vs >= len(p.b) || p.b[vs] != '[' {
		return jsonedit.SkipValue(p.b, vs)
	}
	return jsonedit.EachElem(p.b, vs, func(es int) (int, error) {
		ee, err := jsonedit.SkipValue(p.b, es)
		if err != nil {
			return ee, err
		}
		id, span := -1, [2]int{}
		if p.b[es] == '"' {
			span, _ = p.str(es, ee)
			g.strToks++
		} else if n, ok := tokenID(p.b[es:ee]); ok {
			id = n
			g.numToks++
		}
		g.ids = append(g.ids, id)
		g.texts = append(g.texts, span)
		return ee, nil
	})
}

func (g *legacy) tops(p *parser, vs int) (int, error) {
	if vs >= len(p.b) || p.b[vs] != '[' {
		return jsonedit.SkipValue(p.b, vs)
	}
	return jsonedit.EachElem(p.b, vs, func(es int) (int, error) {
		mark := len(p.cands)
		var ee int
		var err error
		switch {
		case es < len(p.b) && p.b[es] == '[':
			ee, err = jsonedit.EachElem(p.b, es, func(ps int) (int, error) { return g.pair(p, ps) })
		case es < len(p.b) && p.b[es] == '{':
			ee, err = jsonedit.EachMember(p.b, es, func(m jsonedit.Member) (int, error) {
				ve, err := jsonedit.SkipValue(p.b, m.VS)
				if err != nil {
					return ve, err
				}
				if f, ok := jsonedit.Number(p.b[m.VS:ve]); ok {
					c := pendingCand{c: Candidate{ID: -1, Logprob: f}, key: true}
					c.refs.tok, _ = p.str(m.KS, m.KE)
					g.keyCands = append(g.keyCands, len(p.cands))
					p.cands = append(p.cands, c)
				}
				return ve, nil
			})
		default:
			ee, err = jsonedit.SkipValue(p.b, es)
		}
		if err != nil {
			// Drop the broken list's candidates, and the keys naming them.
			p.cands = p.cands[:mark]
			for len(g.keyCands) > 0 && g.keyCands[len(g.keyCands)-1] >= mark {
				g.keyCands = g.keyCands[:len(g.keyCands)-1]
			}
			return ee, err
		}
		g.top = append(g.top, [2]int{mark, len(p.cands)})
		return ee, nil
	})
}

// pair reads [id, lp] (or [text, lp]).
func (g *legacy) pair(p *parser, ps int) (int, error) {
	if ps >= len(p.b) || p.b[ps] != '[' {
		return jsonedit.SkipValue(p.b, ps)
	}
	c := pendingCand{c: Candidate{ID: -1}}
	n, ok := 0, false
	pe, err := jsonedit.EachElem(p.b, ps, func(es int) (int, error) {
		ee, err := jsonedit.SkipValue(p.b, es)
		if err != nil {
			return ee, err
		}
		switch n {
		case 0:
			if p.b[es] == '"' {
				c.refs.tok, _ = p.str(es, ee)
			} else if id, isID := tokenID(p.b[es:ee]); isID {
				c.c.ID = id
			}
		case 1:
			c.c.Logprob, ok = jsonedit.Number(p.b[es:ee])
		}
		n++
		return ee, nil
	})
	if err == nil && ok && n == 2 {
		p.cands = append(p.cands, c)
	}
	return pe, err
}

// finish zips the arrays into tokens.
func (g *legacy) finish(p *parser) {
	// {"key": lp} keys are token ids when the tokens are (mlx_lm), texts
	// when the tokens are texts (OpenAI); with no tokens, all-digit keys
	// are taken for ids.
	for _, k := range g.keyCands {
		c := &p.cands[k]
		key := p.arena[c.refs.tok[0]:c.refs.tok[1]]
		if g.strToks > 0 && g.numToks == 0 {
			continue
		}
		if id, ok := tokenID(key); ok && len(key) > 0 && key[0] >= '0' && key[0] <= '9' {
			c.c.ID = id
			c.refs.tok = [2]int{}
		}
	}
	n := max(len(g.lps), len(g.top))
	for i := range n {
		t := pendingTok{tok: Token{Outer: Candidate{ID: -1}, Flags: OuterSampled}}
		if i < len(g.lps) && g.lps[i].hasLP {
			t.tok.Outer.Logprob = g.lps[i].lp
		} else {
			t.tok.Flags |= NoOuterLogprob
		}
		if i < len(g.ids) {
			t.tok.Outer.ID = g.ids[i]
			t.outer.tok = g.texts[i]
		}
		if i < len(g.top) && g.top[i][1] > g.top[i][0] {
			t.cand = g.top[i]
		} else {
			t.tok.Flags |= NoTopList
		}
		p.toks = append(p.toks, t)
	}
}

// tokenID reads a token id: a non-negative integral number (Python may
// write it as an int; some engines write 12.0).
func tokenID(b []byte) (int, bool) {
	if n, ok := jsonedit.Integer(b); ok {
		if n < 0 || n > math.MaxInt32 {
			return 0, false
		}
		return int(n), true
	}
	f, ok := jsonedit.Number(b)
	if !ok || f < 0 || f > math.MaxInt32 || f != math.Trunc(f) {
		return 0, false
	}
	return int(f), true
}
