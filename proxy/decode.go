package proxy

import (
	stdjson "encoding/json"
	"unicode/utf8"

	json "github.com/goccy/go-json"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/jsonedit"
)

// decodeCompletion decodes an answer or a chunk. Python's json.dumps
// writes NaN, Infinity and -Infinity for floats that are not finite (a
// logprob of -inf, for one); encoding/json refuses those, and a whole
// answer would go unread for one such number. When plain decoding fails,
// they are read as null.
//
// It decodes with goccy/go-json, which reads JSON as encoding/json does,
// three to four times faster (a chunk is decoded for every token), except
// that it keeps invalid UTF-8 in strings where encoding/json makes it
// U+FFFD: a body that is not valid UTF-8 goes to encoding/json.
func decodeCompletion(b []byte, c *completionJSON) error {
	unmarshal := json.Unmarshal
	if !utf8.Valid(b) {
		unmarshal = stdjson.Unmarshal
	}
	err := unmarshal(b, c)
	if err == nil {
		return nil
	}
	fixed, changed := jsonedit.NullPythonLiterals(b)
	if !changed {
		return err
	}
	*c = completionJSON{}
	return unmarshal(fixed, c)
}

// decodePlain is decodeCompletion's first try alone, for valid UTF-8: a
// body with Python's literals outside raw values is an error.
func decodePlain(b []byte, c *completionJSON) error { return json.Unmarshal(b, c) }
