package mlxsim

import (
	"hash/fnv"
	"strings"
	"unicode"
)

// The simulated tokenizer. It follows the shape of Qwen2/Qwen3's tokenizer
// (the model family mlx-oc served) without its BPE merges:
//
//   - added (special) tokens are matched first and keep Qwen's real ids;
//   - the rest is split with Qwen2's pre-tokenizer pattern
//     (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|
//     ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//     and every piece is ONE token (one word, with its leading space, is one
//     token; digits are single tokens as in Qwen);
//   - a piece's id is a stable hash of its text below 151643, so the same word
//     always has the same id, in prompts and in generated text alike;
//   - convert_ids_to_tokens gives the byte-level BPE spelling ("Ġword" for
//     " word", "Ċ" for "\n").
//
// The split is lossless: concatenating the pieces gives back the text, which
// keeps the tool-call text and stop-sequence handling honest.

const vocabSize = 151643

// Qwen2/Qwen3 added tokens with their real ids.
var specialTokens = []struct {
	text string
	id   int
}{
	{"<|endoftext|>", 151643},
	{"<|im_start|>", 151644},
	{"<|im_end|>", 151645},
	{"<tool_call>", 151657},
	{"</tool_call>", 151658},
	{"<tool_response>", 151665},
	{"</tool_response>", 151666},
	{"<think>", 151667},
	{"</think>", 151668},
}

const (
	tokEndOfText    = 151643
	tokImStart      = 151644
	tokImEnd        = 151645
	tokToolCall     = 151657
	tokToolCallEnd  = 151658
	tokThink        = 151667
	tokThinkEnd     = 151668
	toolCallStart   = "<tool_call>"
	toolCallEnd     = "</tool_call>"
	thinkStartText  = "<think>"
	thinkEndText    = "</think>"
	imEndText       = "<|im_end|>"
	endOfTextString = "<|endoftext|>"
)

var specialByID = func() map[int]string {
	m := map[int]string{}
	for _, s := range specialTokens {
		m[s.id] = s.text
	}
	return m
}()

// token is one token: its id and the text it decodes to.
type token struct {
	id   int
	text string
}

// pieceID is the stable id of an ordinary piece.
func pieceID(piece string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(piece))
	return int(h.Sum32() % vocabSize)
}

// tokenize splits text into tokens (added tokens first, then pre-tokens).
func tokenize(text string) []token {
	var out []token
	for len(text) > 0 {
		at, which := -1, -1
		for i, s := range specialTokens {
			if j := strings.Index(text, s.text); j >= 0 && (at < 0 || j < at) {
				at, which = j, i
			}
		}
		if at < 0 {
			out = appendPieces(out, text)
			break
		}
		out = appendPieces(out, text[:at])
		out = append(out, token{specialTokens[which].id, specialTokens[which].text})
		text = text[at+len(specialTokens[which].text):]
	}
	return out
}

func tokenIDs(toks []token) []int {
	ids := make([]int, len(toks))
	for i, t := range toks {
		ids[i] = t.id
	}
	return ids
}

func appendPieces(out []token, text string) []token {
	for _, p := range preTokenize(text) {
		out = append(out, token{pieceID(p), p})
	}
	return out
}

func isL(r rune) bool { return unicode.IsLetter(r) }
func isN(r rune) bool { return unicode.IsNumber(r) }
func isS(r rune) bool { return unicode.IsSpace(r) }

// preTokenize applies Qwen2's split pattern (leftmost-first alternation).
func preTokenize(text string) []string {
	s := []rune(text)
	var out []string
	for i := 0; i < len(s); {
		n := matchPiece(s, i)
		out = append(out, string(s[i:i+n]))
		i += n
	}
	return out
}

func matchPiece(s []rune, i int) int {
	n := len(s)
	// (?i:'s|'t|'re|'ve|'m|'ll|'d)
	if s[i] == '\'' && i+1 < n {
		a := unicode.ToLower(s[i+1])
		if a == 's' || a == 't' || a == 'm' || a == 'd' {
			return 2
		}
		if i+2 < n {
			b := unicode.ToLower(s[i+2])
			if (a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l') {
				return 3
			}
		}
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	j := i
	if !isL(s[j]) && s[j] != '\r' && s[j] != '\n' && !isN(s[j]) && j+1 < n && isL(s[j+1]) {
		j++
	}
	if isL(s[j]) {
		for j < n && isL(s[j]) {
			j++
		}
		return j - i
	}
	// \p{N}
	if isN(s[i]) {
		return 1
	}
	// ' ?[^\s\p{L}\p{N}]+[\r\n]*'
	j = i
	if s[j] == ' ' {
		j++
	}
	k := j
	for k < n && !isS(s[k]) && !isL(s[k]) && !isN(s[k]) {
		k++
	}
	if k > j {
		for k < n && (s[k] == '\r' || s[k] == '\n') {
			k++
		}
		return k - i
	}
	// whitespace alternatives
	k = i
	for k < n && isS(s[k]) {
		k++
	}
	if k > i {
		// \s*[\r\n]+ : up to the last newline of the run
		for m := k - 1; m >= i; m-- {
			if s[m] == '\r' || s[m] == '\n' {
				return m + 1 - i
			}
		}
		// \s+(?!\S)
		if k == n {
			return k - i
		}
		if k-1 > i {
			return k - 1 - i
		}
		// \s+
		return k - i
	}
	return 1
}

// byteLevel maps bytes to GPT-2's printable alphabet (bytes_to_unicode).
var byteLevel = func() [256]rune {
	var m [256]rune
	var bs []int
	for b := '!'; b <= '~'; b++ {
		bs = append(bs, int(b))
	}
	for b := 0xa1; b <= 0xac; b++ {
		bs = append(bs, b)
	}
	for b := 0xae; b <= 0xff; b++ {
		bs = append(bs, b)
	}
	in := map[int]bool{}
	for _, b := range bs {
		in[b] = true
		m[b] = rune(b)
	}
	n := 0
	for b := 0; b < 256; b++ {
		if !in[b] {
			m[b] = rune(256 + n)
			n++
		}
	}
	return m
}()

// bpeToken is tokenizer.convert_ids_to_tokens for a token.
func bpeToken(t token) string {
	if s, ok := specialByID[t.id]; ok {
		return s
	}
	var b strings.Builder
	for _, c := range []byte(t.text) {
		b.WriteRune(byteLevel[c])
	}
	return b.String()
}
