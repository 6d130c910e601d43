package confidence

import (
	"strings"
)

// Matching a candidate against the generated text. mlx_lm's "token" is the
// tokenizer's raw piece (convert_ids_to_tokens), not text:
//
//   - byte-level BPE (GPT-2, Qwen, Llama 3): every byte is written as one
//     printable character, e.g. "Ġword" for " word", "Ċ" for "\n";
//   - SentencePiece (Llama 2, Mistral, Gemma): "▁" stands for a space and
//     bytes without a piece are "<0x0A>";
//   - added tokens ("<|im_end|>", "<think>") are spelled as they are.
//
// OpenAI-style engines send the decoded text, and its UTF-8 in "bytes".
// A candidate matches when one of these readings is a prefix of the text
// at the cursor; no allocation is made.

// byteLevel maps the characters of GPT-2's bytes_to_unicode back to bytes
// (-1: not a byte-level character).
var byteLevel = func() (t [324]int16) {
	for i := range t {
		t[i] = -1
	}
	n := 0
	for b := range 256 {
		printable := b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE
		if printable {
			t[b] = int16(b)
		} else {
			t[256+n] = int16(b)
			n++
		}
	}
	return t
}()

// matchLen returns how many bytes of text, from pos, the candidate spells
// (0: no match).
func matchLen(text string, pos int, c *Candidate) int {
	rest := text[pos:]
	if c.HasBytes {
		if len(c.Bytes) > 0 && strings.HasPrefix(rest, c.Bytes) {
			return len(c.Bytes)
		}
		return 0
	}
	if c.Token == "" {
		return 0
	}
	if n := matchPlain(rest, c.Token); n > 0 {
		return n
	}
	return matchByteLevel(rest, c.Token)
}

// matchPlain reads the token as text, with SentencePiece's "▁" as a space
// and a whole "<0xHH>" as that byte.
func matchPlain(rest, tok string) int {
	if len(tok) == 6 && tok[0] == '<' && tok[1] == '0' && tok[2] == 'x' && tok[5] == '>' {
		if h, ok := hexByte(tok[3], tok[4]); ok {
			if len(rest) > 0 && rest[0] == h {
				return 1
			}
			return 0
		}
	}
	n := 0
	for i := 0; i < len(tok); {
		if strings.HasPrefix(tok[i:], "▁") {
			if n >= len(rest) || rest[n] != ' ' {
				return 0
			}
			n++
			i += len("▁")
			continue
		}
		if n >= len(rest) || rest[n] != tok[i] {
			return 0
		}
		n++
		i++
	}
	return n
}

// matchByteLevel reads the token as byte-level BPE.
func matchByteLevel(rest, tok string) int {
	n := 0
	for _, r := range tok {
		if int(r) >= len(byteLevel) || byteLevel[r] < 0 {
			return 0
		}
		if n >= len(rest) || rest[n] != byte(byteLevel[r]) {
			return 0
		}
		n++
	}
	return n
}

func hexByte(a, b byte) (byte, bool) {
	hi, ok1 := hexDigit(a)
	lo, ok2 := hexDigit(b)
	return hi<<4 | lo, ok1 && ok2
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}
