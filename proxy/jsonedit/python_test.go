package jsonedit

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNullPythonLiterals(t *testing.T) {
	for in, want := range map[string]string{
		`{"a": NaN, "b": [Infinity, -Infinity]}`: `{"a": null, "b": [null, null]}`,
		`{"s": "NaN Infinity \"-Infinity\""}`:    ``,
		`{"s": "\\", "x": -Infinity}`:            `{"s": "\\", "x": null}`,
		`[1.5, -2e3]`:                            ``,
	} {
		got, changed := NullPythonLiterals([]byte(in))
		if want == "" {
			assert.False(t, changed, in)
			assert.Equal(t, in, string(got))
			continue
		}
		assert.True(t, changed, in)
		assert.Equal(t, want, string(got), in)
	}
}

// Valid JSON is never changed; what is changed had a Python literal
// outside a string, and no string's content is touched.
func FuzzNullPythonLiterals(f *testing.F) {
	f.Add([]byte(`{"a": NaN, "s": "NaN", "b": [-Infinity, Infinity]}`))
	f.Add([]byte(`{"s": "\"NaN\\"}`))
	f.Add([]byte(`{"s": "a\\\"b\\", "t": NaN, "u": "\\`))
	f.Fuzz(func(t *testing.T, in []byte) {
		out, changed := NullPythonLiterals(in)
		if json.Valid(in) {
			require.False(t, changed)
			require.Equal(t, in, out)
		}
		if !changed {
			require.Equal(t, in, out)
		}
		want, wantChanged := nullPythonLiteralsByteByByte(in)
		require.Equal(t, wantChanged, changed)
		require.Equal(t, want, out)
	})
}

// nullPythonLiteralsByteByByte is NullPythonLiterals as it was first
// written, one byte at a time: the fast one must agree with it.
func nullPythonLiteralsByteByByte(b []byte) ([]byte, bool) {
	var out []byte
	last := 0
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		if c == '"' {
			inString = true
			continue
		}
		var lit string
		switch {
		case bytes.HasPrefix(b[i:], []byte("NaN")):
			lit = "NaN"
		case bytes.HasPrefix(b[i:], []byte("Infinity")):
			lit = "Infinity"
		case bytes.HasPrefix(b[i:], []byte("-Infinity")):
			lit = "-Infinity"
		default:
			continue
		}
		out = append(out, b[last:i]...)
		out = append(out, "null"...)
		i += len(lit) - 1
		last = i + 1
	}
	if out == nil {
		return b, false
	}
	return append(out, b[last:]...), true
}
