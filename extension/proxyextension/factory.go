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
	return &Config{ProxySettings: ProxySettings(proxy.DefaultConfig()), Endpoint: "0.0.0.0:8080"}
}

func create(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	return &proxyExtension{cfg: cfg.(*Config), logger: set.Logger, version: set.BuildInfo.Version}, nil
}
