package judgereceiver

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/scraper/scraperhelper"

	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet"
	"github.com/mlx-otelcol/mlx-otelcol/internal/judge"
)

// Config of the mlx_judge receiver. The knobs are the original
// opik_evaluator.py's flags: --interval, --limit, --dry-run, --judge-url,
// --model, --opik-base, --project.
type Config struct {
	// ControllerConfig is how often the mlx_judge_* metrics are emitted
	// (collection_interval), not how often traces are judged (interval).
	scraperhelper.ControllerConfig `mapstructure:",squash"`

	// Interval is the time between passes (10 s).
	Interval time.Duration `mapstructure:"interval"`
	// Limit is how many of the newest traces a pass reads, and the most it
	// judges (20).
	Limit int `mapstructure:"limit"`
	// DryRun judges and counts, but writes no score to Opik and emits no
	// evaluation event.
	DryRun bool `mapstructure:"dry_run"`
	// Source is where traces are read: opik, jaeger, or auto (Opik when
	// opik.endpoint is set, else Jaeger).
	Source string `mapstructure:"source"`

	Judge  JudgeConfig  `mapstructure:"judge"`
	Opik   OpikConfig   `mapstructure:"opik"`
	Jaeger JaegerConfig `mapstructure:"jaeger"`

	// Rubrics are the scores the judge gives, each a name and what it
	// measures (the prompt's line about it). Default: the original's
	// three, correctness, helpfulness and hallucination_free.
	Rubrics []judge.Rubric `mapstructure:"rubrics"`
	// Prompt is the judge prompt, with {question} and {answer} (Python
	// str.format syntax: {{ and }} are braces), which must name every
	// rubric, quoted. Empty: built from the rubrics (for the default ones,
	// the original's prompt).
	Prompt string `mapstructure:"prompt"`
	// Scores, when set, replace the rubrics by bare names (the key from
	// before rubrics; with a prompt of one's own).
	Scores []string `mapstructure:"scores"`

	// SamplingRate is the fraction of the traces that pass the filters
	// that are judged (Opik's online evaluation sampling_rate), chosen per
	// trace: the same trace is always in or out (1).
	SamplingRate float64 `mapstructure:"sampling_rate"`
	// Filters are which traces are judged.
	Filters FiltersConfig `mapstructure:"filters"`
	// MaxPerMinute caps the judgements in any minute; a trace past it is
	// counted rate_limited and left, not queued (30; 0: no cap).
	MaxPerMinute int `mapstructure:"max_per_minute"`
	// Models are the model names the model label of mlx_judge_score keeps
	// (the proxy's served models); any other is "other". The name comes
	// from trace content, which any writer to the trace store can make up.
	// Empty: any name of at most 200 bytes, the first 8 seen.
	Models []string `mapstructure:"models"`
	// Agent is where the role keeps its start counts (internal/fleet).
	Agent fleet.Config `mapstructure:"agent"`
}

// FiltersConfig is which traces are judged (judge.Filter).
type FiltersConfig struct {
	// Models are the request models judged; empty: any.
	Models []string `mapstructure:"models"`
	// Origins are the mlx.origin values judged (user, judge, probe, bench,
	// or "*" for any); a trace without the attribute is a user's ([user]).
	Origins []string `mapstructure:"origins"`
	// MinAnswerLength: answers shorter, in characters, are not judged (0).
	MinAnswerLength int `mapstructure:"min_answer_length"`
}

// JudgeConfig is the model that judges.
type JudgeConfig struct {
	// Endpoint is the OpenAI API base of the judge. Empty: the proxy of
	// the extension below, so the cluster judges itself, as in the
	// original (http://127.0.0.1:8080/v1).
	Endpoint string `mapstructure:"endpoint"`
	// Extension is the mlx_proxy extension: the default endpoint, and the
	// in-flight count the loop backs off on.
	Extension component.ID `mapstructure:"extension"`
	// Model is the judge model. default_model (mlx_lm's name for its
	// --model) keeps the engine on the model it serves: naming another
	// would make mlx_lm load it.
	Model  string              `mapstructure:"model"`
	APIKey configopaque.String `mapstructure:"api_key"`
	// Timeout bounds one judgement (120 s, the original's).
	Timeout time.Duration `mapstructure:"timeout"`
	// MaxInFlight: a pass stops, before its next judgement, while the
	// proxy serves this many requests or more, so the judge never
	// competes with users for the engine (2; 0 never backs off).
	MaxInFlight int64 `mapstructure:"max_in_flight"`
	// Thinking is what the judge's requests say of a reasoning model's
	// thinking: off (chat_template_kwargs.enable_thinking: false, which
	// mlx_lm, vLLM and llama.cpp's server pass to the chat template),
	// unchanged (nothing: OpenAI's own API refuses unknown fields), or
	// auto: off through the proxy and at an endpoint on the local network
	// (judge.LocalEndpoint), unchanged at a hosted one.
	Thinking string `mapstructure:"thinking"`
	// MaxTokens is the room of a judgement (2048): a reasoning model that
	// thinks all the same must still reach its answer.
	MaxTokens int64 `mapstructure:"max_tokens"`
}

// The judge.thinking values.
const (
	thinkingAuto      = "auto"
	thinkingOff       = "off"
	thinkingUnchanged = "unchanged"
)

// thinkingOff says whether the judge's requests turn thinking off.
func (j *JudgeConfig) thinkingOff() bool {
	switch j.Thinking {
	case thinkingOff:
		return true
	case thinkingUnchanged:
		return false
	}
	return j.Endpoint == "" || judge.LocalEndpoint(j.Endpoint)
}

// OpikConfig is where traces are read from and scores written to.
type OpikConfig struct {
	// Endpoint is Opik's API base (http://opik-host:5173/api); empty: no
	// Opik.
	Endpoint  string              `mapstructure:"endpoint"`
	APIKey    configopaque.String `mapstructure:"api_key"`
	Workspace string              `mapstructure:"workspace"`
	Project   string              `mapstructure:"project"`
	Timeout   time.Duration       `mapstructure:"timeout"`
}

// JaegerConfig is the trace store read without Opik.
type JaegerConfig struct {
	// Endpoint is Jaeger's query address (http://127.0.0.1:16686).
	Endpoint string `mapstructure:"endpoint"`
	// Service is the proxy's service.name.
	Service string `mapstructure:"service"`
	// Lookback is how far back a pass looks (15 m).
	Lookback time.Duration `mapstructure:"lookback"`
	Timeout  time.Duration `mapstructure:"timeout"`
}

// maxLimit bounds a pass; Opik pages are at most this long too.
const maxLimit = 1000

// The sources.
const (
	sourceAuto   = "auto"
	sourceOpik   = "opik"
	sourceJaeger = "jaeger"
)

// Validate checks the configuration; the collector calls it at startup.
func (c *Config) Validate() error {
	var errs []error
	if c.Interval <= 0 {
		errs = append(errs, fmt.Errorf("interval: must be positive, got %s", c.Interval))
	}
	if c.Limit < 1 || c.Limit > maxLimit {
		errs = append(errs, fmt.Errorf("limit: must be 1 to %d, got %d", maxLimit, c.Limit))
	}
	switch c.Source {
	case sourceAuto, sourceJaeger:
	case sourceOpik:
		if c.Opik.Endpoint == "" {
			errs = append(errs, errors.New("source: opik needs opik.endpoint"))
		}
	default:
		errs = append(errs, fmt.Errorf("source: must be auto, opik or jaeger, got %q", c.Source))
	}
	if c.Judge.Endpoint != "" {
		errs = append(errs, checkURL("judge.endpoint", c.Judge.Endpoint))
	} else if c.Judge.Extension.Type().String() == "" {
		errs = append(errs, errors.New("judge: set endpoint, or extension (the mlx_proxy whose address judges)"))
	}
	if strings.TrimSpace(c.Judge.Model) == "" {
		errs = append(errs, errors.New("judge.model: must not be empty (default_model is the engine's own)"))
	}
	if c.Judge.MaxInFlight < 0 {
		errs = append(errs, fmt.Errorf("judge.max_in_flight: must be 0 or more, got %d", c.Judge.MaxInFlight))
	}
	for name, d := range map[string]time.Duration{"judge.timeout": c.Judge.Timeout, "opik.timeout": c.Opik.Timeout, "jaeger.timeout": c.Jaeger.Timeout, "jaeger.lookback": c.Jaeger.Lookback} {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s: must be positive, got %s", name, d))
		}
	}
	if c.Opik.Endpoint != "" {
		errs = append(errs, checkURL("opik.endpoint", c.Opik.Endpoint))
		if strings.TrimSpace(c.Opik.Project) == "" {
			errs = append(errs, errors.New("opik.project: must not be empty"))
		}
	}
	if c.source() == sourceJaeger {
		errs = append(errs, checkURL("jaeger.endpoint", c.Jaeger.Endpoint))
		if strings.TrimSpace(c.Jaeger.Service) == "" {
			errs = append(errs, errors.New("jaeger.service: must not be empty"))
		}
	}
	switch c.Judge.Thinking {
	case thinkingAuto, thinkingOff, thinkingUnchanged:
	default:
		errs = append(errs, fmt.Errorf("judge.thinking: must be auto, off or unchanged, got %q", c.Judge.Thinking))
	}
	if c.Judge.MaxTokens < 16 {
		errs = append(errs, fmt.Errorf("judge.max_tokens: must be at least 16, got %d", c.Judge.MaxTokens))
	}
	if !(c.SamplingRate > 0 && c.SamplingRate <= 1) {
		errs = append(errs, fmt.Errorf("sampling_rate: must be more than 0 and at most 1, got %v", c.SamplingRate))
	}
	if c.MaxPerMinute < 0 {
		errs = append(errs, fmt.Errorf("max_per_minute: must be 0 (no cap) or more, got %d", c.MaxPerMinute))
	}
	if c.Filters.MinAnswerLength < 0 {
		errs = append(errs, fmt.Errorf("filters.min_answer_length: must be 0 or more, got %d", c.Filters.MinAnswerLength))
	}
	for i, o := range c.Filters.Origins {
		if strings.TrimSpace(o) == "" {
			errs = append(errs, fmt.Errorf("filters.origins[%d]: must not be empty", i))
		}
	}
	if err := judge.CheckRubrics(c.rubrics()); err != nil {
		errs = append(errs, err)
	} else if err := judge.CheckPrompt(c.prompt(), c.scoreNames()); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// rubrics are the rubrics in use: scores, when set, as bare names.
func (c *Config) rubrics() []judge.Rubric {
	if len(c.Scores) == 0 {
		return c.Rubrics
	}
	out := make([]judge.Rubric, len(c.Scores))
	for i, s := range c.Scores {
		out[i] = judge.Rubric{Name: s}
	}
	return out
}

// scoreNames are the names of the rubrics in use.
func (c *Config) scoreNames() []string { return judge.Names(c.rubrics()) }

// prompt is the prompt in use: the configured one, else the rubrics'.
func (c *Config) prompt() string {
	if c.Prompt != "" {
		return c.Prompt
	}
	return judge.BuildPrompt(c.rubrics())
}

// filter is the loop's filter.
func (c *Config) filter() judge.Filter {
	return judge.Filter{Models: c.Filters.Models, Origins: c.Filters.Origins, MinAnswerChars: c.Filters.MinAnswerLength}
}

// source is the source in use.
func (c *Config) source() string {
	if c.Source == sourceAuto {
		if c.Opik.Endpoint != "" {
			return sourceOpik
		}
		return sourceJaeger
	}
	return c.Source
}

func checkURL(field, s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s: %q is not an http(s) URL", field, s)
	}
	return nil
}

// reason is the scores' reason, citing the judge model (and its host when
// it is not the proxy).
func (c *Config) reason() string { return judge.ReasonFor(c.Judge.Model, c.Judge.Endpoint) }
