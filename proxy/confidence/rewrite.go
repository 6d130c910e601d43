package confidence

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// The proxy's two rewrites: ask for logprobs the client did not ask for,
// and take them out of the answer again. Both edit byte spans and keep
// every other byte as it was.

// edit replaces body[start:end] with with.
type edit struct {
	start, end int
	with       string
}

func apply(body []byte, edits []edit) []byte {
	slices.SortFunc(edits, func(a, b edit) int { return a.start - b.start })
	size := len(body)
	for _, e := range edits {
		size += len(e.with) - (e.end - e.start)
	}
	out := make([]byte, 0, max(size, 0))
	at := 0
	for _, e := range edits {
		if e.start < at {
			continue // overlapping: cannot happen with the callers' edits
		}
		out = append(out, body[at:e.start]...)
		out = append(out, e.with...)
		at = e.end
	}
	return append(out, body[at:]...)
}

// InjectLogprobs makes a chat request body ask for logprobs with a top-N
// list: "logprobs": true and "top_logprobs": topN. It changes nothing
// (changed false) when the client asked already (logprobs true, or
// top_logprobs > 0, which alone makes mlx_lm send the top-N layout), and
// when a value is one mlx_lm rejects (e.g. "logprobs": 1 or null), so the
// client still gets the server's own error. logprobs false and
// top_logprobs 0 or -1 are replaced in place; missing members are added at
// the end of the object in the body's own separator style. Of duplicate
// keys the last counts, as in Python. The body is returned unchanged with
// an error when it is not one JSON object, or topN < 1.
//
// mlx_lm accepts top_logprobs up to 10 in 0.30.x and 11 from 0.31; before
// 0.30.6 "logprobs" was an int and true counts as 1 (a top-1 list). It
// does not look at "stream": mlx_lm sends logprobs only when not streaming.
func InjectLogprobs(body []byte, topN int) ([]byte, bool, error) {
	if topN < 1 {
		return body, false, fmt.Errorf("top_logprobs %d: must be at least 1", topN)
	}
	i := skipSpace(body, 0)
	var lp, tp *member
	var first member
	n, comma := 0, -1
	end, err := eachMember(body, i, func(m member) (int, error) {
		ve, err := skipValue(body, m.vs)
		if err != nil {
			return ve, err
		}
		m.ve = ve
		if n == 0 {
			first = m
		} else if comma < 0 {
			if c := bytes.IndexByte(body[first.ve:m.ks], ','); c >= 0 {
				comma = first.ve + c
			}
		}
		n++
		switch {
		case keyIs(body, m, "logprobs"):
			lp = &m
		case keyIs(body, m, "top_logprobs"):
			tp = &m
		}
		return ve, nil
	})
	if err != nil {
		return body, false, fmt.Errorf("request body: %w", err)
	}
	if skipSpace(body, end) != len(body) {
		return body, false, errors.New("request body: data after the JSON object")
	}

	var edits []edit
	if lp != nil {
		switch string(body[lp.vs:lp.ve]) {
		case "true":
			return body, false, nil
		case "false":
			edits = append(edits, edit{lp.vs, lp.ve, "true"})
		default:
			return body, false, nil // invalid: let the server say so
		}
	}
	if tp != nil {
		v, isInt := integer(body[tp.vs:tp.ve])
		switch {
		case isInt && v > 0:
			return body, false, nil
		case isInt && (v == 0 || v == -1):
			edits = append(edits, edit{tp.vs, tp.ve, strconv.Itoa(topN)})
		default:
			return body, false, nil
		}
	}

	// New members go after the last value, in the body's own style.
	colon, sep := ": ", ", "
	if n > 0 {
		if gap := body[first.ke:first.vs]; !bytes.Contains(gap, []byte(": ")) {
			colon = ":"
		}
		switch {
		case comma >= 0 && comma+1 < len(body) && body[comma+1] != ' ':
			sep = ","
		case comma < 0 && colon == ":":
			sep = ","
		}
	}
	var add []byte
	if lp == nil {
		add = append(add, `"logprobs"`+colon+`true`...)
	}
	if tp == nil {
		if len(add) > 0 {
			add = append(add, sep...)
		}
		add = append(add, `"top_logprobs"`+colon+strconv.Itoa(topN)...)
	}
	if len(add) > 0 {
		at := i + 1 // empty object: right after "{"
		if n > 0 {
			at = lastValueEnd(body, end)
			add = append([]byte(sep), add...)
		}
		edits = append(edits, edit{at, at, string(add)})
	}
	return apply(body, edits), true, nil
}

// lastValueEnd is the end of the last value of the object that ends at end
// (just after its "}"): before the white space that precedes the "}".
func lastValueEnd(body []byte, end int) int {
	j := end - 1 // the "}"
	for j > 0 && isSpace(body[j-1]) {
		j--
	}
	return j
}

// StripLogprobs takes out of a non-streamed response what InjectLogprobs
// made the server add, so the client gets the bytes it would have got
// without the injection:
//
//   - mlx_lm >= 0.30.6 adds choices[i].logprobs only when asked: the member
//     is removed with its separator;
//   - mlx_lm < 0.30.6 always sends {"token_logprobs", "top_logprobs",
//     "tokens"} and fills top_logprobs only when asked: it becomes [];
//   - OpenAI-style servers (entries with "bytes") send "logprobs": null
//     when not asked: the value becomes null.
//
// A body without choices (an error) comes back as it is; a body that is
// not one JSON object comes back with an error.
func StripLogprobs(resp []byte) ([]byte, error) {
	i := skipSpace(resp, 0)
	var edits []edit
	_, err := eachMember(resp, i, func(m member) (int, error) {
		if !keyIs(resp, m, "choices") || m.vs >= len(resp) || resp[m.vs] != '[' {
			return skipValue(resp, m.vs)
		}
		edits = edits[:0] // of duplicate "choices" the last counts
		return eachElem(resp, m.vs, func(cs int) (int, error) {
			if cs >= len(resp) || resp[cs] != '{' {
				return skipValue(resp, cs)
			}
			return stripChoice(resp, cs, &edits)
		})
	})
	if err != nil {
		return resp, fmt.Errorf("response body: %w", err)
	}
	if len(edits) == 0 {
		return resp, nil
	}
	return apply(resp, edits), nil
}

// stripChoice adds the edits for one choice object at b[cs].
func stripChoice(b []byte, cs int, edits *[]edit) (int, error) {
	var buf [8]member
	ms := buf[:0]
	k := -1 // the logprobs member; of duplicate keys the last counts, as in Python
	end, err := eachMember(b, cs, func(m member) (int, error) {
		ve, err := skipValue(b, m.vs)
		m.ve = ve
		if err == nil && keyIs(b, m, "logprobs") {
			k = len(ms)
		}
		ms = append(ms, m)
		return ve, err
	})
	if err != nil || k < 0 {
		return end, err
	}
	lp := ms[k]
	v := b[lp.vs:lp.ve]
	switch kind, top := classify(v); kind {
	case lpNull:
	case lpLegacy:
		if top.ve > top.vs && string(v[top.vs:top.ve]) != "[]" {
			*edits = append(*edits, edit{lp.vs + top.vs, lp.vs + top.ve, "[]"})
		}
	case lpOpenAI:
		*edits = append(*edits, edit{lp.vs, lp.ve, "null"})
	default:
		// Remove the member and one separator: the one after it, or the
		// one before it when it is the last.
		switch {
		case k+1 < len(ms):
			*edits = append(*edits, edit{lp.ks, ms[k+1].ks, ""})
		case k > 0:
			*edits = append(*edits, edit{ms[k-1].ve, lp.ve, ""})
		default:
			*edits = append(*edits, edit{lp.ks, lp.ve, ""})
		}
	}
	return end, nil
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
func classify(v []byte) (lpKind, member) {
	if string(v) == "null" {
		return lpNull, member{}
	}
	kind, top, legacy := lpMLX, member{}, false
	_, _ = eachMember(v, 0, func(m member) (int, error) {
		switch {
		case keyIs(v, m, "token_logprobs"):
			legacy, kind = true, lpLegacy
		case keyIs(v, m, "top_logprobs"):
			top = m
			ve, err := skipValue(v, m.vs)
			top.ve = ve
			return ve, err
		case keyIs(v, m, "content") && !legacy && m.vs < len(v) && v[m.vs] == '[':
			es := skipSpace(v, m.vs+1)
			if es < len(v) && v[es] == '{' {
				_, _ = eachMember(v, es, func(e member) (int, error) {
					if keyIs(v, e, "bytes") {
						kind = lpOpenAI
						return e.vs, errStop
					}
					return skipValue(v, e.vs)
				})
			}
			return m.vs, errStop
		}
		return skipValue(v, m.vs)
	})
	return kind, top
}
