package proxy

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/confidence"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/wire"
)

// An answer with injected logprobs is read once (recordAnswer: the client's
// answer decoded, the logprobs kept from the pass that took them out), and
// the record is what decoding the engine's whole answer made of it: each
// layout, Python's literals in and as the logprobs, duplicate keys, more
// than one choice, a choice that is not an object.
func TestRecordAnswerReadsAsTheWholeAnswer(t *testing.T) {
	for name, body := range recordAnswerCases() {
		t.Run(name, func(t *testing.T) { checkRecordAnswer(t, body) })
	}
}

func checkRecordAnswer(t *testing.T, body []byte) {
	out, kept, err := confidence.StripLogprobsKeep(body)
	if err != nil {
		return // not one JSON object: the proxy decodes the answer as it is
	}
	// The strip pass's Plain is keptAsDecoded's, in the same pass.
	require.Equal(t, keptAsDecoded(kept.Values), kept.Plain, "plain")
	got, want := &Record{}, &Record{}
	recordAnswer(got, body, out, kept)
	var c wire.Completion
	if wire.Decode(body, &c) == nil {
		want.applyResponse(&c)
	}
	require.Equal(t, want, got)
}

// The same, for any answer.
func FuzzRecordAnswer(f *testing.F) {
	for _, body := range recordAnswerCases() {
		f.Add(body)
	}
	f.Fuzz(checkRecordAnswer)
}

func recordAnswerCases() map[string][]byte {
	const top = `{"content": [{"id": 21806, "token": "Ġsea", "logprob": -2.5, "top_logprobs": [{"id": 21806, "token": "ĠNaN", "logprob": -2.5}, {"id": 3015, "token": "ĠI", "logprob": -0.125}]}]}`
	const legacy = `{"token_logprobs": [-0.125], "top_logprobs": [{"3015": -0.125, "21806": -2.5}], "tokens": [3015]}`
	const openai = `{"content": [{"token": "Hi", "logprob": -0.3, "bytes": [72, 105], "top_logprobs": [{"token": "Hi", "logprob": -0.3, "bytes": [72, 105]}]}], "refusal": null}`
	const withLiterals = `{"content": [{"id": 1, "token": "a", "logprob": -Infinity, "top_logprobs": [{"id": 1, "token": "a", "logprob": NaN}, {"id": 2, "token": "Infinity", "logprob": Infinity}]}]}`
	answer := func(choices string) []byte {
		return []byte(`{"id": "chatcmpl-1", "system_fingerprint": "x", "object": "chat.completion", "model": "m", "created": 1, "choices": [` +
			choices + `], "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}`)
	}
	choice := func(i int, lp string) string {
		return `{"index": ` + string(rune('0'+i)) + `, "finish_reason": "stop", "message": {"role": "assistant", "content": "Hi there"}, "logprobs": ` + lp + `}`
	}
	return map[string][]byte{
		"mlx top":          answer(choice(0, top)),
		"legacy":           answer(choice(0, legacy)),
		"openai":           answer(choice(0, openai)),
		"literals":         answer(choice(0, withLiterals)),
		"literal whole":    answer(choice(0, `NaN`)),
		"null":             answer(choice(0, `null`)),
		"none":             answer(`{"index": 0, "finish_reason": "stop", "message": {"content": "Hi"}}`),
		"duplicate keys":   answer(`{"index": 0, "logprobs": ` + legacy + `, "message": {"content": "Hi"}, "logprobs": ` + top + `}`),
		"two choices":      answer(choice(1, top) + `, ` + choice(0, withLiterals)),
		"null choice":      answer(`null, ` + choice(0, top)),
		"literal outside":  []byte(`{"id": "a", "created": NaN, "choices": [` + choice(0, withLiterals) + `]}`),
		"not utf-8":        answer(choice(0, "{\"content\": [{\"token\": \"\xff\", \"logprob\": NaN}]}")),
		"two choices keys": []byte(`{"choices": [` + choice(0, legacy) + `], "id": "a", "choices": [` + choice(0, top) + `]}`),
		// The strip pass pairs brackets by depth; decoding counts braces
		// and ends at a NUL: it does not read these.
		"brackets unpaired": answer(choice(0, `{"content": [}]`)),
		"nul":               answer(choice(0, "{\"content\": \"\x00\"}")),
	}
}
