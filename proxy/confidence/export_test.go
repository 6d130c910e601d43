package confidence

import "github.com/mlx-otelcol/mlx-otelcol/proxy/jsonedit"

// The forms of the parser and the strip pass the tests call; the proxy
// calls Logprobs.Add, StripLogprobsKeep and AppendStripLogprobsKeep.

// Parse reads the bytes of one "logprobs" value (Logprobs.Add on a new
// Logprobs).
func Parse(raw []byte) *Logprobs {
	l := &Logprobs{}
	l.Add(raw)
	return l
}

// StripLogprobs is StripLogprobsKeep without what it took out.
func StripLogprobs(resp []byte) ([]byte, error) {
	var buf [4]jsonedit.Edit
	edits, err := stripEdits(resp, buf[:0], nil)
	if err != nil || len(edits) == 0 {
		return resp, err
	}
	return jsonedit.Apply(resp, edits), nil
}

// AppendStripLogprobs is AppendStripLogprobsKeep without what it took out.
func AppendStripLogprobs(dst, resp []byte) ([]byte, error) {
	return appendStrip(dst, resp, nil)
}
