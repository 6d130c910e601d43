package otlphttpsinkexporter

import (
	"errors"

	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
)

// Config of the mlx_otlp_http exporter: every key of core's otlp_http
// exporter (endpoint, logs_endpoint, headers, compression, encoding, tls,
// timeout, sending_queue, retry_on_failure, ...), plus health_key.
type Config struct {
	otlphttpexporter.Config `mapstructure:",squash"`
	// HealthKey names the pipeline whose health series count this sink.
	HealthKey string `mapstructure:"health_key"`
}

// Validate checks what this exporter adds; the collector also runs the
// embedded otlp_http Validate.
func (c *Config) Validate() error {
	var errs []error
	if err := c.Config.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.HealthKey == "" {
		errs = append(errs, errors.New("health_key: must not be empty"))
	}
	return errors.Join(errs...)
}
