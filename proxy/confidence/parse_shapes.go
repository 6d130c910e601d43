package confidence

import "github.com/mlx-otelcol/mlx-otelcol/proxy/jsonedit"

// The parser behind Parse: it reads the layouts into pending tokens whose
// strings are spans of one arena, resolved once at the end (parse.go).

type textRefs struct {
	tok, byt [2]int // spans of parser.arena
}

type pendingCand struct {
	c    Candidate
	refs textRefs
	key  bool // legacy {"key": lp} entry: Token holds the key
}

type pendingTok struct {
	tok   Token
	outer textRefs
	cand  [2]int // span of parser.cands
}

type parser struct {
	b     []byte
	arena []byte
	toks  []pendingTok
	cands []pendingCand
}

// str copies the JSON string at b[vs:ve] into the arena.
func (p *parser) str(vs, ve int) ([2]int, bool) {
	start := len(p.arena)
	var ok bool
	p.arena, ok = jsonedit.AppendString(p.arena, p.b[vs:ve])
	if !ok {
		p.arena = p.arena[:start]
		return [2]int{start, start}, false
	}
	return [2]int{start, len(p.arena)}, true
}

// byteList copies OpenAI's "bytes" ([72, 105]) into the arena.
func (p *parser) byteList(vs int) ([2]int, bool, int, error) {
	start := len(p.arena)
	ok := true
	end, err := jsonedit.EachElem(p.b, vs, func(es int) (int, error) {
		ee, err := jsonedit.SkipValue(p.b, es)
		if err != nil {
			return ee, err
		}
		n, isInt := jsonedit.Integer(p.b[es:ee])
		if !isInt || n < 0 || n > 255 {
			ok = false
		} else if ok {
			p.arena = append(p.arena, byte(n))
		}
		return ee, nil
	})
	if err != nil || !ok {
		p.arena = p.arena[:start]
		return [2]int{start, start}, false, end, err
	}
	return [2]int{start, len(p.arena)}, true, end, nil
}

// object reads the logprobs object at b[i].
func (p *parser) object(i int) (Shape, error) {
	shape := ShapeUnknown
	var leg legacy
	_, err := jsonedit.EachMember(p.b, i, func(m jsonedit.Member) (int, error) {
		switch {
		case jsonedit.KeyIs(p.b, m, "content"):
			shape = ShapeContent
			if m.VS < len(p.b) && p.b[m.VS] == '[' {
				return p.content(m.VS)
			}
		case jsonedit.KeyIs(p.b, m, "token_logprobs"):
			shape = ShapeLegacy
			return leg.logprobs(p, m.VS)
		case jsonedit.KeyIs(p.b, m, "tokens"):
			shape = ShapeLegacy
			return leg.tokens(p, m.VS)
		case jsonedit.KeyIs(p.b, m, "top_logprobs"):
			return leg.tops(p, m.VS)
		}
		return jsonedit.SkipValue(p.b, m.VS)
	})
	if shape == ShapeLegacy || (shape == ShapeUnknown && len(leg.top) > 0) {
		shape = ShapeLegacy
		leg.finish(p)
	}
	return shape, err
}

// content reads the "content" array: one entry per generated token.
func (p *parser) content(vs int) (int, error) {
	return jsonedit.EachElem(p.b, vs, func(es int) (int, error) {
		if es >= len(p.b) || p.b[es] != '{' {
			ee, err := jsonedit.SkipValue(p.b, es)
			if err == nil {
				p.toks = append(p.toks, pendingTok{tok: Token{Flags: Malformed | NoOuterLogprob | NoTopList}})
			}
			return ee, err
		}
		mark, arenaMark := len(p.cands), len(p.arena)
		t := pendingTok{tok: Token{Outer: Candidate{ID: -1}}}
		var f entryFound
		ee, err := jsonedit.EachMember(p.b, es, func(m jsonedit.Member) (int, error) {
			if jsonedit.KeyIs(p.b, m, "top_logprobs") {
				if m.VS >= len(p.b) || p.b[m.VS] != '[' {
					return jsonedit.SkipValue(p.b, m.VS)
				}
				f.topList = true
				return jsonedit.EachElem(p.b, m.VS, func(cs int) (int, error) {
					c := pendingCand{c: Candidate{ID: -1}}
					ce, ok, err := p.field(&c.c, &c.refs, cs)
					if err == nil {
						if ok {
							p.cands = append(p.cands, c)
						} else {
							f.dropped = true
						}
					}
					return ce, err
				})
			}
			ve, lp, err := p.member(&t.tok.Outer, &t.outer, m)
			f.logprob = f.logprob || lp
			return ve, err
		})
		if err != nil {
			// A broken entry is dropped whole: its candidates too.
			p.cands, p.arena = p.cands[:mark], p.arena[:arenaMark]
			return ee, err
		}
		t.cand = [2]int{mark, len(p.cands)}
		t.tok.Flags = f.flags(mark == len(p.cands))
		p.toks = append(p.toks, t)
		return ee, nil
	})
}

// entryFound is what a content entry held, for its flags.
type entryFound struct {
	logprob bool // a usable logprob of its own
	topList bool // a "top_logprobs" list
	dropped bool // candidates without a usable logprob
}

// flags are the entry's Flags; noCands: no candidate was kept.
func (f entryFound) flags(noCands bool) Flags {
	var fl Flags
	if !f.logprob {
		fl |= NoOuterLogprob
	}
	if !f.topList || noCands {
		fl |= NoTopList
	}
	if f.dropped {
		fl |= DroppedCandidates
	}
	return fl
}

// field reads one candidate object; ok when it had a usable logprob.
func (p *parser) field(c *Candidate, r *textRefs, cs int) (end int, ok bool, err error) {
	if cs >= len(p.b) || p.b[cs] != '{' {
		end, err = jsonedit.SkipValue(p.b, cs)
		return end, false, err
	}
	end, err = jsonedit.EachMember(p.b, cs, func(m jsonedit.Member) (int, error) {
		ve, lp, err := p.member(c, r, m)
		ok = ok || lp
		return ve, err
	})
	return end, ok, err
}

// member reads id, token, logprob or bytes into c, skipping other keys.
// lp reports a usable logprob.
func (p *parser) member(c *Candidate, r *textRefs, m jsonedit.Member) (ve int, lp bool, err error) {
	switch {
	case jsonedit.KeyIs(p.b, m, "logprob"):
		if ve, err = jsonedit.SkipValue(p.b, m.VS); err == nil {
			if f, ok := jsonedit.Number(p.b[m.VS:ve]); ok {
				c.Logprob, lp = f, true
			}
		}
		return ve, lp, err
	case jsonedit.KeyIs(p.b, m, "id"):
		if ve, err = jsonedit.SkipValue(p.b, m.VS); err == nil {
			if id, ok := tokenID(p.b[m.VS:ve]); ok {
				c.ID = id
			}
		}
		return ve, false, err
	case jsonedit.KeyIs(p.b, m, "token"):
		if ve, err = jsonedit.SkipValue(p.b, m.VS); err == nil && p.b[m.VS] == '"' {
			r.tok, _ = p.str(m.VS, ve)
		}
		return ve, false, err
	case jsonedit.KeyIs(p.b, m, "bytes"):
		if m.VS < len(p.b) && p.b[m.VS] == '[' {
			var ok bool
			r.byt, ok, ve, err = p.byteList(m.VS)
			c.HasBytes = ok
			return ve, false, err
		}
	}
	ve, err = jsonedit.SkipValue(p.b, m.VS)
	return ve, false, err
}
