// Package hwreceiver is the hardware receiver of mlx-otelcol (type mlx_hw):
// the series of the original mlx_hw_telemetry.py, read on Apple Silicon
// from powermetrics, vm_stat, sysctl, ioreg, netstat and ps, and on Linux
// inference nodes from /proc and /sys through gopsutil and from nvidia-smi.
// documentation.md lists every series and where it comes from.
package hwreceiver

import (
	"context"
	"os"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/scraper"
	"go.opentelemetry.io/collector/scraper/scraperhelper"

	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet"
	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet/fleetmetrics"
)

var componentType = component.MustNewType("mlx_hw")

// NewFactory returns the factory of the mlx_hw receiver.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(componentType, createDefaultConfig,
		receiver.WithMetrics(createMetrics, component.StabilityLevelAlpha))
}

// Default component patterns. mlx_lm.server runs as `python -m
// mlx_lm.server` or as the `mlx_lm.server` console script; the original
// matched the substring "mlx_lm.server" and summed every match.
const (
	defaultWorkerComponent = "mlx_lm_server"
	defaultWorkerPattern   = `mlx_lm[. ]server`
	defaultSelfComponent   = "mlx_otelcol"
)

func createDefaultConfig() component.Config {
	cc := scraperhelper.NewDefaultControllerConfig()
	cc.CollectionInterval = 10 * time.Second
	cc.InitialDelay = 0
	return &Config{
		ControllerConfig: cc,
		SlowInterval:     15 * time.Second,
		CommandTimeout:   3 * time.Second,
		Powermetrics:     PowermetricsConfig{Enabled: true, Sudo: os.Geteuid() != 0},
		NvidiaSMI:        ToggleConfig{Enabled: true},
		Temperatures:     ToggleConfig{Enabled: true},
		Processes:        map[string]string{defaultWorkerComponent: defaultWorkerPattern},
		WorkerComponent:  defaultWorkerComponent,
		SelfComponent:    defaultSelfComponent,
		DiskPath:         "/",
	}
}

func createMetrics(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Metrics) (receiver.Metrics, error) {
	c := cfg.(*Config)
	s := newHWScraper(c, set.Logger)
	role := fleetmetrics.New(set, c.Agent, fleet.Settings{Role: fleet.RoleHardware, Node: c.Node}, next, s.readable.Load)
	s.agent = role.Agent
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
