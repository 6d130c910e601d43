package fleet

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/mlx-otelcol/mlx-otelcol/internal/modelconfig"
)

// ModelPath is where the weights of model are on disk, as mlx_lm finds
// them (mlx_lm v0.31.3 utils.py, load's lookup: Path(path_or_hf_repo) when
// it exists, else huggingface_hub's snapshot_download into the hub cache):
// a model given as an existing
// path is that path, made absolute; a repo id (org/name) is its folder in
// the Hugging Face hub cache ($HF_HUB_CACHE, else $HF_HOME/hub, else
// ~/.cache/huggingface/hub), models--org--name, whether or not it has been
// downloaded yet. Empty for no model, and for a name that is neither (such
// as mlx_lm's default_model).
func ModelPath(model string) string {
	if model == "" {
		return ""
	}
	if _, err := os.Stat(model); err == nil {
		if abs, err := filepath.Abs(model); err == nil {
			return abs
		}
		return model
	}
	if strings.Count(model, "/") != 1 || strings.HasPrefix(model, "/") || strings.HasPrefix(model, ".") {
		return ""
	}
	return filepath.Join(modelconfig.DefaultHubCache(), "models--"+strings.ReplaceAll(model, "/", "--"))
}
