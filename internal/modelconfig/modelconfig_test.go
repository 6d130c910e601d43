package modelconfig

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseQwen3(t *testing.T) {
	b, err := os.ReadFile("testdata/qwen3-4b-4bit.json")
	require.NoError(t, err)
	info, err := Parse(b)
	require.NoError(t, err)
	assert.Equal(t, Info{
		ModelType: "qwen3", Architecture: "Qwen3ForCausalLM", Dtype: "bfloat16",
		Layers: 36, KVLayers: 36, AttentionHeads: 32, KVHeads: 8, HeadDim: 128, HiddenSize: 2560,
		VocabSize: 151936, IntermediateSize: 9728, MaxContext: 40960, QuantBits: 4, QuantGroupSize: 64,
		Optional: map[string]int{"tie_word_embeddings": 1},
	}, info)
	// 36 layers × (K and V) × 8 heads × 128 × 2 bytes
	assert.Equal(t, int64(147456), info.KVBytesPerToken(2))
}

func TestParseHeadDimFromHiddenSize(t *testing.T) {
	b, err := os.ReadFile("testdata/llama-no-headdim.json")
	require.NoError(t, err)
	info, err := Parse(b)
	require.NoError(t, err)
	assert.Equal(t, 128, info.HeadDim)
	assert.Equal(t, 32, info.KVHeads, "no num_key_value_heads: one KV head per attention head")
	assert.Equal(t, int64(32*2*32*128*2), info.KVBytesPerToken(2))
}

func TestParseHybridTextConfig(t *testing.T) {
	b, err := os.ReadFile("testdata/hybrid-text-config.json")
	require.NoError(t, err)
	info, err := Parse(b)
	require.NoError(t, err)
	assert.Equal(t, "qwen3_5", info.ModelType)
	assert.Equal(t, 8, info.Layers)
	assert.Equal(t, 2, info.KVLayers, "only full-attention layers keep a KV cache")
	assert.Equal(t, 8, info.QuantBits)
	assert.Equal(t, "bfloat16", info.Dtype)
	assert.Equal(t, int64(2*2*4*256*2), info.KVBytesPerToken(2))
}

func TestParseErrors(t *testing.T) {
	_, err := Parse([]byte("{"))
	assert.Error(t, err)
	_, err = Parse([]byte(`{"num_hidden_layers": "x"}`))
	assert.Error(t, err)
	_, err = Parse([]byte(`{"model_type": "x"}`))
	assert.ErrorContains(t, err, "num_hidden_layers and num_attention_heads are required")
}

func TestLocateInHubCache(t *testing.T) {
	hub := t.TempDir()
	repo := filepath.Join(hub, "models--mlx-community--Qwen3-4B-4bit")
	snap := filepath.Join(repo, "snapshots", "abc123")
	require.NoError(t, os.MkdirAll(snap, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "refs"), 0o755))
	b, _ := os.ReadFile("testdata/qwen3-4b-4bit.json")
	require.NoError(t, os.WriteFile(filepath.Join(snap, "config.json"), b, 0o644))

	// Without refs/main: the only snapshot.
	info, path, err := Load("mlx-community/Qwen3-4B-4bit", hub)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(snap, "config.json"), path)
	assert.Equal(t, 36, info.Layers)

	// refs/main wins over a newer snapshot.
	other := filepath.Join(repo, "snapshots", "def456")
	require.NoError(t, os.MkdirAll(other, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(other, "config.json"), b, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "refs", "main"), []byte("abc123\n"), 0o644))
	_, path, err = Load("mlx-community/Qwen3-4B-4bit", hub)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(snap, "config.json"), path)

	// A directory and a file path work too.
	_, path, err = Load(snap, "")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(snap, "config.json"), path)

	_, _, err = Load("mlx-community/Missing", hub)
	assert.ErrorContains(t, err, "not in the Hugging Face cache")
	_, _, err = Load("not a repo", hub)
	assert.ErrorContains(t, err, "neither a path nor a Hugging Face repo id")
}

// A Qwen3.5-style hybrid config (the shape of the seeds' model; the
// numbers are illustrative): the seven facts the original read besides the
// usual ones, from text_config, with a boolean as 1.
func TestParseQwen35LinearAttentionFacts(t *testing.T) {
	b, err := os.ReadFile("testdata/qwen3.5-4b-hybrid.json")
	require.NoError(t, err)
	info, err := Parse(b)
	require.NoError(t, err)
	assert.Equal(t, map[string]int{
		"linear_key_heads": 16, "linear_value_heads": 32, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
		"linear_conv_kernel_dim": 4, "mtp_layers": 1, "tie_word_embeddings": 1,
	}, info.Optional)
	assert.Equal(t, 8, info.KVLayers, "every fourth of 32 layers is full attention")
	assert.Len(t, OptionalAttrs(), 7)
}

// A model without them has none: no zeros claiming a linear-attention
// layer of width 0.
func TestOptionalFactsAbsentWhenNotGiven(t *testing.T) {
	info, err := Parse([]byte(`{"num_hidden_layers": 2, "num_attention_heads": 2, "tie_word_embeddings": false}`))
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"tie_word_embeddings": 0}, info.Optional)
}
