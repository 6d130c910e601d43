package confidence

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/jsonedit"
)

// The proxy's two rewrites: ask for logprobs the client did not ask for,
// and take them out of the answer again. Both edit byte spans with
// jsonedit and keep every other byte as it was.

// InjectLogprobs makes a chat request body ask for logprobs with a top-N
// list: "logprobs": true and "top_logprobs": topN. It changes nothing
// (changed false) when the client asked already (logprobs true, or
// top_logprobs > 0, which alone makes mlx_lm send the top-N layout), and
// when a value is one mlx_lm rejects (e.g. "logprobs": 1 or null), so the
// client still gets the server's own error. logprobs false and
// top_logprobs 0 or -1 are replaced in place; missing members are added at
// the end of the object in the body's own separator style (jsonedit.Last).
// Of duplicate keys the last counts, as in Python. The body is returned
// unchanged with an error when it is not one JSON object, or topN < 1.
//
// mlx_lm accepts top_logprobs up to 10 in 0.30.x and 11 from 0.31; before
// 0.30.6 "logprobs" was an int and true counts as 1 (a top-1 list). It
// does not look at "stream": mlx_lm sends logprobs only when not streaming.
func InjectLogprobs(body []byte, topN int) ([]byte, bool, error) {
	if topN < 1 {
		return body, false, fmt.Errorf("top_logprobs %d: must be at least 1", topN)
	}
	obj, err := jsonedit.ScanObject(body)
	if err != nil {
		return body, false, fmt.Errorf("request body: %w", err)
	}
	if lp, ok := obj.Last("logprobs"); ok && string(obj.Value(lp)) != "false" {
		return body, false, nil // true: asked already; anything else: invalid, let the server say so
	}
	if tp, ok := obj.Last("top_logprobs"); ok {
		v, isInt := jsonedit.Integer(obj.Value(tp))
		if !isInt || (v != 0 && v != -1) {
			return body, false, nil // > 0: asked already; else invalid
		}
	}
	return obj.Set(jsonedit.Last,
		jsonedit.KV{Key: "logprobs", Value: []byte("true")},
		jsonedit.KV{Key: "top_logprobs", Value: strconv.AppendInt(nil, int64(topN), 10)},
	), true, nil
}

// StripLogprobsKeep takes out of a non-streamed response what
// InjectLogprobs made the server add, so the client gets the bytes it
// would have got without the injection:
//
//   - mlx_lm >= 0.30.6 adds choices[i].logprobs only when asked: the member
//     is removed with its separator;
//   - mlx_lm < 0.30.6 always sends {"token_logprobs", "top_logprobs",
//     "tokens"} and fills top_logprobs only when asked: it becomes [];
//   - OpenAI-style servers (entries with "bytes") send "logprobs": null
//     when not asked: the value becomes null.
//
// A body without choices (an error) comes back as it is; a body that is
// not one JSON object comes back with an error. It also returns, in the
// same pass, what it took out (Kept): the proxy scores from these, so the
// answer is read once.
func StripLogprobsKeep(resp []byte) (out []byte, kept Kept, err error) {
	var buf [4]jsonedit.Edit
	kept.reset()
	edits, err := stripEdits(resp, buf[:0], &kept)
	if err != nil {
		return resp, Kept{}, err
	}
	if len(edits) == 0 {
		return resp, kept, nil
	}
	return jsonedit.Apply(resp, edits), kept, nil
}

// Kept is what a strip pass took out: the "logprobs" value of each
// element of "choices" in order (of duplicate keys the last, as in
// Python), a slice of the answer, nil for an element without one or that
// is not an object; and whether every value is plain
// (jsonedit.SkipObjectPlain, to MaxPlainDepth), null or nil, found in the
// same pass: a decoder that reads a plain value whole ends it where the
// strip pass did.
type Kept struct {
	Values [][]byte
	Plain  bool
}

// MaxPlainDepth is the deepest a plain logprobs value nests: far below
// goccy/go-json's limit (10,000).
const MaxPlainDepth = 1000

func (k *Kept) reset() { k.Values, k.Plain = k.Values[:0], true }

func (k *Kept) add(v []byte, plain bool) {
	k.Values = append(k.Values, v)
	k.Plain = k.Plain && (plain || v == nil || string(v) == "null")
}

// AppendStripLogprobsKeep appends resp stripped as StripLogprobsKeep
// strips it to dst (which must not overlap resp: a stream chunk is
// rewritten into the relay's buffer), and puts what it took out in keep
// (reset first, its memory reused): the stream tap scores a chunk from
// these and decodes only what the client gets.
func AppendStripLogprobsKeep(dst, resp []byte, keep *Kept) ([]byte, error) {
	keep.reset()
	out, err := appendStrip(dst, resp, keep)
	if err != nil {
		keep.Values = keep.Values[:0]
	}
	return out, err
}

func appendStrip(dst, resp []byte, keep *Kept) ([]byte, error) {
	var buf [4]jsonedit.Edit
	edits, err := stripEdits(resp, buf[:0], keep)
	if err != nil {
		return dst, err
	}
	return jsonedit.AppendApplied(dst, resp, edits), nil
}

// stripEdits are the edits of StripLogprobsKeep, appended to edits; with keep,
// each choice's logprobs value too (StripLogprobsKeep).
func stripEdits(resp []byte, edits []jsonedit.Edit, keep *Kept) ([]jsonedit.Edit, error) {
	i := jsonedit.SkipSpace(resp, 0)
	_, err := jsonedit.EachMember(resp, i, func(m jsonedit.Member) (int, error) {
		if !jsonedit.KeyIs(resp, m, "choices") || m.VS >= len(resp) || resp[m.VS] != '[' {
			return jsonedit.SkipValue(resp, m.VS)
		}
		edits = edits[:0] // of duplicate "choices" the last counts
		if keep != nil {
			keep.reset()
		}
		return jsonedit.EachElem(resp, m.VS, func(cs int) (int, error) {
			if cs >= len(resp) || resp[cs] != '{' {
				if keep != nil {
					keep.add(nil, true)
				}
				return jsonedit.SkipValue(resp, cs)
			}
			end, lp, plain, err := stripChoice(resp, cs, &edits)
			if keep != nil {
				keep.add(lp, plain)
			}
			return end, err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("response body: %w", err)
	}
	return edits, nil
}

// stripChoice adds the edits for one choice object at b[cs], and returns
// its logprobs value (nil without one) and whether that value is plain
// (jsonedit.SkipObjectPlain).
func stripChoice(b []byte, cs int, edits *[]jsonedit.Edit) (int, []byte, bool, error) {
	var buf [8]jsonedit.Member
	ms := buf[:0]
	k := -1 // the logprobs member; of duplicate keys the last counts, as in Python
	plain := false
	end, err := jsonedit.EachMember(b, cs, func(m jsonedit.Member) (int, error) {
		if !jsonedit.KeyIs(b, m, "logprobs") {
			ve, err := jsonedit.SkipValue(b, m.VS)
			m.VE = ve
			ms = append(ms, m)
			return ve, err
		}
		ve, p, err := jsonedit.SkipObjectPlain(b, m.VS, MaxPlainDepth)
		m.VE = ve
		if err == nil {
			k, plain = len(ms), p
		}
		ms = append(ms, m)
		return ve, err
	})
	if err != nil || k < 0 {
		return end, nil, false, err
	}
	lp := ms[k]
	v := b[lp.VS:lp.VE]
	switch kind, top := classify(v); kind {
	case lpNull:
	case lpLegacy:
		if top.VE > top.VS && string(v[top.VS:top.VE]) != "[]" {
			*edits = append(*edits, jsonedit.Edit{Start: lp.VS + top.VS, End: lp.VS + top.VE, With: "[]"})
		}
	case lpOpenAI:
		*edits = append(*edits, jsonedit.Edit{Start: lp.VS, End: lp.VE, With: "null"})
	default:
		*edits = append(*edits, jsonedit.Removal(ms, k)) // the member and one separator
	}
	return end, v, plain, nil
}

type lpKind uint8

const (
	lpMLX    lpKind = iota // {"content": [{"id", ...}]}: sent only when asked
	lpNull                 // null: nothing to take out
	lpLegacy               // {"token_logprobs", "top_logprobs", "tokens"}: always sent
	lpOpenAI               // entries with "bytes": null when not asked
)

// errStop ends a walk early.
var errStop = errors.New("stop")

// classify tells a logprobs value's kind from its first members and its
// first content entry, without reading the rest; for the legacy kind it
// also returns the top_logprobs member (spans relative to v).
func classify(v []byte) (lpKind, jsonedit.Member) {
	if string(v) == "null" {
		return lpNull, jsonedit.Member{}
	}
	kind, top, legacy := lpMLX, jsonedit.Member{}, false
	_, _ = jsonedit.EachMember(v, 0, func(m jsonedit.Member) (int, error) {
		switch {
		case jsonedit.KeyIs(v, m, "token_logprobs"):
			legacy, kind = true, lpLegacy
		case jsonedit.KeyIs(v, m, "top_logprobs"):
			top = m
			ve, err := jsonedit.SkipValue(v, m.VS)
			top.VE = ve
			return ve, err
		case jsonedit.KeyIs(v, m, "content") && !legacy && m.VS < len(v) && v[m.VS] == '[':
			es := jsonedit.SkipSpace(v, m.VS+1)
			if es < len(v) && v[es] == '{' {
				_, _ = jsonedit.EachMember(v, es, func(e jsonedit.Member) (int, error) {
					if jsonedit.KeyIs(v, e, "bytes") {
						kind = lpOpenAI
						return e.VS, errStop
					}
					return jsonedit.SkipValue(v, e.VS)
				})
			}
			return m.VS, errStop
		}
		return jsonedit.SkipValue(v, m.VS)
	})
	return kind, top
}
