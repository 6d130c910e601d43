package kvcachereceiver

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/scraper/scraperhelper"

	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet"
)

// Config of the mlx_kvcache receiver.
type Config struct {
	scraperhelper.ControllerConfig `mapstructure:",squash"`

	// LogPath is the engine's log (its stderr), e.g. the supervisor's
	// log.path.
	LogPath string `mapstructure:"log_path"`
	// InitialReadBackMiB bounds how far back from the end of the log the
	// receiver looks for the latest cache state when it starts (and when it
	// has fallen further behind than this).
	InitialReadBackMiB int `mapstructure:"initial_read_back_mib"`

	// Model is the engine's --model: a config.json, a model directory or a
	// Hugging Face repo id. Empty: the model-derived series are not emitted.
	Model string `mapstructure:"model"`
	// HFHubCache is the Hugging Face hub cache to look a repo id up in;
	// empty means $HF_HUB_CACHE, else $HF_HOME/hub, else
	// ~/.cache/huggingface/hub.
	HFHubCache string `mapstructure:"hf_hub_cache"`

	// PromptCacheSize is the engine's --prompt-cache-size: the most
	// sequences its prompt cache keeps (mlx_lm's default is 10).
	PromptCacheSize int `mapstructure:"prompt_cache_size"`
	// PromptCacheBytes is the engine's --prompt-cache-bytes, written as
	// mlx_lm accepts it ("8G", "512MB", "4294967296"; decimal units).
	// Empty: no byte limit, as in mlx_lm.
	PromptCacheBytes string `mapstructure:"prompt_cache_bytes"`
	// Agent is where the role keeps its start counts (internal/fleet).
	Agent fleet.Config `mapstructure:"agent"`
}

// Validate checks the configuration; the collector calls it at startup and
// in `mlx-otelcol validate`.
func (c *Config) Validate() error {
	var errs []error
	if c.LogPath == "" {
		errs = append(errs, errors.New("log_path: must be set (the engine's log, e.g. the supervisor's log.path)"))
	}
	if c.InitialReadBackMiB <= 0 {
		errs = append(errs, fmt.Errorf("initial_read_back_mib: must be positive, got %d", c.InitialReadBackMiB))
	}
	if c.PromptCacheSize < 0 {
		errs = append(errs, fmt.Errorf("prompt_cache_size: must not be negative, got %d", c.PromptCacheSize))
	}
	if c.PromptCacheBytes != "" {
		if _, err := parseEngineSize(c.PromptCacheBytes); err != nil {
			errs = append(errs, fmt.Errorf("prompt_cache_bytes: %w", err))
		}
	}
	return errors.Join(errs...)
}

// maxBytes is the byte limit of the engine's prompt cache; ok is false when
// there is none.
func (c *Config) maxBytes() (n int64, ok bool) {
	if c.PromptCacheBytes == "" {
		return 0, false
	}
	n, err := parseEngineSize(c.PromptCacheBytes)
	return n, err == nil
}

func (c *Config) readBackBytes() int64 { return int64(c.InitialReadBackMiB) << 20 }

// engineSizeUnits are the suffixes mlx_lm's parse_size accepts (after
// upper-casing), in decimal units.
var engineSizeUnits = map[string]float64{"": 1, "M": 1e6, "MB": 1e6, "G": 1e9, "GB": 1e9}

// parseEngineSize reads a size the way mlx_lm's --prompt-cache-bytes does:
// digits and dots, then an optional M, MB, G or GB in any case, spaces
// around the unit allowed. What mlx_lm would refuse is refused here, so
// the two read the same flag the same way.
func parseEngineSize(s string) (int64, error) {
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	num, err := strconv.ParseFloat(s[:i], 64)
	unit, known := engineSizeUnits[strings.ToUpper(strings.TrimSpace(s[i:]))]
	if i == 0 || err != nil || !known {
		return 0, fmt.Errorf("%q is not a size mlx_lm accepts: a number with an optional M, MB, G or GB (decimal units)", s)
	}
	v := num * unit
	if v >= 1<<63 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return int64(v), nil
}
