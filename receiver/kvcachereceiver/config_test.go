package kvcachereceiver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/configtest"
)

func TestDefaultsAreMlxLmsAndNeedALogPath(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	require.NoError(t, componenttest.CheckConfigStruct(cfg))
	assert.Equal(t, 10, cfg.PromptCacheSize, "mlx_lm's --prompt-cache-size default")
	assert.Empty(t, cfg.PromptCacheBytes, "no byte limit, as mlx_lm")
	assert.Equal(t, 5*time.Second, cfg.CollectionInterval)
	assert.Equal(t, int64(8<<20), cfg.readBackBytes())
	assert.ErrorContains(t, confmap.Validate(cfg), "log_path: must be set")
}

func TestLoadFullConfig(t *testing.T) {
	cfg, err := configtest.Load[*Config](t, NewFactory(), "full")
	require.NoError(t, err)
	assert.Equal(t, "/var/log/mlx/server.log", cfg.LogPath)
	assert.Equal(t, 10*time.Second, cfg.CollectionInterval)
	assert.Equal(t, int64(2<<20), cfg.readBackBytes())
	assert.Equal(t, "mlx-community/Qwen3-4B-4bit", cfg.Model)
	assert.Equal(t, "/models/hub", cfg.HFHubCache)
	assert.Equal(t, 4, cfg.PromptCacheSize)
	n, ok := cfg.maxBytes()
	assert.True(t, ok)
	assert.Equal(t, int64(8_000_000_000), n, "decimal units, as mlx_lm")
}

func TestInvalidConfigs(t *testing.T) {
	for name, want := range map[string]string{
		"no_log":      "log_path: must be set",
		"bad_bytes":   `prompt_cache_bytes: "8GiB" is not a size mlx_lm accepts`,
		"negative":    "prompt_cache_size: must not be negative, got -1",
		"unknown_key": "has invalid keys: prompt_cache_sise",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := configtest.Load[*Config](t, NewFactory(), name)
			require.Error(t, err)
			assert.Contains(t, err.Error(), want)
		})
	}
	_, err := configtest.Load[*Config](t, NewFactory(), "negative")
	assert.ErrorContains(t, err, "initial_read_back_mib: must be positive, got 0")
}

// The flag is read as mlx_lm's parse_size reads it.
func TestEngineSizes(t *testing.T) {
	for in, want := range map[string]int64{
		"8G": 8e9, "8g": 8e9, "8GB": 8e9, "512MB": 512e6, "512m": 512e6,
		"1.5G": 1.5e9, "4294967296": 4294967296, "8 GB": 8e9, "2G ": 2e9,
	} {
		got, err := parseEngineSize(in)
		if assert.NoError(t, err, in) {
			assert.Equal(t, want, got, in)
		}
	}
	for _, in := range []string{"", "G", " 8G", "8GiB", "8K", "8T", "1..5G", "-1G", "8 B", "1e3"} {
		_, err := parseEngineSize(in)
		assert.Error(t, err, in)
	}
}
