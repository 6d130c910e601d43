package proxy

import (
	"encoding/json"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/mlx-otelcol/mlx-otelcol/internal/chatcontent"
	"github.com/mlx-otelcol/mlx-otelcol/internal/modelconfig"
)

// A prompt that cannot fit the model's context is refused (400
// context_length_exceeded, as OpenAI answers it) before the engine spends
// its prefill on it: mlx_lm does not check, and prefills a prompt of any
// length, one step at a time, in its only generation thread.
//
// The proxy does not run the tokenizer. It bounds the prompt's tokens from
// below, so that a prompt that would fit is never refused:
//
//   - No token stands for more text than the longest entry of the
//     tokenizer's vocabulary (modelconfig.Tokenizer.MaxTokenBytes, from
//     the tokenizer.json beside config.json), so n bytes of text are at
//     least ceil(n / MaxTokenBytes) tokens. A tokenizer that can make one
//     token of text of any length has no such bound, and then, or without
//     a tokenizer.json, no prompt is refused for its length.
//   - The text counted is the text the tokenizer will surely see: the
//     prompt of /v1/completions (encoded as it is), and the user turns of
//     a chat, each trimmed of white space (a chat template may trim a
//     turn; it may reword or drop the others: Qwen3's drops the reasoning
//     of earlier assistant turns). The template's own tokens, the other
//     turns and the tools are not counted.
//   - The text is counted as the tokenizer's normalizer leaves it (NFC
//     and its kin can shorten a text), with golang.org/x/text's forms.
//
// The bound is loose by the ratio of the longest entry to the bytes of an
// ordinary token (about 4 for English): only a prompt far over the context
// is refused, such as an 8 MiB prompt for a 40,960-token context.

// tokenBound is a tokenizer's lower bound of tokens from text.
type tokenBound struct {
	maxTokenBytes int
	forms         []norm.Form
}

func newTokenBound(t modelconfig.Tokenizer) *tokenBound {
	b := &tokenBound{maxTokenBytes: t.MaxTokenBytes}
	for _, f := range t.Normalizers {
		b.forms = append(b.forms, map[string]norm.Form{"NFC": norm.NFC, "NFD": norm.NFD, "NFKC": norm.NFKC, "NFKD": norm.NFKD}[f])
	}
	return b
}

// maxExpansion is the most a normalization form lengthens a UTF-8 text
// (Unicode UAX #15, "Stream-Safe Text Format": 3 times for NFC and NFD,
// 11 for NFKC and NFKD, as U+FDFA's 3 bytes become 33): a body too short
// to exceed the context even so is not read further.
const maxExpansion = 11

// textBytes is the length of s as the tokenizer's normalizer leaves it.
func (b *tokenBound) textBytes(s string) int {
	for _, f := range b.forms {
		if !f.IsNormalString(s) {
			s = f.String(s)
		}
	}
	return len(s)
}

// tokensAtLeast is the lower bound of the tokens of texts.
func (b *tokenBound) tokensAtLeast(texts []string) int {
	n := 0
	for _, s := range texts {
		n += b.textBytes(s)
	}
	return (n + b.maxTokenBytes - 1) / b.maxTokenBytes
}

// checkContext refuses a prompt whose lower bound of tokens is over the
// context.
func checkContext(f map[string]json.RawMessage, bodyLen int, m modelLimits) (refusal, bool) {
	if m.prompt == nil || m.context <= 0 {
		return refusal{}, false
	}
	most := bodyLen
	for range m.prompt.forms {
		most *= maxExpansion
	}
	if most/m.prompt.maxTokenBytes <= m.context {
		return refusal{}, false // cannot exceed it, whatever the body holds
	}
	param, texts := promptTexts(f)
	if n := m.prompt.tokensAtLeast(texts); n > m.context {
		return badRequest("context_length_exceeded", param, "This model's maximum context length is %d tokens. However, your %s resulted in at least %d tokens. Please reduce the length of the %s.",
			m.context, param, n, param)
	}
	return refusal{}, false
}

// promptTexts are the texts the tokenizer will surely see (see above), and
// the member that holds them; a message's parts are joined as mlx_lm
// v0.31.3 server.py, process_message_content, joins them.
func promptTexts(f map[string]json.RawMessage) (string, []string) {
	if raw, ok := f["prompt"]; ok {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return "prompt", []string{s}
		}
		return "prompt", nil
	}
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(f["messages"], &msgs) != nil {
		return "messages", nil
	}
	var texts []string
	for _, m := range msgs {
		if m.Role != "user" {
			continue
		}
		texts = append(texts, trimPython(chatcontent.Join(m.Content, "")))
	}
	return "messages", texts
}

// trimPython trims what Python's str.strip (Jinja's trim) would, and what
// Go's unicode.IsSpace would: the union, so the text left is no longer.
func trimPython(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || (0x1c <= r && r <= 0x1f) })
}
