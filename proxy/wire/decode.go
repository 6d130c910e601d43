package wire

import (
	stdjson "encoding/json"
	"unicode/utf8"

	json "github.com/goccy/go-json"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/confidence"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/jsonedit"
)

// Decode decodes an answer or a chunk. Python's json.dumps
// writes NaN, Infinity and -Infinity for floats that are not finite (a
// logprob of -inf, for one); encoding/json refuses those, and a whole
// answer would go unread for one such number. When plain decoding fails,
// they are read as null.
//
// It decodes with goccy/go-json, which reads JSON as encoding/json does,
// three to four times faster (a chunk is decoded for every token), except
// that it keeps invalid UTF-8 in strings where encoding/json makes it
// U+FFFD: a body that is not valid UTF-8 goes to encoding/json.
func Decode(b []byte, c *Completion) error {
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
	*c = Completion{}
	return unmarshal(fixed, c)
}

// decodePlain is Decode's first try alone, for valid UTF-8: a
// body with Python's literals outside raw values is an error.
func decodePlain(b []byte, c *Completion) error { return json.Unmarshal(b, c) }

// DecodeStripped decodes into c what decoding engine, an answer or a chunk,
// gives, from client (engine with its logprobs taken out, the bytes the
// client gets) and kept (the logprobs values taken out, one per choice,
// confidence.Kept): the logprobs are most of the bytes, and decoding them
// only copies them (goccy copies a raw value twice). Each choice's
// Logprobs is then its kept value, a slice of engine, Python's NaN and
// Infinity included, as decoding engine keeps them. It is false where the
// two could differ: engine is not valid UTF-8, a literal outside the
// logprobs or as one, choices that do not line up, logprobs edited rather
// than removed (the legacy and OpenAI layouts), a kept value decoding
// would not read whole (not kept.Plain: the strip pass matches brackets by
// depth and takes any byte in a string, while goccy skips a raw object by
// counting its braces alone and ends at a NUL byte, its end of input).
// The check is made in the strip pass (jsonedit.SkipObjectPlain) rather
// than by jsonedit.Reader.Skip, which reads the value strictly at about
// twice the cost: BenchmarkRewrite100kB/strip, on the injected answers'
// request path.
//
// fast, when not nil, decodes the client's chunk first (ChunkDecoder).
func DecodeStripped(c *Completion, engine, client []byte, kept confidence.Kept, fast *ChunkDecoder) bool {
	if !kept.Plain || !utf8.Valid(engine) || !decodeClient(c, client, fast) || len(c.Choices) != len(kept.Values) {
		return false
	}
	for i := range c.Choices {
		// A "logprobs" left in the client's bytes (a layout that is edited,
		// not removed; a key in other case, which decoding matches too):
		// the engine's bytes say which counts.
		if len(c.Choices[i].Logprobs) != 0 {
			return false
		}
		c.Choices[i].Logprobs = kept.Values[i]
	}
	return true
}

// decodeClient is decodePlain, by fast when it reads client.
func decodeClient(c *Completion, client []byte, fast *ChunkDecoder) bool {
	return fast != nil && fast.Decode(client, c) || decodePlain(client, c) == nil
}
