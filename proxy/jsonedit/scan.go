// Package jsonedit reads and edits JSON bodies in place: a scanner that
// works on byte spans of the original text, and editors that change some
// spans and keep every other byte as it was. The proxy makes every edit of
// a request or an answer body with it.
//
// Why not encoding/json: mlx_lm writes its bodies with Python's json.dumps,
// which emits NaN, Infinity and -Infinity for non-finite floats (python.go
// is the one place that knows them); encoding/json rejects the whole
// document for one of them, and re-marshalling would change bytes (", "
// and ": " separators, key order, escapes) that the proxy must give back
// unchanged. Why not gjson/sjson: gjson returns the first of duplicate keys
// where Python keeps the last, and neither reports member spans with their
// separators, which byte-exact removal needs. The scanner is tolerant (a
// scalar is whatever runs to the next delimiter; brackets are matched by
// depth, not by kind), never recurses, and never panics on any input: the
// fuzz tests hold it to that. It is also fast: the confidence parser reads
// every token of every logprobs list through it (docs/performance.md).
package jsonedit

import "errors"

// ErrSyntax is the scanner's error for text that is not JSON.
var ErrSyntax = errors.New("malformed JSON")

// IsSpace reports whether c is JSON white space.
func IsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// SkipSpace returns the index of the first byte at or after b[i] that is
// not white space.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && IsSpace(b[i]) {
		i++
	}
	return i
}

// SkipString returns the index after the string that opens at b[i] ('"'),
// and whether it holds escapes.
func SkipString(b []byte, i int) (end int, escaped bool, err error) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '"':
			return j + 1, escaped, nil
		case '\\':
			escaped = true
			j++
		}
	}
	return len(b), escaped, ErrSyntax
}

// Depth is how deep arrays and objects nest in b, strings skipped. It
// reads bytes only, so it costs one pass whatever b holds, and it does
// not check the syntax: an unterminated string ends the count.
func Depth(b []byte) int {
	d, deepest := 0, 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			end, _, err := SkipString(b, i)
			if err != nil {
				return deepest
			}
			i = end - 1
		case '[', '{':
			if d++; d > deepest {
				deepest = d
			}
		case ']', '}':
			d--
		}
	}
	return deepest
}

func isDelim(c byte) bool {
	switch c {
	case ',', ':', '[', ']', '{', '}', '"':
		return true
	}
	return IsSpace(c)
}

// SkipValue returns the index after the value that starts at b[i].
func SkipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return i, ErrSyntax
	}
	switch b[i] {
	case '"':
		end, _, err := SkipString(b, i)
		return end, err
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, _, err := SkipString(b, j)
				if err != nil {
					return end, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return len(b), ErrSyntax
	}
	j := i
	for j < len(b) && !isDelim(b[j]) {
		j++
	}
	if j == i {
		return i, ErrSyntax
	}
	return j, nil
}

// Member is one "key": value of an object, as spans of the text: the key
// with its quotes is b[KS:KE], the value b[VS:VE].
type Member struct {
	KS, KE, VS, VE int
	Escaped        bool // the key holds escapes: compare with KeyIs
}

// EachMember walks the object that opens at b[i] ('{'). For every member
// it calls value with the member's spans up to the value's start (VE is
// not set yet); value returns the value's end (SkipValue, or a parser that
// reads it). Members whose value failed are not passed on and end the walk
// with the error. It returns the index after the object.
func EachMember(b []byte, i int, value func(m Member) (int, error)) (int, error) {
	if i >= len(b) || b[i] != '{' {
		return i, ErrSyntax
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, ErrSyntax
		}
		ke, esc, err := SkipString(b, i)
		if err != nil {
			return ke, err
		}
		j := SkipSpace(b, ke)
		if j >= len(b) || b[j] != ':' {
			return j, ErrSyntax
		}
		m := Member{KS: i, KE: ke, VS: SkipSpace(b, j+1), Escaped: esc}
		if m.VE, err = value(m); err != nil {
			return m.VE, err
		}
		k := SkipSpace(b, m.VE)
		if k < len(b) && b[k] == ',' {
			i = SkipSpace(b, k+1)
			continue
		}
		if k < len(b) && b[k] == '}' {
			return k + 1, nil
		}
		return k, ErrSyntax
	}
}

// EachElem walks the array that opens at b[i] ('['), like EachMember.
func EachElem(b []byte, i int, value func(vs int) (int, error)) (int, error) {
	if i >= len(b) || b[i] != '[' {
		return i, ErrSyntax
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		ve, err := value(i)
		if err != nil {
			return ve, err
		}
		k := SkipSpace(b, ve)
		if k < len(b) && b[k] == ',' {
			i = SkipSpace(b, k+1)
			continue
		}
		if k < len(b) && b[k] == ']' {
			return k + 1, nil
		}
		return k, ErrSyntax
	}
}

// KeyIs reports whether the member's key is name (decoded, as Python
// compares keys).
func KeyIs(b []byte, m Member, name string) bool {
	if !m.Escaped {
		return string(b[m.KS+1:m.KE-1]) == name
	}
	key, ok := AppendString(nil, b[m.KS:m.KE])
	return ok && string(key) == name
}

// SkipObjectPlain is SkipValue for a value at b[i] that should be an
// object, and also says whether it is plain: an object with no NUL byte,
// nested at most maxDepth deep, whose braces alone (strings skipped)
// close at its end. A decoder that skips an object by counting its braces
// and stops at a NUL (goccy/go-json does) ends a plain object where
// SkipValue ends it; the proxy checks that in the pass that finds the
// value's end rather than in a pass of its own.
func SkipObjectPlain(b []byte, i, maxDepth int) (end int, plain bool, err error) {
	if i >= len(b) || b[i] != '{' {
		end, err = SkipValue(b, i)
		return end, false, err
	}
	depth, braces, deepest, bracesClosed := 0, 0, 0, -1
	plain = true
	for j := i; j < len(b); j++ {
		switch b[j] {
		case 0:
			plain = false
		case '"':
			k := j + 1
			for ; k < len(b) && b[k] != '"'; k++ {
				switch b[k] {
				case 0:
					plain = false
				case '\\':
					if k++; k < len(b) && b[k] == 0 {
						plain = false
					}
				}
			}
			if k >= len(b) {
				return len(b), false, ErrSyntax
			}
			j = k
		case '{', '[':
			if b[j] == '{' {
				braces++
			}
			depth++
			deepest = max(deepest, depth)
		case '}', ']':
			if b[j] == '}' {
				if braces--; braces == 0 && bracesClosed < 0 {
					bracesClosed = j
				}
			}
			depth--
			if depth == 0 {
				return j + 1, plain && bracesClosed == j && deepest <= maxDepth, nil
			}
		}
	}
	return len(b), false, ErrSyntax
}
