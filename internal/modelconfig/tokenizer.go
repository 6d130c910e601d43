package modelconfig

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"unicode/utf8"
)

// Tokenizer is what the proxy needs of a model's tokenizer.json to bound
// the tokens of a text from below without running the tokenizer: no token
// stands for more than MaxTokenBytes bytes of the (normalized) text, so a
// text of n bytes is at least ceil(n / MaxTokenBytes) tokens.
type Tokenizer struct {
	// MaxTokenBytes is the most text bytes one token can stand for: the
	// longest vocabulary entry or added token (a byte-level entry counted
	// in characters, each of which is one byte; any other in UTF-8 bytes,
	// which is at least the bytes it stands for: SentencePiece's "▁" is 3
	// bytes for a space, a byte-fallback "<0x0A>" 6 for one byte), and at
	// least 4 (an unknown character as one unknown token).
	MaxTokenBytes int
	// Normalizers are the Unicode normalization forms ("NFC", "NFD",
	// "NFKC", "NFKD") the tokenizer applies to a text first, in order:
	// they can shorten a text (a Hangul syllable spelt in jamo, 9 bytes,
	// is one of 3 bytes in NFC), so the text is counted as normalized.
	Normalizers []string
}

// ErrNoBound is wrapped by LoadTokenizer when the tokenizer can make one
// token of text of any length (a normalizer or pre-tokenizer that removes
// text, unknown text fused into one token, a word-level model): no lower
// bound from bytes exists.
var ErrNoBound = fmt.Errorf("the tokenizer has no bound on bytes per token")

// LoadTokenizer reads tokenizer.json in dir (the directory of the model's
// config.json).
func LoadTokenizer(dir string) (Tokenizer, error) {
	b, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		return Tokenizer{}, err
	}
	return ParseTokenizer(b)
}

type tokenizerJSON struct {
	AddedTokens []struct {
		Content string `json:"content"`
	} `json:"added_tokens"`
	Normalizer   *component `json:"normalizer"`
	PreTokenizer *component `json:"pre_tokenizer"`
	Model        struct {
		Type         string          `json:"type"`
		Vocab        json.RawMessage `json:"vocab"`
		UnkToken     *string         `json:"unk_token"`
		FuseUnk      bool            `json:"fuse_unk"`
		ByteFallback bool            `json:"byte_fallback"`
	} `json:"model"`
}

// component is a normalizer or pre-tokenizer of tokenizer.json.
type component struct {
	Type          string       `json:"type"`
	Normalizers   []*component `json:"normalizers"`
	Pretokenizers []*component `json:"pretokenizers"`
	Behavior      string       `json:"behavior"`
	Pattern       *struct {
		String *string `json:"String"`
	} `json:"pattern"`
	Content string `json:"content"`
}

// ParseTokenizer reads a tokenizer.json's text (Hugging Face tokenizers'
// serialization: tokenizers/src/tokenizer/serialization.rs).
func ParseTokenizer(b []byte) (Tokenizer, error) {
	var tj tokenizerJSON
	if err := json.Unmarshal(b, &tj); err != nil {
		return Tokenizer{}, fmt.Errorf("tokenizer.json: %w", err)
	}
	var t Tokenizer
	if err := t.normalizers(tj.Normalizer); err != nil {
		return Tokenizer{}, err
	}
	byteLevel, err := preTokenizer(tj.PreTokenizer)
	if err != nil {
		return Tokenizer{}, err
	}
	longest, err := longestEntry(tj, byteLevel)
	if err != nil {
		return Tokenizer{}, err
	}
	for _, a := range tj.AddedTokens {
		longest = max(longest, len(a.Content))
	}
	t.MaxTokenBytes = max(longest, utf8.UTFMax)
	return t, nil
}

// normalizers keeps the normalization forms; a normalizer that only adds
// text (Prepend, a Replace of a string by one no shorter) changes no
// bound; any other may remove text (Strip, StripAccents, Lowercase's
// Kelvin sign, a regex Replace, BERT's cleaning, SentencePiece's
// Precompiled map).
func (t *Tokenizer) normalizers(c *component) error {
	if c == nil {
		return nil
	}
	switch c.Type {
	case "NFC", "NFD", "NFKC", "NFKD":
		t.Normalizers = append(t.Normalizers, c.Type)
	case "Prepend":
	case "Replace":
		if c.Pattern == nil || c.Pattern.String == nil || len(c.Content) < len(*c.Pattern.String) {
			return fmt.Errorf("%w: normalizer Replace may shorten the text", ErrNoBound)
		}
	case "Sequence":
		for _, n := range c.Normalizers {
			if err := t.normalizers(n); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("%w: normalizer %s may remove text", ErrNoBound, c.Type)
	}
	return nil
}

// preTokenizer reports whether the vocabulary is byte-level, and fails
// for a pre-tokenizer that removes text (white space splitters, a split
// whose matches are removed).
func preTokenizer(c *component) (byteLevel bool, err error) {
	if c == nil {
		return false, nil
	}
	switch c.Type {
	case "ByteLevel":
		return true, nil
	case "Metaspace", "Digits", "UnicodeScripts":
		return false, nil
	case "Split", "Punctuation":
		if c.Behavior == "Removed" {
			return false, fmt.Errorf("%w: pre-tokenizer %s removes its matches", ErrNoBound, c.Type)
		}
		return false, nil
	case "Sequence":
		for _, p := range c.Pretokenizers {
			bl, err := preTokenizer(p)
			if err != nil {
				return false, err
			}
			byteLevel = byteLevel || bl
		}
		return byteLevel, nil
	}
	return false, fmt.Errorf("%w: pre-tokenizer %s may remove text", ErrNoBound, c.Type)
}

// longestEntry is the longest vocabulary entry in text bytes.
func longestEntry(tj tokenizerJSON, byteLevel bool) (int, error) {
	m := tj.Model
	size := func(s string) int {
		if byteLevel {
			return utf8.RuneCountInString(s)
		}
		return len(s)
	}
	longest := 0
	switch m.Type {
	case "BPE", "":
		if m.UnkToken != nil && m.FuseUnk && !m.ByteFallback {
			return 0, fmt.Errorf("%w: BPE fuses unknown text into one token", ErrNoBound)
		}
		var vocab map[string]json.RawMessage
		if err := json.Unmarshal(m.Vocab, &vocab); err != nil {
			return 0, fmt.Errorf("tokenizer.json: model.vocab: %w", err)
		}
		for s := range vocab {
			longest = max(longest, size(s))
		}
	case "Unigram":
		if !m.ByteFallback {
			return 0, fmt.Errorf("%w: Unigram fuses unknown text into one token", ErrNoBound)
		}
		var vocab [][2]json.RawMessage
		if err := json.Unmarshal(m.Vocab, &vocab); err != nil {
			return 0, fmt.Errorf("tokenizer.json: model.vocab: %w", err)
		}
		for _, e := range vocab {
			var s string
			if json.Unmarshal(e[0], &s) == nil {
				longest = max(longest, size(s))
			}
		}
	default:
		return 0, fmt.Errorf("%w: model %s", ErrNoBound, m.Type)
	}
	if longest == 0 {
		return 0, fmt.Errorf("tokenizer.json: an empty vocabulary")
	}
	return longest, nil
}
