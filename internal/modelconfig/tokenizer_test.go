package modelconfig

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseTokenizer(t *testing.T) {
	for _, c := range []struct {
		name, json string
		maxBytes   int
		forms      []string
		noBound    bool
	}{
		{"byte-level BPE counts characters", `{"added_tokens": [{"content": "<|im_start|>"}], "normalizer": {"type": "NFC"},
			"pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Split", "behavior": "Isolated"}, {"type": "ByteLevel"}]},
			"model": {"type": "BPE", "vocab": {"a": 0, "ĠĠĠĠĠĠĠĠĠĠĠĠĠĠĠĠ": 1}, "merges": []}}`, 16, []string{"NFC"}, false},
		{"an added token longer than the vocabulary", `{"added_tokens": [{"content": "<|a_very_long_special_token|>"}],
			"pre_tokenizer": {"type": "ByteLevel"}, "model": {"type": "BPE", "vocab": {"ab": 0}}}`, 29, nil, false},
		{"SentencePiece BPE counts UTF-8 bytes", `{"normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
			"pre_tokenizer": null, "model": {"type": "BPE", "vocab": {"▁the": 0, "<0x0A>": 1}, "byte_fallback": true, "fuse_unk": true, "unk_token": "<unk>"}}`, 6, nil, false},
		{"at least a character", `{"model": {"type": "BPE", "vocab": {"a": 0}}}`, 4, nil, false},
		{"Unigram with byte fallback", `{"pre_tokenizer": {"type": "Metaspace"}, "model": {"type": "Unigram", "vocab": [["▁hello", -1.0], ["x", -2.0]], "byte_fallback": true}}`, 8, nil, false},
		{"Unigram fuses unknown text", `{"model": {"type": "Unigram", "vocab": [["a", -1.0]]}}`, 0, nil, true},
		{"BPE fusing unknown text", `{"model": {"type": "BPE", "vocab": {"a": 0}, "unk_token": "<unk>", "fuse_unk": true}}`, 0, nil, true},
		{"a normalizer that removes text", `{"normalizer": {"type": "BertNormalizer"}, "model": {"type": "BPE", "vocab": {"a": 0}}}`, 0, nil, true},
		{"a Replace that shortens", `{"normalizer": {"type": "Replace", "pattern": {"String": "  "}, "content": " "}, "model": {"type": "BPE", "vocab": {"a": 0}}}`, 0, nil, true},
		{"a pre-tokenizer that removes white space", `{"pre_tokenizer": {"type": "WhitespaceSplit"}, "model": {"type": "BPE", "vocab": {"a": 0}}}`, 0, nil, true},
		{"a split that removes its matches", `{"pre_tokenizer": {"type": "Split", "behavior": "Removed"}, "model": {"type": "BPE", "vocab": {"a": 0}}}`, 0, nil, true},
		{"word level", `{"model": {"type": "WordLevel", "vocab": {"a": 0}}}`, 0, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			tok, err := ParseTokenizer([]byte(c.json))
			if c.noBound {
				require.Error(t, err)
				assert.True(t, errors.Is(err, ErrNoBound), err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.maxBytes, tok.MaxTokenBytes)
			assert.Equal(t, c.forms, tok.Normalizers)
		})
	}
	_, err := ParseTokenizer([]byte(`{"model": {"type": "BPE", "vocab": {}}}`))
	assert.Error(t, err, "an empty vocabulary")
	_, err = ParseTokenizer([]byte(`not json`))
	assert.Error(t, err)
}

func TestLoadTokenizerBesideConfig(t *testing.T) {
	dir := t.TempDir()
	_, err := LoadTokenizer(dir)
	require.Error(t, err, "no tokenizer.json")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tokenizer.json"), []byte(`{"pre_tokenizer": {"type": "ByteLevel"}, "model": {"type": "BPE", "vocab": {"abcdefgh": 0}}}`), 0o600))
	tok, err := LoadTokenizer(dir)
	require.NoError(t, err)
	assert.Equal(t, 8, tok.MaxTokenBytes)
}
