// Package liveexporter is the mlx_live exporter: it POSTs the proxy's live
// stream records (the mlx_proxy receiver with records: live) to
// VeloBenchmark's telemetry receiver as OTLP/HTTP-JSON.
//
// It is core's otlp_http exporter with encoding json, used as a plain
// client (internal/otlphttpclient), plus what that exporter cannot do: the
// emitter's rules for the endpoint (4318 when no port is given, https
// refused without a tls setting) and the count of what a POST lost in the
// proxy's mlx_live_records_dropped_total{reason="export_failed"}, logged at
// most once a minute. It has no queue and no retries: live records are
// worth nothing late, and a slow receiver fills the proxy's ring, whose
// overflow is dropped and counted there. The batch processor in front sizes
// and times the POSTs.
package liveexporter

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"

	"github.com/mlx-otelcol/mlx-otelcol/internal/otlphttpclient"
)

var componentType = component.MustNewType("mlx_live")

// NewFactory returns the factory of the mlx_live exporter.
func NewFactory() exporter.Factory {
	return exporter.NewFactory(componentType, createDefaultConfig,
		exporter.WithLogs(createLogs, component.StabilityLevelAlpha))
}

func createDefaultConfig() component.Config {
	return &Config{Timeout: 5 * time.Second, Extension: component.MustNewID("mlx_proxy")}
}

func createLogs(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Logs, error) {
	c := cfg.(*Config)
	logsURL, err := c.logsURL()
	if err != nil {
		return nil, err
	}
	clientCfg := *otlphttpexporter.NewFactory().CreateDefaultConfig().(*otlphttpexporter.Config)
	clientCfg.LogsEndpoint = logsURL
	clientCfg.Encoding = otlphttpexporter.EncodingJSON
	clientCfg.ClientConfig.Timeout = c.Timeout
	clientCfg.ClientConfig.TLS = c.TLS
	// VeloBenchmark's receiver reads the body as JSON whatever it is: send
	// it plain.
	clientCfg.ClientConfig.Compression = ""
	client, err := otlphttpclient.Logs(ctx, set, clientCfg)
	if err != nil {
		return nil, err
	}
	e := &liveExporter{cfg: c, client: client, log: set.Logger}
	return exporterhelper.NewLogs(ctx, set, cfg, e.push,
		exporterhelper.WithStart(e.start),
		exporterhelper.WithShutdown(client.Shutdown),
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		exporterhelper.WithTimeout(exporterhelper.TimeoutConfig{Timeout: 0}),
		exporterhelper.WithRetry(configretry.BackOffConfig{Enabled: false}),
		exporterhelper.WithQueue(configoptional.None[exporterhelper.QueueBatchConfig]()))
}
