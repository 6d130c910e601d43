// Package proxyreceiver is the mlx_proxy receiver: it feeds the spans and
// the access log of the mlx_proxy extension (the OpenAI-compatible front
// door) into the collector's traces and logs pipelines, so that YAML
// decides where they go (Jaeger, Opik, a JSONL file, any OTLP sink). The
// extension makes them; this package only turns its plain records into
// pdata. There is no loopback OTLP hop: the proxy hands them over in
// memory, from a bounded buffer that drops (and counts) rather than wait.
package proxyreceiver

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"
)

var componentType = component.MustNewType("mlx_proxy")

// NewFactory returns the factory of the mlx_proxy receiver.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(componentType, createDefaultConfig,
		receiver.WithTraces(createTraces, component.StabilityLevelAlpha),
		receiver.WithLogs(createLogs, component.StabilityLevelAlpha))
}

func createDefaultConfig() component.Config {
	// The extension of the same type, unnamed: `mlx_proxy` in both lists.
	return &Config{Extension: component.NewID(componentType), Records: RecordsAccess}
}

func createTraces(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Traces) (receiver.Traces, error) {
	return newTracesReceiver(cfg.(*Config), set, next)
}

func createLogs(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Logs) (receiver.Logs, error) {
	return newLogsReceiver(cfg.(*Config), set, next)
}
