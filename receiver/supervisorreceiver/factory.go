// Package supervisorreceiver runs mlx_lm.server (or watches one started
// elsewhere), restarts it when it crashes, says why it crashed, and emits the
// serving-health series of the original mlx_server_supervisor.py.
package supervisorreceiver

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
)

var componentType = component.MustNewType("mlx_supervisor")

// NewFactory returns the factory of the mlx_supervisor receiver.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(componentType, createDefaultConfig,
		receiver.WithMetrics(createMetrics, component.StabilityLevelAlpha))
}

func createDefaultConfig() component.Config {
	cc := scraperhelper.NewDefaultControllerConfig()
	cc.CollectionInterval = 5 * time.Second
	cc.InitialDelay = 0
	return &Config{
		ControllerConfig: cc,
		Endpoint:         "http://127.0.0.1:8081",
		Log:              LogConfig{MaxSizeMiB: 100, MaxBackups: 3},
		HealthCheck: HealthCheckConfig{
			Probe:           ProbeCompletion,
			Interval:        10 * time.Second,
			StartupInterval: time.Second,
			Timeout:         10 * time.Second,
			HangAfter:       30 * time.Second,
			BusyLimit:       10 * time.Minute,
			ProgressFrom:    component.MustNewID("mlx_proxy"),
		},
		Restart: RestartConfig{
			Enabled:        true,
			InitialBackoff: 3 * time.Second,
			MaxBackoff:     30 * time.Second,
			ResetAfter:     2 * time.Minute,
		},
		StartupTimeout:      20 * time.Minute,
		ShutdownGracePeriod: 10 * time.Second,
	}
}

func createMetrics(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Metrics) (receiver.Metrics, error) {
	c := cfg.(*Config)
	s := newSupervisor(c, set.Logger)
	// The role works while its supervision runs: the batches come from
	// it. Whether the engine is ready is mlx_server_ready, the role's
	// degraded state (internal/fleet).
	role := fleetmetrics.New(set, c.Agent, fleet.Settings{Role: fleet.RoleSupervisor, Model: c.modelName()}, next, nil)
	sc, err := scraper.NewMetrics(s.scrape, scraper.WithStart(s.start), scraper.WithShutdown(s.shutdown))
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
