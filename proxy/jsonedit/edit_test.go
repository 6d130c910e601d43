package jsonedit

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// setMember is Set at First for one member, as the proxy's request edits
// (stream, stream_options) use it.
func setMember(obj []byte, key string, value []byte) ([]byte, error) {
	return Set(obj, First, KV{key, value})
}

func TestSetFirstKeepsTheLastDuplicate(t *testing.T) {
	out, err := setMember([]byte(`{"a": 1, "b": 2, "a": 3}`), "a", []byte(`9`))
	require.NoError(t, err)
	assert.Equal(t, `{"a": 1, "b": 2, "a": 9}`, string(out), "Python's json.loads keeps the last")

	out, err = setMember([]byte(` { } `), "k", []byte(`true`))
	require.NoError(t, err)
	assert.Equal(t, ` {"k": true } `, string(out))

	out, err = setMember([]byte(`{"esc\u0061ped": 1}`), "escaped", []byte(`2`))
	require.NoError(t, err)
	assert.Equal(t, `{"esc\u0061ped": 2}`, string(out), "keys compare decoded")

	_, err = setMember([]byte(`[1]`), "k", []byte(`1`))
	assert.Error(t, err)
}

// The insertion rules the callers' tests pin: First for the request edits
// (proxy's request_test.go), Last for InjectLogprobs (confidence's
// rewrite_test.go), Close for destream's tool call index (destream_test.go).
func TestSetPositions(t *testing.T) {
	kv := KV{"k", []byte("1")}
	for _, c := range []struct {
		in                string
		first, last, clos string
	}{
		{`{}`, `{"k": 1}`, `{"k": 1}`, `{"k": 1}`},
		{` { } `, ` {"k": 1 } `, ` {"k": 1 } `, ` { "k": 1} `},
		{`{"a": 1}`, `{"k": 1, "a": 1}`, `{"a": 1, "k": 1}`, `{"a": 1, "k": 1}`},
		{`{"a":1,"b":2}`, `{"k": 1, "a":1,"b":2}`, `{"a":1,"b":2,"k":1}`, `{"a":1,"b":2, "k": 1}`},
		{`{"a":1}`, `{"k": 1, "a":1}`, `{"a":1,"k":1}`, `{"a":1, "k": 1}`},
		{"{\n  \"a\": 1,\n  \"b\": 2\n}", "{\"k\": 1, \n  \"a\": 1,\n  \"b\": 2\n}", "{\n  \"a\": 1,\n  \"b\": 2,\"k\": 1\n}", "{\n  \"a\": 1,\n  \"b\": 2\n, \"k\": 1}"},
		{`{"k": 0, "a": 1}`, `{"k": 1, "a": 1}`, `{"k": 1, "a": 1}`, `{"k": 1, "a": 1}`},
	} {
		for pos, want := range map[Position]string{First: c.first, Last: c.last, Close: c.clos} {
			out, err := Set([]byte(c.in), pos, kv)
			require.NoError(t, err)
			assert.Equal(t, want, string(out), "%q at %d", c.in, pos)
		}
	}
	out, err := Set([]byte(`{"a": 1}`), Last, KV{"x", []byte("true")}, KV{"a", []byte("2")}, KV{"y", []byte("3")})
	require.NoError(t, err)
	assert.Equal(t, `{"a": 2, "x": true, "y": 3}`, string(out))

	for _, bad := range []string{``, `[1]`, `{"a": 1} x`, `{"a": }`, `{"a": [1, 2`} {
		out, err := Set([]byte(bad), First, kv)
		assert.Error(t, err, bad)
		assert.Equal(t, bad, string(out), "unchanged on error")
	}
	_, err = ScanObject([]byte(`{} x`))
	assert.True(t, errors.Is(err, ErrTrailing))
}

func TestRemoval(t *testing.T) {
	for in, want := range map[string]string{
		`{"x": 1, "a": 2}`:           `{"a": 2}`,
		`{"a": 2, "x": 1}`:           `{"a": 2}`,
		`{"a":2 , "x": 1 }`:          `{"a":2 }`,
		`{ "x": 1 }`:                 `{  }`,
		`{"a": 1, "x": 1, "b": [2]}`: `{"a": 1, "b": [2]}`,
	} {
		o, err := ScanObject([]byte(in))
		require.NoError(t, err)
		k := -1
		for i, m := range o.Members {
			if KeyIs([]byte(in), m, "x") {
				k = i
			}
		}
		assert.Equal(t, want, string(Apply([]byte(in), []Edit{Removal(o.Members, k)})), in)
	}
}

// setMemberBefore is the proxy's setMember before this package: it found
// the member with encoding/json's decoder and added a missing one first.
// Set at First must write the same bytes for every valid object.
func setMemberBefore(obj []byte, key string, value []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	start, end, found := 0, 0, false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, _ := tok.(string)
		afterKey := int(dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		if name != key {
			continue
		}
		s := afterKey
		for s < len(obj) && (obj[s] == ':' || IsSpace(obj[s])) {
			s++
		}
		start, end, found = s, int(dec.InputOffset()), true
	}
	if found {
		return append(append(append([]byte{}, obj[:start]...), value...), obj[end:]...), nil
	}
	open := bytes.IndexByte(obj, '{')
	name, _ := json.Marshal(key)
	member := append(append(name, ": "...), value...)
	if len(bytes.TrimSpace(obj[open+1:])) > 1 {
		member = append(member, ", "...)
	}
	return append(append(append([]byte{}, obj[:open+1]...), member...), obj[open+1:]...), nil
}

var fuzzValues = []string{`true`, `3`, `"x"`, `{"include_usage": true}`, `NaN`, `[]`, `null`, `-Infinity`}

// FuzzSet edits arbitrary objects: the result still parses (Python's NaN
// and Infinity allowed) when the object did, the members it did not set
// are byte for byte as they were and in their order, and at First it
// writes what the proxy's setMember wrote.
func FuzzSet(f *testing.F) {
	for _, s := range []string{
		`{}`, ` { } `, `{"a": 1, "b": 2, "a": 3}`, `{"esc\u0061ped": 1}`, `{"a":1,"b":[1,{"c":"}"}]}`,
		"{\n  \"messages\": [],\n  \"stream\": true\n}\n", `{"x": NaN, "y": [Infinity]}`, `{"stream_options": null}`, `[1]`, `{"a": 1`,
	} {
		f.Add([]byte(s), "a", uint8(0), uint8(0))
		f.Add([]byte(s), "stream", uint8(3), uint8(1))
		f.Add([]byte(s), "escaped", uint8(4), uint8(2))
	}
	f.Fuzz(func(t *testing.T, obj []byte, key string, v, p uint8) {
		value := []byte(fuzzValues[int(v)%len(fuzzValues)])
		pos := Position(p % 3)
		out, err := Set(obj, pos, KV{key, value})
		if err != nil {
			require.Equal(t, obj, out, "unchanged on error")
			return
		}
		nulled, _ := NullPythonLiterals(obj)
		if json.Valid(nulled) {
			outNulled, _ := NullPythonLiterals(out)
			require.True(t, json.Valid(outNulled), "%q -> %q", obj, out)
		}

		before, err := ScanObject(obj)
		require.NoError(t, err)
		after, err := ScanObject(out)
		require.NoError(t, err, "%q -> %q", obj, out)
		set, found := -1, false
		if validKey(key) {
			if _, found = before.Last(key); found {
				for i, m := range before.Members {
					if KeyIs(obj, m, key) {
						set = i
					}
				}
			}
		}
		am := after.Members
		switch {
		case found:
			require.Len(t, am, len(before.Members))
		case pos == First:
			require.Len(t, am, len(before.Members)+1)
			set, am = 0, am[1:]
		default:
			require.Len(t, am, len(before.Members)+1)
			set, am = len(before.Members), am[:len(before.Members)]
		}
		for i, m := range before.Members {
			if i == set && found {
				require.Equal(t, string(obj[m.KS:m.KE]), string(out[am[i].KS:am[i].KE]))
				require.Equal(t, string(value), string(after.Value(am[i])))
				continue
			}
			require.Equal(t, string(obj[m.KS:m.VE]), string(out[am[i].KS:am[i].VE]), "member %d of %q -> %q", i, obj, out)
		}
		if !found && validKey(key) {
			added := after.Members[set]
			require.True(t, KeyIs(out, added, key), "%q -> %q", obj, out)
			require.Equal(t, string(value), string(after.Value(added)))
		}

		if pos == First && json.Valid(obj) && validKey(key) {
			want, err := setMemberBefore(obj, key, value)
			require.NoError(t, err)
			require.Equal(t, string(want), string(out), "%q", obj)
		}
	})
}

// validKey: keys as the proxy names them (it names ASCII ones). KeyIs
// compares unescaped keys byte for byte, which is decoded comparison only
// for names that are valid UTF-8 without U+FFFD.
func validKey(key string) bool {
	return utf8.ValidString(key) && !strings.ContainsRune(key, utf8.RuneError)
}

func TestDepth(t *testing.T) {
	for b, want := range map[string]int{
		`{}`: 1, `{"a": [1, {"b": []}]}`: 4, `"[[["`: 0, `{"a": "]]]{{{"}`: 1, `[[[`: 3, `{"a": "\"[["}`: 1, `[{"x": "unterminated`: 2,
	} {
		assert.Equal(t, want, Depth([]byte(b)), b)
	}
}
