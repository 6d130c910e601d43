package supervisorreceiver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/configtest"
)

func TestDefaultConfigIsAttachModeAndValid(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	require.NoError(t, componenttest.CheckConfigStruct(cfg))
	assert.False(t, cfg.SpawnMode())
	assert.NoError(t, confmap.Validate(cfg))
	assert.Equal(t, "http://127.0.0.1:8081", cfg.Endpoint)
	assert.Equal(t, ProbeCompletion, cfg.HealthCheck.Probe)
	assert.Equal(t, 3*time.Second, cfg.Restart.InitialBackoff)
	assert.Equal(t, 30*time.Second, cfg.Restart.MaxBackoff)
}

func TestLoadSpawnConfig(t *testing.T) {
	cfg, err := configtest.Load[*Config](t, NewFactory(), "spawn")
	require.NoError(t, err)
	assert.True(t, cfg.SpawnMode())
	assert.Equal(t, []string{"mlx_lm.server", "--model", "mlx-community/Qwen3-4B-4bit", "--port", "8081"}, cfg.Command)
	assert.Equal(t, map[string]string{"MLX_RANK": "0"}, cfg.Env)
	assert.Equal(t, 2*time.Second, cfg.CollectionInterval)
	assert.Equal(t, LogConfig{Path: "/tmp/server.log", MaxSizeMiB: 10, MaxBackups: 2}, cfg.Log)
	assert.Equal(t, HealthCheckConfig{Probe: ProbeModels, Interval: 15 * time.Second, StartupInterval: 2 * time.Second, Timeout: 3 * time.Second, HangAfter: 20 * time.Second, BusyLimit: 10 * time.Minute,
		ProgressFrom: component.MustNewID("mlx_proxy")}, cfg.HealthCheck)
	assert.Equal(t, RestartConfig{Enabled: true, InitialBackoff: time.Second, MaxBackoff: 8 * time.Second, ResetAfter: time.Minute}, cfg.Restart)
	assert.Equal(t, "mlx-community/Qwen3-4B-4bit", cfg.modelName(), "model label comes from --model")
}

func TestInvalidConfigs(t *testing.T) {
	for name, want := range map[string]string{
		"no_log":      "log.path: must be set in spawn mode",
		"negative":    "health_check.interval: must be positive, got -1s",
		"bad_probe":   `health_check.probe: "ping" is not one of completion, models, health`,
		"unknown_key": "has invalid keys: comand",
		// lumberjack keeps every backup when told 0: a disk filler.
		"unlimited_backups": "log.max_backups: must be at least 1 (0 would keep every rotated file), got 0",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := configtest.Load[*Config](t, NewFactory(), name)
			require.Error(t, err)
			assert.Contains(t, err.Error(), want)
		})
	}
}

func TestValidateEndpoint(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.Endpoint = "127.0.0.1:8081"
	assert.ErrorContains(t, cfg.Validate(), `endpoint: "127.0.0.1:8081" is not an http(s) URL`)
	cfg.Endpoint = "http://127.0.0.1:8081"
	cfg.Restart.MaxBackoff = time.Second
	assert.ErrorContains(t, cfg.Validate(), "restart.max_backoff (1s) is below restart.initial_backoff (3s)")
}

func TestModelName(t *testing.T) {
	assert.Equal(t, "m", (&Config{Command: []string{"x", "--model=m"}}).modelName())
	assert.Equal(t, "cfg", (&Config{Model: "cfg", Command: []string{"x", "--model", "m"}}).modelName())
	assert.Equal(t, "default_model", (&Config{}).modelName())
}
