package mlxsim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cachedRepo writes a Hugging Face cache entry whose main ref has files.
func cachedRepo(t *testing.T, hub, id string, files ...string) {
	t.Helper()
	dir := filepath.Join(hub, "models--"+strings.ReplaceAll(id, "/", "--"))
	snap := filepath.Join(dir, "snapshots", "0123abcd")
	require.NoError(t, os.MkdirAll(snap, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "refs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "refs", "main"), []byte("0123abcd"), 0o644))
	for _, f := range files {
		require.NoError(t, os.WriteFile(filepath.Join(snap, f), []byte("{}"), 0o644))
	}
}

// GET /v1/models lists the cache's complete models and --model, a local
// path as its resolved absolute path (mlx_lm v0.31.3 server.py,
// handle_models_request), not what was
// configured as served.
func TestModelsListTheCacheAndTheLocalPath(t *testing.T) {
	hub := t.TempDir()
	t.Setenv("HF_HUB_CACHE", hub)
	complete := []string{"config.json", "model.safetensors.index.json", "tokenizer_config.json"}
	cachedRepo(t, hub, "mlx-community/Qwen3-1.7B-4bit", complete...)
	cachedRepo(t, hub, "mlx-community/Qwen3-0.6B-4bit", "config.json", "tokenizer_config.json") // one safetensors file, no index
	cachedRepo(t, hub, "mlx-community/Qwen3-4B-4bit", complete...)

	ts := newTestServer(t, Options{})
	body := ts.get(t, "/v1/models").body
	assert.Contains(t, body, `"id": "mlx-community/Qwen3-1.7B-4bit"`)
	assert.NotContains(t, body, "Qwen3-0.6B", "a repo without model.safetensors.index.json is not listed")
	assert.Equal(t, 1, strings.Count(body, `"id": "mlx-community/Qwen3-4B-4bit"`), "--model once, also when cached")

	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "qwen")
	require.NoError(t, os.Symlink(real, link))
	t.Chdir(filepath.Dir(link))
	local := newTestServer(t, Options{Model: "./qwen"})
	resolved, err := filepath.EvalSymlinks(real)
	require.NoError(t, err)
	body = local.get(t, "/v1/models").body
	assert.Contains(t, body, `"id": "`+resolved+`"`, "a local --model as its resolved absolute path")
	assert.NotContains(t, body, `"./qwen"`)

	t.Setenv("HF_HUB_CACHE", filepath.Join(hub, "missing"))
	assert.Contains(t, newTestServer(t, Options{}).get(t, "/v1/models").body, `"data": [{"id": "mlx-community/Qwen3-4B-4bit"`)
}
