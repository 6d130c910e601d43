package proxy

import (
	"bytes"
	"encoding/json"
)

// decodeCompletion decodes an answer or a chunk. Python's json.dumps
// writes NaN, Infinity and -Infinity for floats that are not finite (a
// logprob of -inf, for one); encoding/json refuses those, and a whole
// answer would go unread for one such number. When plain decoding fails,
// they are read as null.
func decodeCompletion(b []byte, c *completionJSON) error {
	err := json.Unmarshal(b, c)
	if err == nil {
		return nil
	}
	fixed, changed := nullPythonLiterals(b)
	if !changed {
		return err
	}
	*c = completionJSON{}
	return json.Unmarshal(fixed, c)
}

// nullPythonLiterals returns b with every NaN, Infinity and -Infinity
// outside strings replaced by null.
func nullPythonLiterals(b []byte) ([]byte, bool) {
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
