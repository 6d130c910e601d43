package mlxsim

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// What GET /v1/models lists (mlx_lm v0.31.3 server.py,
// handle_models_request). mlx_lm does not list what it serves: it scans the Hugging
// Face cache (huggingface_hub's scan_cache_dir) and lists every model repo
// whose "main" ref has config.json, model.safetensors.index.json and
// tokenizer_config.json, then adds --model only if it is a local path, as
// the resolved absolute path. The simulator scans the same cache (the
// directory huggingface_hub uses: HF_HUB_CACHE, else HF_HOME/hub, else
// ~/.cache/huggingface/hub) and counts a --model repo id as downloaded,
// since a real engine that is up has downloaded it. Options.ServedModels,
// when set, replaces all of this.

// listedModels are the ids GET /v1/models lists.
func (e *Engine) listedModels() []string {
	if len(e.opts.ServedModels) > 0 {
		return e.opts.ServedModels
	}
	ids := hfCachedModels(hfHubCache())
	if p, ok := localModelPath(e.opts.Model); ok {
		return append(ids, p)
	}
	if !slices.Contains(ids, e.opts.Model) {
		ids = append(ids, e.opts.Model)
	}
	return ids
}

// localModelPath is --model as mlx_lm lists it when it names a directory
// here: absolute, symbolic links resolved (Path.resolve()).
func localModelPath(model string) (string, bool) {
	if _, err := os.Stat(model); err != nil {
		return "", false
	}
	abs, err := filepath.Abs(model)
	if err != nil {
		return "", false
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	return abs, true
}

func hfHubCache() string {
	if d := os.Getenv("HF_HUB_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("HF_HOME"); d != "" {
		return filepath.Join(d, "hub")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".cache", "huggingface", "hub")
}

// hfCachedModels lists the cache's complete model repos, sorted (the real
// order is a frozenset's, i.e. arbitrary).
func hfCachedModels(hub string) []string {
	if hub == "" {
		return nil
	}
	entries, err := os.ReadDir(hub)
	if err != nil {
		return nil // no cache yet: an empty list
	}
	var ids []string
	for _, d := range entries {
		name, ok := strings.CutPrefix(d.Name(), "models--")
		if !ok || !d.IsDir() {
			continue
		}
		ref, err := os.ReadFile(filepath.Join(hub, d.Name(), "refs", "main"))
		if err != nil {
			continue
		}
		snap := filepath.Join(hub, d.Name(), "snapshots", strings.TrimSpace(string(ref)))
		complete := true
		for _, f := range []string{"config.json", "model.safetensors.index.json", "tokenizer_config.json"} {
			if _, err := os.Stat(filepath.Join(snap, f)); err != nil {
				complete = false
			}
		}
		if complete {
			ids = append(ids, strings.ReplaceAll(name, "--", "/"))
		}
	}
	slices.Sort(ids)
	return ids
}
