package modelconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The base_model line of a card's front matter, in the shapes the Hub
// writes it (mlx-community's conversions write the scalar form).
func TestBaseModelOfACard(t *testing.T) {
	for card, want := range map[string]string{
		"---\nlicense: apache-2.0\nbase_model: Qwen/Qwen3-4B\ntags:\n- mlx\n---\n# Qwen3-4B-4bit\n": "Qwen/Qwen3-4B",
		"---\nbase_model:\n- Qwen/Qwen3-8B\n- other/x\n---\n":                                       "Qwen/Qwen3-8B",
		"---\nbase_model:\n  - 'Qwen/Qwen3-8B'\n---\n":                                              "Qwen/Qwen3-8B",
		"---\nbase_model: [\"a/b\", \"c/d\"]\n---\n":                                                "a/b",
		"---\nbase_model: \"a/b\" # the original\n---\n":                                            "a/b",
		"---\nlicense: mit\n---\nbase_model: not/front-matter\n":                                    "",
		"# no front matter\nbase_model: x/y\n":                                                      "",
		"---\nbase_model:\nlicense: mit\n---\n":                                                     "",
	} {
		assert.Equal(t, want, baseModelOf(strings.NewReader(card)), card)
	}
}

// The card beside the config.json of a model directory and of a Hugging
// Face cache snapshot; none without a card.
func TestBaseModelBesideTheConfig(t *testing.T) {
	dir := t.TempDir()
	cfg, _ := os.ReadFile(filepath.Join("testdata", "qwen3-4b-4bit.json"))
	assert.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o600))
	assert.Equal(t, "", BaseModel(dir, ""))
	assert.NoError(t, os.WriteFile(filepath.Join(dir, "README.md"), []byte("---\nbase_model: Qwen/Qwen3-4B\n---\n"), 0o600))
	assert.Equal(t, "Qwen/Qwen3-4B", BaseModel(dir, ""))
	assert.Equal(t, "Qwen/Qwen3-4B", BaseModel(filepath.Join(dir, "config.json"), ""))

	hub := t.TempDir()
	snap := filepath.Join(hub, "models--mlx-community--Qwen3-4B-4bit", "snapshots", "abc")
	assert.NoError(t, os.MkdirAll(snap, 0o755))
	assert.NoError(t, os.WriteFile(filepath.Join(snap, "config.json"), cfg, 0o600))
	assert.NoError(t, os.WriteFile(filepath.Join(snap, "README.md"), []byte("---\nbase_model:\n- Qwen/Qwen3-4B\n---\n"), 0o600))
	assert.Equal(t, "Qwen/Qwen3-4B", BaseModel("mlx-community/Qwen3-4B-4bit", hub))
	assert.Equal(t, "", BaseModel("nobody/nothing", hub))
}

// ReadCard says what it found: no config.json, a config.json with no
// README.md beside it (what mlx_lm's own download leaves), or the card.
func TestReadCardSaysWhatItFound(t *testing.T) {
	assert.Equal(t, Card{}, ReadCard("nobody/nothing", t.TempDir()))
	dir := t.TempDir()
	cfg, _ := os.ReadFile(filepath.Join("testdata", "qwen3-4b-4bit.json"))
	assert.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o600))
	assert.Equal(t, Card{Config: filepath.Join(dir, "config.json")}, ReadCard(dir, ""))
	assert.NoError(t, os.WriteFile(filepath.Join(dir, "README.md"), []byte("# no front matter\n"), 0o600))
	assert.Equal(t, Card{Config: filepath.Join(dir, "config.json"), README: filepath.Join(dir, "README.md")}, ReadCard(dir, ""))
	assert.NoError(t, os.WriteFile(filepath.Join(dir, "README.md"), []byte("---\nbase_model: Qwen/Qwen3-4B\n---\n"), 0o600))
	assert.Equal(t, "Qwen/Qwen3-4B", ReadCard(dir, "").BaseModel)
}
