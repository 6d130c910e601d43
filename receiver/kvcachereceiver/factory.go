// Package kvcachereceiver follows mlx_lm.server's log for the state of its
// prompt (KV) cache and combines it with the model's size per token and the
// engine's cache limits: the series of the original mlx_kv_cache_agent.py.
package kvcachereceiver

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

var componentType = component.MustNewType("mlx_kvcache")

// NewFactory returns the factory of the mlx_kvcache receiver.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(componentType, createDefaultConfig,
		receiver.WithMetrics(createMetrics, component.StabilityLevelAlpha))
}

// Defaults that are also mlx_lm's.
const defaultPromptCacheSize = 10

func createDefaultConfig() component.Config {
	cc := scraperhelper.NewDefaultControllerConfig()
	cc.CollectionInterval = 5 * time.Second
	cc.InitialDelay = 0
	return &Config{
		ControllerConfig:   cc,
		InitialReadBackMiB: 8,
		PromptCacheSize:    defaultPromptCacheSize,
	}
}

func createMetrics(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Metrics) (receiver.Metrics, error) {
	c := cfg.(*Config)
	s := newKVScraper(c, set.Logger)
	role := fleetmetrics.New(set, c.Agent, fleet.Settings{Role: fleet.RoleKVCache, Model: c.Model}, next, s.following)
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
