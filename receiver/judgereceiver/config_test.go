package judgereceiver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"

	"github.com/mlx-otelcol/mlx-otelcol/internal/judge"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/configtest"
)

func TestDefaultsAreTheOriginals(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	require.NoError(t, componenttest.CheckConfigStruct(cfg))
	require.NoError(t, confmap.Validate(cfg))
	assert.Equal(t, 10*time.Second, cfg.Interval, "--interval 10")
	assert.Equal(t, 20, cfg.Limit, "--limit 20")
	assert.Equal(t, judge.DefaultScores, cfg.Scores)
	assert.Equal(t, judge.DefaultPrompt, cfg.Prompt)
	assert.Equal(t, 120*time.Second, cfg.Judge.Timeout, "post_chat's timeout")
	assert.Equal(t, "default_model", cfg.Judge.Model, "the served model: no model swap")
	assert.Equal(t, "mlx", cfg.Opik.Project)
	assert.Equal(t, sourceJaeger, cfg.source(), "without Opik, Jaeger")
	cfg.Opik.Endpoint = "http://opik:5173/api"
	assert.Equal(t, sourceOpik, cfg.source())
}

func TestLoadFullConfig(t *testing.T) {
	cfg, err := configtest.Load[*Config](t, NewFactory(), "full")
	require.NoError(t, err)
	assert.Equal(t, 30*time.Second, cfg.Interval)
	assert.Equal(t, 5, cfg.Limit)
	assert.True(t, cfg.DryRun)
	assert.Equal(t, []string{"clarity"}, cfg.Scores)
	assert.Equal(t, int64(0), cfg.Judge.MaxInFlight)
	assert.Equal(t, "serving", cfg.Opik.Project)
	p, err := judge.Render(cfg.Prompt, "Q", "A")
	require.NoError(t, err)
	assert.Contains(t, p, "Question: [BEGIN question ")
	assert.Contains(t, p, "\n\"Q\"\n[END question ")
	assert.Contains(t, p, " Answer: [BEGIN answer ")
	assert.Contains(t, p, `Example: {"clarity": 0.5}`)
}

func TestInvalidConfigs(t *testing.T) {
	for name, wants := range map[string][]string{
		"opik_without_endpoint": {"source: opik needs opik.endpoint"},
		"bad_prompt":            {"prompt: unknown field {score}"},
		"score_not_in_prompt":   {`scores: "tone" does not appear (quoted) in the prompt`},
		"bad_values": {"interval: must be positive", "limit: must be 1 to 1000, got 0", `source: must be auto, opik or jaeger, got "elsewhere"`,
			`judge.endpoint: "judge-host:8080" is not an http(s) URL`, "judge.max_in_flight: must be 0 or more", "judge.model: must not be empty"},
		"unknown_key": {"has invalid keys: intervall"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := configtest.Load[*Config](t, NewFactory(), name)
			require.Error(t, err)
			for _, want := range wants {
				assert.Contains(t, err.Error(), want)
			}
		})
	}
}
