package proxyreceiver

import (
	"errors"

	"go.opentelemetry.io/collector/component"
)

// Config of the mlx_proxy receiver.
type Config struct {
	// Extension is the mlx_proxy extension whose spans and access log
	// this receiver feeds into its pipelines.
	Extension component.ID `mapstructure:"extension"`
}

// Validate checks the configuration; the collector calls it at startup.
func (c *Config) Validate() error {
	if c.Extension.Type().String() == "" {
		return errors.New("extension: must name the mlx_proxy extension (e.g. mlx_proxy)")
	}
	return nil
}
