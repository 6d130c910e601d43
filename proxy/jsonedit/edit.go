package jsonedit

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
)

// ErrTrailing: an object is followed by more than white space.
var ErrTrailing = errors.New("data after the JSON object")

// Edit replaces body[Start:End] with With.
type Edit struct {
	Start, End int
	With       string
}

// Apply returns a new body with the edits made; the bytes between them
// are kept as they were. An edit that overlaps one before it is skipped
// (the callers' edits never overlap).
func Apply(body []byte, edits []Edit) []byte {
	size := len(body)
	for _, e := range edits {
		size += len(e.With) - (e.End - e.Start)
	}
	return AppendApplied(make([]byte, 0, max(size, 0)), body, edits)
}

// AppendApplied is Apply appending to out (which must not overlap body).
func AppendApplied(out, body []byte, edits []Edit) []byte {
	slices.SortFunc(edits, func(a, b Edit) int { return a.Start - b.Start })
	at := 0
	for _, e := range edits {
		if e.Start < at {
			continue
		}
		out = append(out, body[at:e.Start]...)
		out = append(out, e.With...)
		at = e.End
	}
	return append(out, body[at:]...)
}

// Removal is the edit that takes member k of an object's members (with
// VE set) out with one separator: the one after it, or the one before it
// when it is the last.
func Removal(ms []Member, k int) Edit {
	switch {
	case k+1 < len(ms):
		return Edit{ms[k].KS, ms[k+1].KS, ""}
	case k > 0:
		return Edit{ms[k-1].VE, ms[k].VE, ""}
	default:
		return Edit{ms[k].KS, ms[k].VE, ""}
	}
}

// Object is a scanned JSON object: the spans of its members in its text.
type Object struct {
	b          []byte
	start, end int // b[start] is the "{", b[end-1] the "}"
	// Members in order, with VE set; duplicate keys are all here.
	Members []Member
}

// ScanObject scans b as one JSON object with nothing but white space
// around it. Its errors are ErrSyntax and ErrTrailing.
func ScanObject(b []byte) (Object, error) {
	o := Object{b: b, start: SkipSpace(b, 0)}
	end, err := EachMember(b, o.start, func(m Member) (int, error) {
		ve, err := SkipValue(b, m.VS)
		if err != nil {
			return ve, err
		}
		m.VE = ve
		o.Members = append(o.Members, m)
		return ve, nil
	})
	if err != nil {
		return Object{}, err
	}
	if SkipSpace(b, end) != len(b) {
		return Object{}, ErrTrailing
	}
	o.end = end
	return o, nil
}

// Last returns the last member named key: the one Python's json keeps.
func (o Object) Last(key string) (Member, bool) {
	for i := len(o.Members) - 1; i >= 0; i-- {
		if KeyIs(o.b, o.Members[i], key) {
			return o.Members[i], true
		}
	}
	return Member{}, false
}

// Value is the text of a member's value.
func (o Object) Value(m Member) []byte { return o.b[m.VS:m.VE] }

// Style returns the object's own separators, as its first member and its
// first comma have them: colon ": " or ":", sep ", " or ",". An object
// without members has json.dumps's default ": " and ", "; one with a
// single member takes sep from its colon.
func (o Object) Style() (colon, sep string) {
	colon, sep = ": ", ", "
	if len(o.Members) == 0 {
		return colon, sep
	}
	first := o.Members[0]
	if !bytes.Contains(o.b[first.KE:first.VS], []byte(": ")) {
		colon = ":"
	}
	comma := -1
	if len(o.Members) > 1 {
		if c := bytes.IndexByte(o.b[first.VE:o.Members[1].KS], ','); c >= 0 {
			comma = first.VE + c
		}
	}
	switch {
	case comma >= 0 && comma+1 < len(o.b) && o.b[comma+1] != ' ':
		sep = ","
	case comma < 0 && colon == ":":
		sep = ","
	}
	return colon, sep
}

// Position is where Set adds a member the object does not have. The
// proxy's edits differ in it, and each keeps the bytes its tests pin.
type Position uint8

const (
	// First: right after the "{", as `"key": value`, with ", " after it
	// when a member follows (json.dumps's separators, whatever the
	// object's own).
	First Position = iota
	// Last: after the last value, before the white space that precedes
	// the "}", in the object's own separators (Style); in an empty object
	// right after the "{".
	Last
	// Close: right before the "}" (after any white space there), with
	// json.dumps's separators: destream's tool call "index", added last
	// as mlx_lm adds it.
	Close
)

// KV is a member to set: its key and its value's JSON text.
type KV struct {
	Key   string
	Value []byte
}

// Set returns a new text of the object with each member set: the value
// of the last member with its key is replaced (Python's json keeps the
// last of duplicate keys), and the members it does not have are added at
// pos, in the order given. Every other byte is kept as it was.
func (o Object) Set(pos Position, kvs ...KV) []byte {
	colon, sep := ": ", ", "
	if pos == Last {
		colon, sep = o.Style()
	}
	var edits []Edit
	var add []byte
	for _, kv := range kvs {
		if m, ok := o.Last(kv.Key); ok {
			edits = append(edits, Edit{m.VS, m.VE, string(kv.Value)})
			continue
		}
		if len(add) > 0 {
			add = append(add, sep...)
		}
		add = AppendKey(add, kv.Key)
		add = append(add, colon...)
		add = append(add, kv.Value...)
	}
	if len(add) > 0 {
		at := o.start + 1 // after the "{"
		switch {
		case pos == First:
			if len(o.Members) > 0 {
				add = append(add, sep...)
			}
		case pos == Close:
			at = o.end - 1 // the "}"
			if len(o.Members) > 0 {
				add = append([]byte(sep), add...)
			}
		case len(o.Members) > 0: // Last
			at = o.end - 1
			for IsSpace(o.b[at-1]) {
				at--
			}
			add = append([]byte(sep), add...)
		}
		edits = append(edits, Edit{at, at, string(add)})
	}
	return Apply(o.b, edits)
}

// Set returns obj (one JSON object) with each member set at pos, as
// Object.Set does; or obj and the scanner's error.
func Set(obj []byte, pos Position, kvs ...KV) ([]byte, error) {
	o, err := ScanObject(obj)
	if err != nil {
		return obj, err
	}
	return o.Set(pos, kvs...), nil
}

// AppendKey appends key as a JSON string, as encoding/json writes it (a
// map key or a string, HTML characters escaped).
func AppendKey(dst []byte, key string) []byte {
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(key)
			return append(dst, q...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, key...)
	return append(dst, '"')
}
