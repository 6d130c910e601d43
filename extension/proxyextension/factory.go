// Package proxyextension is the mlx_proxy extension: it runs the proxy of
// package proxy (the OpenAI-compatible front door to mlx_lm.server, with
// its own /metrics) inside the collector.
package proxyextension

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"

	"github.com/mlx-otelcol/mlx-otelcol/proxy"
)

var componentType = component.MustNewType("mlx_proxy")

// NewFactory returns the factory of the mlx_proxy extension.
func NewFactory() extension.Factory {
	return extension.NewFactory(componentType, createDefaultConfig, create, component.StabilityLevelAlpha)
}

func createDefaultConfig() component.Config {
	d := proxy.DefaultConfig()
	return &Config{
		Endpoint:           "0.0.0.0:8080",
		MetricsOnProxyPort: d.MetricsOnProxyPort,
		Upstream:           d.Upstream,
		Timeouts: TimeoutsConfig{
			ReadHeader:             d.ReadHeaderTimeout,
			UpstreamResponseHeader: d.UpstreamResponseHeaderTimeout,
			Idle:                   d.IdleTimeout,
			Shutdown:               d.ShutdownTimeout,
			BodyRead:               d.BodyReadTimeout,
			StreamStall:            d.StreamStallTimeout,
			ClientWrite:            d.ClientWriteTimeout,
		},
		MaxRequestBodyBytes:   d.MaxRequestBodyBytes,
		MaxConcurrentRequests: d.MaxConcurrentRequests,
		MaxModelLabelValues:   d.MaxModelLabelValues,
		MaxToolLabelValues:    d.MaxToolLabelValues,
		UpstreamProbeInterval: d.ProbeInterval,
		DefaultTemperature:    d.DefaultTemperature,
		Confidence: ConfidenceConfig{
			TopLogprobs:            d.TopLogprobs,
			DestreamFraction:       d.DestreamFraction,
			LowConfidenceThreshold: d.LowConfidenceThreshold,
			ScoringQueue:           d.ScoringQueue,
		},
		Heuristics: HeuristicsConfig{FlagThreshold: d.HallucinationFlagThreshold},
		Traces:     d.Traces,
		AccessLog:  AccessLogConfig{QueueSize: d.AccessLogQueue},
		Live:       d.Live,
	}
}

func create(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	return &proxyExtension{cfg: cfg.(*Config), logger: set.Logger}, nil
}
