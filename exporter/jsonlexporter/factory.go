// Package jsonlexporter writes log records to a JSON-lines file with size
// rotation (lumberjack), behind the exporter helper's retry and sending queue
// (persistent with a storage extension), and counts what it really wrote for
// the log pipeline's health series. contrib's file exporter does not build
// at v0.165 here; this is the part of it the log pipeline needs.
package jsonlexporter

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/mlx-otelcol/mlx-otelcol/internal/loghealth"
)

var componentType = component.MustNewType("mlx_jsonl")

// NewFactory returns the factory of the mlx_jsonl exporter.
func NewFactory() exporter.Factory {
	return exporter.NewFactory(componentType, createDefaultConfig,
		exporter.WithLogs(createLogs, component.StabilityLevelAlpha))
}

func createDefaultConfig() component.Config {
	queue := exporterhelper.NewDefaultQueueConfig()
	queue.Sizer = exporterhelper.RequestSizerTypeItems // queue_size counts records
	queue.QueueSize = 100_000
	queue.NumConsumers = 1
	return &Config{
		Format:      FormatRecord,
		Rotation:    RotationConfig{MaxMegabytes: 50, MaxBackups: 5},
		QueueConfig: configoptional.Some(queue),
		RetryConfig: configretry.NewDefaultBackOffConfig(),
		HealthKey:   loghealth.DefaultKey,
	}
}

func createLogs(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Logs, error) {
	c := cfg.(*Config)
	w := newWriter(c)
	sink := loghealth.NewSink(loghealth.For(c.HealthKey), set.ID.String())
	set.TelemetrySettings = sink.Telemetry(set.TelemetrySettings)
	exp, err := exporterhelper.NewLogs(ctx, set, cfg, sink.Push(w.push),
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		exporterhelper.WithQueue(c.QueueConfig),
		exporterhelper.WithRetry(c.RetryConfig),
		exporterhelper.WithShutdown(w.shutdown))
	if err != nil {
		return nil, err
	}
	return sink.Wrap(exp), nil
}
