// Package loghealthreceiver emits the health series of the log pipeline
// (mlx_log_tailer_* of the original mlx_server_log_tailer.py, served on
// :9106 by a prometheus exporter). The numbers are counted by the pipeline's
// own components (internal/loghealth); this receiver only reads them, and
// the size of the followed file.
package loghealthreceiver

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/scraper"
	"go.opentelemetry.io/collector/scraper/scraperhelper"

	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet"
	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet/fleetmetrics"
	"github.com/mlx-otelcol/mlx-otelcol/internal/loghealth"
)

var componentType = component.MustNewType("mlx_log_health")

// NewFactory returns the factory of the mlx_log_health receiver.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(componentType, createDefaultConfig,
		receiver.WithMetrics(createMetrics, component.StabilityLevelAlpha))
}

func createDefaultConfig() component.Config {
	cc := scraperhelper.NewDefaultControllerConfig()
	cc.CollectionInterval = 5 * time.Second
	cc.InitialDelay = 0
	return &Config{ControllerConfig: cc, HealthKey: loghealth.DefaultKey}
}

func createMetrics(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Metrics) (receiver.Metrics, error) {
	c := cfg.(*Config)
	r := newReporter(c)
	// The role works while its classification processor runs
	// (mlx_log_tailer_up).
	role := fleetmetrics.New(set, c.Agent, fleet.Settings{Role: fleet.RoleLogPipeline}, next,
		func() bool { return r.stats.Snapshot().Up })
	sc, err := scraper.NewMetrics(r.scrape)
	if err != nil {
		return nil, err
	}
	rcv, err := scraperhelper.NewMetricsController(&c.ControllerConfig, set, role.Consumer(),
		scraperhelper.AddMetricsScraper(componentType, sc))
	if err != nil {
		return nil, err
	}
	return role.Wrap(rcv), nil
}
