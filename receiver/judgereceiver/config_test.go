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
	assert.Equal(t, judge.DefaultScores, cfg.scoreNames())
	assert.Equal(t, judge.DefaultPrompt, cfg.prompt(), "the default rubrics make the original's prompt")
	assert.Equal(t, 1.0, cfg.SamplingRate, "every trace")
	assert.Equal(t, []string{"user"}, cfg.Filters.Origins, "users' traces only")
	assert.Equal(t, 30, cfg.MaxPerMinute)
	assert.True(t, cfg.Judge.thinkingOff(), "the engine through the proxy: thinking off")
	cfg.Judge.Endpoint = "https://api.openai.com/v1"
	assert.False(t, cfg.Judge.thinkingOff(), "an endpoint of its own: no chat_template_kwargs, which OpenAI refuses")
	assert.Equal(t, "LLM-as-judge, judge model default_model at api.openai.com (0..1, higher is better)", cfg.reason())
	cfg.Judge.Endpoint = ""
	assert.Equal(t, "LLM-as-judge via the MLX cluster, judge model default_model (0..1, higher is better)", cfg.reason())
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
	assert.Equal(t, []string{"clarity"}, cfg.scoreNames())
	assert.Equal(t, int64(0), cfg.Judge.MaxInFlight)
	assert.Equal(t, "serving", cfg.Opik.Project)
	p, err := judge.Render(cfg.prompt(), "Q", "A")
	require.NoError(t, err)
	assert.Contains(t, p, "Question: [BEGIN question ")
	assert.Contains(t, p, "\n\"Q\"\n[END question ")
	assert.Contains(t, p, " Answer: [BEGIN answer ")
	assert.Contains(t, p, `Example: {"clarity": 0.5}`)
}

// A judge that is another model at an endpoint of its own, with its key,
// judging a sample of one model's users' traces, with rubrics of its own.
func TestLoadAnotherJudgeWithRubricsAndFilters(t *testing.T) {
	cfg, err := configtest.Load[*Config](t, NewFactory(), "hosted")
	require.NoError(t, err)
	assert.Equal(t, "sk-test", string(cfg.Judge.APIKey))
	assert.Equal(t, "gpt-judge", cfg.Judge.Model)
	assert.False(t, cfg.Judge.thinkingOff())
	assert.Equal(t, int64(4096), cfg.Judge.MaxTokens)
	assert.Equal(t, 0.25, cfg.SamplingRate)
	assert.Equal(t, 12, cfg.MaxPerMinute)
	assert.Equal(t, judge.Filter{Models: []string{"mlx-community/Qwen3-4B-4bit"}, Origins: []string{"user", "bench"}, MinAnswerChars: 20}, cfg.filter())
	assert.Equal(t, []string{"correctness", "tone"}, cfg.scoreNames())
	p, err := judge.Render(cfg.prompt(), "Q", "A")
	require.NoError(t, err)
	assert.Contains(t, p, "using two numbers between 0 and 1")
	assert.Contains(t, p, "- \"tone\": polite and plain\n")
	assert.Equal(t, "LLM-as-judge, judge model gpt-judge at judge.example.com (0..1, higher is better)", cfg.reason())
}

func TestInvalidConfigs(t *testing.T) {
	for name, wants := range map[string][]string{
		"opik_without_endpoint": {"source: opik needs opik.endpoint"},
		"bad_prompt":            {"prompt: unknown field {score}"},
		"score_not_in_prompt":   {`scores: "tone" does not appear (quoted) in the prompt`},
		"rubric_not_in_prompt":  {`scores: "helpfulness" does not appear (quoted) in the prompt`},
		"bad_values": {"interval: must be positive", "limit: must be 1 to 1000, got 0", `source: must be auto, opik or jaeger, got "elsewhere"`,
			`judge.endpoint: "judge-host:8080" is not an http(s) URL`, "judge.max_in_flight: must be 0 or more", "judge.model: must not be empty"},
		"unknown_key": {"has invalid keys: intervall"},
		"bad_selection": {"sampling_rate: must be more than 0 and at most 1, got 1.5", "max_per_minute: must be 0 (no cap) or more, got -1",
			"filters.min_answer_length: must be 0 or more, got -2", "filters.origins[0]: must not be empty",
			`judge.thinking: must be auto, off or unchanged, got "maybe"`, "judge.max_tokens: must be at least 16, got 4"},
		"bad_rubrics": {`rubrics[1].name: "has space" is not a name`, `rubrics[3].name: "tone" is named twice`},
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
