package preflight

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func modelsConf(proxy map[string]any, command ...any) map[string]any {
	return map[string]any{
		"receivers":  map[string]any{"mlx_supervisor": map[string]any{"command": command}},
		"extensions": map[string]any{"mlx_proxy": proxy},
		"service": map[string]any{
			"extensions": []any{"mlx_proxy"},
			"pipelines":  map[string]any{"metrics": map[string]any{"receivers": []any{"mlx_supervisor"}, "exporters": []any{"debug"}}},
		},
	}
}

// The proxy's model and the engine's --model apart: the collector does not
// start, and says which two.
func TestTheProxysModelIsTheEngines(t *testing.T) {
	engine := []any{"mlx_lm.server", "--model", "mlx-community/Qwen3-4B-4bit", "--port", "8081"}
	errs := checkModels(modelsConf(map[string]any{"model": "mlx-community/Qwen3-8B-4bit"}, engine...))
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), `"mlx-community/Qwen3-8B-4bit"`)
	assert.Contains(t, errs[0].Error(), `--model "mlx-community/Qwen3-4B-4bit"`)

	for _, ok := range []map[string]any{
		{"model": "mlx-community/Qwen3-4B-4bit"},
		{"model": "x", "served_models": []any{"x", "mlx-community/Qwen3-4B-4bit"}},
		{"model": "x", "served_models": []any{"*"}},
		{},
	} {
		assert.Empty(t, checkModels(modelsConf(ok, engine...)), "%v", ok)
	}
	assert.Empty(t, checkModels(modelsConf(map[string]any{"model": "x"}, "mlx_lm.server", "--port", "8081")), "no --model: nothing to compare")
}
