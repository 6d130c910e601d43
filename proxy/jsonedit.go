package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
)

// setMember returns obj (a JSON object) with member key set to value:
// the last occurrence of key has its value replaced (Python's json keeps
// the last of duplicate keys), or, when key is absent, the member is added
// first. Every other byte of obj is kept as it was.
func setMember(obj []byte, key string, value []byte) ([]byte, error) {
	start, end, found, err := memberValue(obj, key)
	if err != nil {
		return nil, err
	}
	if found {
		out := make([]byte, 0, len(obj)-(end-start)+len(value))
		out = append(out, obj[:start]...)
		out = append(out, value...)
		return append(out, obj[end:]...), nil
	}
	open := bytes.IndexByte(obj, '{')
	name, _ := json.Marshal(key)
	member := append(append(name, ": "...), value...)
	if len(bytes.TrimSpace(obj[open+1:])) > 1 { // not "{}": a member follows
		member = append(member, ", "...)
	}
	out := make([]byte, 0, len(obj)+len(member))
	out = append(out, obj[:open+1]...)
	out = append(out, member...)
	return append(out, obj[open+1:]...), nil
}

// memberValue finds the byte span of the value of the last member named
// key in the JSON object obj.
func memberValue(obj []byte, key string) (start, end int, found bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return 0, 0, false, errors.New("not a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return 0, 0, false, err
		}
		name, _ := tok.(string)
		afterKey := int(dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return 0, 0, false, err
		}
		if name != key {
			continue
		}
		// The value starts after the colon and any white space.
		s := afterKey
		for s < len(obj) && (obj[s] == ':' || isSpace(obj[s])) {
			s++
		}
		start, end, found = s, int(dec.InputOffset()), true
	}
	return start, end, found, nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
