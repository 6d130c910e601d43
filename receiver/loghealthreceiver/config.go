package loghealthreceiver

import (
	"errors"

	"go.opentelemetry.io/collector/scraper/scraperhelper"

	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet"
)

// Config of the mlx_log_health receiver.
type Config struct {
	scraperhelper.ControllerConfig `mapstructure:",squash"`
	// HealthKey names the log pipeline to report on: the health_key of its
	// mlx_log_classify processor and sink exporters.
	HealthKey string `mapstructure:"health_key"`
	// FilePath is the followed log file, for mlx_log_tailer_file_bytes.
	FilePath string `mapstructure:"file_path"`
	// Agent is where the log pipeline role keeps its start counts
	// (internal/fleet).
	Agent fleet.Config `mapstructure:"agent"`
}

// Validate checks the configuration; the collector calls it at startup.
func (c *Config) Validate() error {
	var errs []error
	if c.HealthKey == "" {
		errs = append(errs, errors.New("health_key: must not be empty"))
	}
	if c.FilePath == "" {
		errs = append(errs, errors.New("file_path: must be set (the log file the pipeline follows)"))
	}
	return errors.Join(errs...)
}
