// Package otlphttpsinkexporter sends logs by OTLP/HTTP with core's otlp_http
// exporter and counts, for the log pipeline's health series, exactly what
// the destination accepted.
//
// A contrib or core exporter cannot be wrapped from the pipeline, and the
// collector's own telemetry (otelcol_exporter_sent_log_records) knows
// neither severities nor the telemetry level none. So this exporter builds
// an otlp_http exporter of its own with the same configuration but no queue
// and no retries, which makes each of its calls one synchronous HTTP export
// whose outcome is the destination's answer; and it puts the exporter
// helper's queue and retries, from that same configuration, around it.
package otlphttpsinkexporter

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"

	"github.com/mlx-otelcol/mlx-otelcol/internal/loghealth"
	"github.com/mlx-otelcol/mlx-otelcol/internal/otlphttpclient"
)

var componentType = component.MustNewType("mlx_otlp_http")

// NewFactory returns the factory of the mlx_otlp_http exporter.
func NewFactory() exporter.Factory {
	return exporter.NewFactory(componentType, createDefaultConfig,
		exporter.WithLogs(createLogs, component.StabilityLevelAlpha))
}

func createDefaultConfig() component.Config {
	base := *otlphttpexporter.NewFactory().CreateDefaultConfig().(*otlphttpexporter.Config)
	queue := exporterhelper.NewDefaultQueueConfig()
	queue.Sizer = exporterhelper.RequestSizerTypeItems // queue_size counts records
	queue.QueueSize = 100_000
	queue.NumConsumers = 1 // records reach the destination in order
	base.QueueConfig = configoptional.Some(queue)
	return &Config{Config: base, HealthKey: loghealth.DefaultKey}
}

func createLogs(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Logs, error) {
	c := cfg.(*Config)

	client, err := otlphttpclient.Logs(ctx, set, c.Config)
	if err != nil {
		return nil, err
	}

	sink := loghealth.NewSink(loghealth.For(c.HealthKey), set.ID.String())
	set.TelemetrySettings = sink.Telemetry(set.TelemetrySettings)
	exp, err := exporterhelper.NewLogs(ctx, set, cfg, sink.Push(client.ConsumeLogs),
		exporterhelper.WithStart(client.Start),
		exporterhelper.WithShutdown(client.Shutdown),
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		// The client's HTTP timeout bounds each attempt.
		exporterhelper.WithTimeout(exporterhelper.TimeoutConfig{Timeout: 0}),
		exporterhelper.WithRetry(c.RetryConfig),
		exporterhelper.WithQueue(c.QueueConfig))
	if err != nil {
		return nil, err
	}
	return sink.Wrap(exp), nil
}
