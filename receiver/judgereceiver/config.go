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

	// Prompt is the judge prompt, with {question} and {answer} (Python
	// str.format syntax: {{ and }} are braces). Default: the original's.
	Prompt string `mapstructure:"prompt"`
	// Scores are the score names the judge's reply must hold; each must
	// appear, quoted, in the prompt. Default: the original's three.
	Scores []string `mapstructure:"scores"`
	// Models are the model names the model label of mlx_judge_score keeps
	// (the proxy's served models); any other is "other". The name comes
	// from trace content, which any writer to the trace store can make up.
	// Empty: any name of at most 200 bytes, the first 8 seen.
	Models []string `mapstructure:"models"`
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
	if err := judge.CheckPrompt(c.Prompt, c.Scores); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
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
