package logclassifyprocessor

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Config of the mlx_log_classify processor.
type Config struct {
	// Project is the value of mlx.log.project (the original's --project, the
	// Opik project name).
	Project string `mapstructure:"project"`
	// Source is the value of mlx.log.source.
	Source string `mapstructure:"source"`
	// IncludeHTTP keeps the access log; by default its lines are counted and
	// dropped (reason http_filter), as the original tailer did.
	IncludeHTTP bool `mapstructure:"include_http"`
	// Timezone is the zone of the engine's timestamps, which Python writes in
	// local time without a zone: an IANA name, "Local" or "UTC".
	Timezone string `mapstructure:"timezone"`
	// RateLimit drops what is over a rate (reason rate_limit). Off by default.
	RateLimit RateLimitConfig `mapstructure:"rate_limit"`
	// HealthKey names the pipeline whose health series (mlx_log_health) count
	// this processor's lines and drops.
	HealthKey string `mapstructure:"health_key"`
}

// RateLimitConfig is a token bucket over the records kept.
type RateLimitConfig struct {
	// LinesPerSecond is the average rate let through; 0 turns the limit off.
	LinesPerSecond float64 `mapstructure:"lines_per_second"`
	// Burst is how many records may pass at once; 0 means one second's worth.
	Burst int `mapstructure:"burst"`
}

func (r RateLimitConfig) enabled() bool { return r.LinesPerSecond > 0 }

func (r RateLimitConfig) burst() int {
	if r.Burst > 0 {
		return r.Burst
	}
	return max(1, int(math.Ceil(r.LinesPerSecond)))
}

// Validate checks the configuration; the collector calls it at startup.
func (c *Config) Validate() error {
	var errs []error
	if c.HealthKey == "" {
		errs = append(errs, errors.New("health_key: must not be empty"))
	}
	if _, err := time.LoadLocation(c.Timezone); err != nil || c.Timezone == "" {
		errs = append(errs, fmt.Errorf("timezone: %q is not a time zone (an IANA name such as Europe/Paris, Local or UTC)", c.Timezone))
	}
	if c.RateLimit.LinesPerSecond < 0 || math.IsNaN(c.RateLimit.LinesPerSecond) || math.IsInf(c.RateLimit.LinesPerSecond, 0) {
		errs = append(errs, fmt.Errorf("rate_limit.lines_per_second: must be 0 (off) or positive, got %v", c.RateLimit.LinesPerSecond))
	}
	if c.RateLimit.Burst < 0 {
		errs = append(errs, fmt.Errorf("rate_limit.burst: must not be negative, got %d", c.RateLimit.Burst))
	}
	return errors.Join(errs...)
}
