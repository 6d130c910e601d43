// Package otlphttpclient makes core's otlp_http exporter into a plain
// client: no queue and no retries of its own, so that each call is one
// synchronous HTTP export whose outcome is the destination's answer. The
// exporters that wrap it (mlx_otlp_http, opik) put the exporter helper's
// queue and retries, from their own configuration, around it.
package otlphttpclient

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.opentelemetry.io/otel/metric/noop"
)

var otlphttpType = component.MustNewType("otlp_http")

// prepare returns cfg without queue and retries, and the settings of a
// client that belongs to the exporter of set.
func prepare(set exporter.Settings, cfg otlphttpexporter.Config) (exporter.Settings, *otlphttpexporter.Config) {
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	cfg.RetryConfig.Enabled = false
	// The factory insists on its own type; the name says whose client it is.
	set.ID = component.NewIDWithName(otlphttpType, strings.ReplaceAll(set.ID.String(), "/", "_"))
	// The client's own exporter telemetry would count every item twice
	// under the wrapping exporter's id; the helper around it reports them.
	set.MeterProvider = noop.NewMeterProvider()
	return set, &cfg
}

// Logs is a logs client.
func Logs(ctx context.Context, set exporter.Settings, cfg otlphttpexporter.Config) (exporter.Logs, error) {
	cs, cc := prepare(set, cfg)
	c, err := otlphttpexporter.NewFactory().CreateLogs(ctx, cs, cc)
	if err != nil {
		return nil, fmt.Errorf("otlp_http client: %w", err)
	}
	return c, nil
}

// Traces is a traces client.
func Traces(ctx context.Context, set exporter.Settings, cfg otlphttpexporter.Config) (exporter.Traces, error) {
	cs, cc := prepare(set, cfg)
	c, err := otlphttpexporter.NewFactory().CreateTraces(ctx, cs, cc)
	if err != nil {
		return nil, fmt.Errorf("otlp_http client: %w", err)
	}
	return c, nil
}
