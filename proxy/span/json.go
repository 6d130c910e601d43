package span

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/jsonedit"
)

// Reading the request's members for a span without encoding/json's
// reflection and its validating pass over every byte, which were two
// fifths of a span's cost. What these read is always JSON encoding/json
// has already read: a member of the body parseBody took (a slice of the
// body or of its nulled copy), or encoding/json's own output (redactDeep).
// Each reader gives what encoding/json gives for it (json_fuzz_test.go
// compares them with the originals, kept in reference_test.go), and
// hands what it does not model (escaped or case-folded keys, duplicate
// members) to encoding/json itself.

// appendCompact appends the JSON value v without its insignificant white
// space, as json.Compact does; with html, it also escapes <, >, &, U+2028
// and U+2029 in its strings as json.Marshal does a RawMessage's text
// (outside strings, valid JSON has none of them). Strings are found with
// jsonedit.SkipString; an unterminated one runs to the end.
func appendCompact(dst, v []byte, html bool) []byte {
	for i := 0; i < len(v); {
		switch c := v[i]; {
		case c == '"':
			end, _, _ := jsonedit.SkipString(v, i)
			dst = appendHTMLSafe(dst, v[i:end], html)
			i = end
		case jsonedit.IsSpace(c):
			i++
		default:
			j := i + 1
			for j < len(v) && v[j] != '"' && !jsonedit.IsSpace(v[j]) {
				j++
			}
			dst = append(dst, v[i:j]...)
			i = j
		}
	}
	return dst
}

// appendHTMLSafe appends the JSON string s, with html its <, > and & as
// \u003c, \u003e, \u0026 and U+2028, U+2029 as \u2028, \u2029. An
// escaped byte is never one of them.
func appendHTMLSafe(dst, s []byte, html bool) []byte {
	if !html {
		return append(dst, s...)
	}
	const hex = "0123456789abcdef"
	start := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++
		case c == '<' || c == '>' || c == '&':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			start = i + 1
		case c == 0xE2 && i+2 < len(s) && s[i+1] == 0x80 && s[i+2]&^1 == 0xA8:
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[s[i+2]&0xF])
			start = i + 3
			i += 2
		}
	}
	return append(dst, s[start:]...)
}

// eachArrayElem calls elem with the text of each element of the JSON array
// raw; false when raw is not an array.
func eachArrayElem(raw []byte, elem func(v []byte)) bool {
	i := jsonedit.SkipSpace(raw, 0)
	end, err := jsonedit.EachElem(raw, i, func(vs int) (int, error) {
		ve, err := jsonedit.SkipValue(raw, vs)
		if err == nil {
			elem(raw[vs:ve])
		}
		return ve, err
	})
	return err == nil && jsonedit.SkipSpace(raw, end) == len(raw)
}

// The outcome of reading a value into a Go type as json.Unmarshal would.
var (
	// errMismatch: json.Unmarshal fails (a value of another type).
	errMismatch = errors.New("json: a value of another type")
	// errUnmodelled: the readers leave this text to json.Unmarshal.
	errUnmodelled = errors.New("json: left to encoding/json")
)

// readString reads v into a string field as json.Unmarshal does: a string
// is decoded, null leaves s as it is.
func readString(v []byte, s *string) error {
	switch {
	case len(v) > 1 && v[0] == '"' && v[len(v)-1] == '"' && plainString(v[1:len(v)-1]):
		*s = string(v[1 : len(v)-1])
		return nil
	case len(v) > 0 && v[0] == '"':
		b, ok := jsonedit.AppendString(nil, v)
		if !ok {
			return errUnmodelled
		}
		*s = string(b)
		return nil
	case string(v) == "null":
		return nil
	case len(v) == 0:
		return errUnmodelled
	}
	return errMismatch
}

// plainString: the body of a JSON string is its value as it is (no
// escape, no control character, valid UTF-8), one copy instead of two.
func plainString(b []byte) bool {
	ascii := true
	for _, c := range b {
		if c < 0x20 || c == '\\' {
			return false
		}
		ascii = ascii && c < utf8.RuneSelf
	}
	return ascii || utf8.Valid(b)
}

// eachField walks the JSON object v, calling field with each member's
// key (as spelled) and value text. A key that is escaped, that only
// matches one of names with case folded (json.Unmarshal matches keys
// case-insensitively), or that comes twice is unmodelled: a second
// occurrence overwrites, merges into the first or keeps parts of it.
func eachField(v []byte, names []string, field func(k string, val []byte) error) error {
	var seen uint64
	_, err := jsonedit.EachMember(v, 0, func(m jsonedit.Member) (int, error) {
		ve, err := jsonedit.SkipValue(v, m.VS)
		if err != nil {
			return ve, errUnmodelled
		}
		if m.Escaped {
			return ve, errUnmodelled
		}
		k := v[m.KS+1 : m.KE-1]
		for n, name := range names {
			switch {
			case string(k) == name:
				if seen&(1<<n) != 0 {
					return ve, errUnmodelled
				}
				seen |= 1 << n
				return ve, field(name, v[m.VS:ve])
			case bytes.EqualFold(k, []byte(name)):
				return ve, errUnmodelled
			}
		}
		return ve, nil
	})
	if err != nil && err != errMismatch {
		return errUnmodelled
	}
	return err
}

var (
	messageFields = []string{"role", "content", "name", "tool_call_id", "tool_calls"}
	partFields    = []string{"type", "text", "image_url"}
	imageFields   = []string{"url"}
)

// readMessages reads a chat request's messages as json.Unmarshal into
// []inMessageJSON does; false where it fails.
func readMessages(raw []byte) ([]inMessageJSON, bool) { return readList(raw, readMessage) }

// readContentParts reads a message's content as json.Unmarshal into
// []contentPartJSON does; false where it fails.
func readContentParts(raw []byte) ([]contentPartJSON, bool) { return readList(raw, readContentPart) }

// readList reads raw as json.Unmarshal into []T does, each element by
// read, and by json.Unmarshal itself where read meets what it does not
// model; false where it fails.
func readList[T any](raw []byte, read func(v []byte, into *T) error) ([]T, bool) {
	xs, err := readArray(raw, read)
	if err == errUnmodelled {
		xs = nil
		return xs, json.Unmarshal(raw, &xs) == nil
	}
	return xs, err == nil
}

// readArray reads the JSON array raw into a slice of structs, each
// element by read (null is the zero value). Anything but an array is
// unmodelled.
func readArray[T any](raw []byte, read func(v []byte, into *T) error) ([]T, error) {
	i := jsonedit.SkipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, errUnmodelled
	}
	out := []T{}
	var err error
	ok := eachArrayElem(raw, func(v []byte) {
		if err != nil {
			return
		}
		out = append(out, *new(T))
		switch v[0] {
		case 'n':
			if string(v) != "null" {
				err = errUnmodelled
			}
		case '{':
			err = read(v, &out[len(out)-1])
		default:
			err = errMismatch
		}
	})
	if !ok {
		return nil, errUnmodelled
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

func readMessage(v []byte, m *inMessageJSON) error {
	return eachField(v, messageFields, func(k string, val []byte) error {
		switch k {
		case "role":
			return readString(val, &m.Role)
		case "content":
			m.Content = val
		case "name":
			return readString(val, &m.Name)
		case "tool_call_id":
			return readString(val, &m.ToolCallID)
		case "tool_calls":
			// Rare (a past answer's calls): encoding/json reads them.
			if json.Unmarshal(val, &m.ToolCalls) != nil {
				return errMismatch
			}
		}
		return nil
	})
}

func readContentPart(v []byte, p *contentPartJSON) error {
	return eachField(v, partFields, func(k string, val []byte) error {
		switch k {
		case "type":
			return readString(val, &p.Type)
		case "text":
			return readString(val, &p.Text)
		case "image_url":
			switch val[0] {
			case 'n':
				if string(val) != "null" {
					return errUnmodelled
				}
				return nil
			case '{':
				p.ImageURL = &struct {
					URL string `json:"url"`
				}{}
				return eachField(val, imageFields, func(_ string, url []byte) error {
					return readString(url, &p.ImageURL.URL)
				})
			}
			return errMismatch
		}
		return nil
	})
}

// isNull: raw is JSON's null.
func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }
