package jsonedit

import (
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
	f.Fuzz(func(t *testing.T, in []byte) {
		out, changed := NullPythonLiterals(in)
		if json.Valid(in) {
			require.False(t, changed)
			require.Equal(t, in, out)
		}
		if !changed {
			require.Equal(t, in, out)
		}
	})
}
