package hwreceiver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/configtest"
)

func TestDefaultConfig(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	require.NoError(t, componenttest.CheckConfigStruct(cfg))
	require.NoError(t, confmap.Validate(cfg))
	assert.Equal(t, 10*time.Second, cfg.CollectionInterval)
	assert.Equal(t, 15*time.Second, cfg.SlowInterval)
	assert.Equal(t, 3*time.Second, cfg.CommandTimeout)
	assert.True(t, cfg.Powermetrics.Enabled)
	assert.Equal(t, map[string]string{"mlx_lm_server": `mlx_lm[. ]server`}, cfg.Processes)
	assert.Equal(t, "mlx_lm_server", cfg.WorkerComponent)
	assert.Equal(t, "mlx_otelcol", cfg.SelfComponent)
	assert.Equal(t, "/", cfg.DiskPath)
	assert.Empty(t, cfg.Node, "empty: the host name, resolved at start")
	assert.Equal(t, 2*15*time.Second+4*time.Second, cfg.staleAfter())
}

func TestLoadConfig(t *testing.T) {
	cfg, err := configtest.Load[*Config](t, NewFactory(), "custom")
	require.NoError(t, err)
	assert.Equal(t, "rank0", cfg.Node)
	assert.Equal(t, 5*time.Second, cfg.CollectionInterval)
	assert.Equal(t, 30*time.Second, cfg.SlowInterval)
	assert.Equal(t, 2*time.Second, cfg.CommandTimeout)
	assert.Equal(t, PowermetricsConfig{Enabled: true, Sudo: false}, cfg.Powermetrics)
	assert.False(t, cfg.NvidiaSMI.Enabled)
	assert.False(t, cfg.Temperatures.Enabled)
	assert.Equal(t, []string{"en1", "en2"}, cfg.RingInterfaces)
	assert.Equal(t, map[string]string{"mlx_lm_server": `mlx_lm[. ]server`, "mlx_launch": `mlx\.launch`}, cfg.Processes)
	assert.Equal(t, "collector", cfg.SelfComponent)
	assert.Equal(t, "/System/Volumes/Data", cfg.DiskPath)
	assert.Equal(t, []string{"collector", "mlx_launch", "mlx_lm_server"}, newProcMatcher(cfg, 1).names())

	cfg, err = configtest.Load[*Config](t, NewFactory(), "defaults")
	require.NoError(t, err)
	assert.Equal(t, createDefaultConfig(), cfg)
}

// Components configured are added to the default one: a map from the
// configuration is merged into the default map, key by key.
func TestConfiguredComponentsAddToTheDefault(t *testing.T) {
	cfg, err := configtest.Load[*Config](t, NewFactory(), "extra_component")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"mlx_lm_server": `mlx_lm[. ]server`, "vllm": "vllm serve"}, cfg.Processes)
}

func TestInvalidConfigs(t *testing.T) {
	for name, want := range map[string]string{
		"bad_regex":        "processes.broken: error parsing regexp",
		"timeout_too_long": "command_timeout (2s) must be below collection_interval (2s)",
		"unknown_worker":   `worker_component: "vllm" is not a key of processes`,
		"self_clash":       "processes.mlx_otelcol: the name is taken by self_component",
		"unknown_key":      "has invalid keys: ring_interface",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := configtest.Load[*Config](t, NewFactory(), name)
			require.Error(t, err)
			assert.Contains(t, err.Error(), want)
		})
	}
}

func TestValidateDurationsAndPaths(t *testing.T) {
	cfg := testConfig()
	cfg.SlowInterval = 0
	cfg.CommandTimeout = -time.Second
	cfg.DiskPath = ""
	cfg.RingInterfaces = []string{""}
	cfg.Processes = map[string]string{"": "x", "empty": ""}
	err := cfg.Validate()
	require.Error(t, err)
	for _, want := range []string{
		"slow_interval: must be positive, got 0s",
		"command_timeout: must be positive, got -1s",
		"disk_path: must be set",
		"ring_interfaces: empty interface name",
		"processes: empty component name",
		"processes.empty: empty pattern",
	} {
		assert.Contains(t, err.Error(), want)
	}
}
