package proxyreceiver

import (
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/component"
)

// Config of the mlx_proxy receiver.
type Config struct {
	// Extension is the mlx_proxy extension whose spans and access log
	// this receiver feeds into its pipelines.
	Extension component.ID `mapstructure:"extension"`
	// Records says what this receiver feeds into a logs pipeline: access
	// (the access log, the default), feedback (feedback from people) or
	// live (the live stream for VeloBenchmark). One instance each
	// (mlx_proxy, mlx_proxy/feedback, mlx_proxy/live).
	Records string `mapstructure:"records"`
}

// What a logs pipeline gets.
const (
	RecordsAccess   = "access"
	RecordsFeedback = "feedback"
	RecordsLive     = "live"
)

// Validate checks the configuration; the collector calls it at startup.
func (c *Config) Validate() error {
	var errs []error
	if c.Extension.Type().String() == "" {
		errs = append(errs, errors.New("extension: must name the mlx_proxy extension (e.g. mlx_proxy)"))
	}
	if c.Records != RecordsAccess && c.Records != RecordsFeedback && c.Records != RecordsLive {
		errs = append(errs, fmt.Errorf("records: %q is not %s, %s or %s", c.Records, RecordsAccess, RecordsFeedback, RecordsLive))
	}
	return errors.Join(errs...)
}
