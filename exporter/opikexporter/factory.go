// Package opikexporter is the opik exporter: it makes one Opik trace of
// each request the proxy served, with the proxy's scores on it, and sends
// the pipeline's other spans to Opik's OTLP endpoint, so that the proxy
// itself knows nothing of Opik.
//
// The proxy's spans are not sent by OTLP. Opik makes a trace only of a
// root span without the opik.trace_id override, under an id of its own
// derived from the OTel trace id in a way that differs between versions,
// and stores every attribute under its full key, unmatched ones in the
// trace's input (standins/opiktest). So the exporter creates each request
// the way Opik's own SDKs do: a trace and its LLM span through
// POST /v1/private/traces/batch and /v1/private/spans/batch, under ids it
// mints (internal/opikid), with the request as input, the answer as
// output and the proxy's figures in metadata; then the scores on that id
// (documentation.md, "What Opik shows"). A proxy span that continues a
// client's trace gets a trace of its own too.
//
// In a logs pipeline it writes evaluation events that name their Opik
// trace (opik.trace_id) as that trace's scores: feedback from people
// (evaluations.go).
//
// Each half has the exporter helper's queue and retries around one push:
// REST (traces, spans, scores in that order) and OTLP (core's otlp_http
// exporter as a plain client). Neither holds up the other, or the
// pipeline's other exporters: a full queue drops and counts.
package opikexporter

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mlx-otelcol/mlx-otelcol/internal/otlphttpclient"
)

var componentType = component.MustNewType("opik")

// NewFactory returns the factory of the opik exporter.
func NewFactory() exporter.Factory {
	return exporter.NewFactory(componentType, createDefaultConfig,
		exporter.WithTraces(createTraces, component.StabilityLevelAlpha),
		exporter.WithLogs(createLogs, component.StabilityLevelAlpha))
}

func createDefaultConfig() component.Config {
	return &Config{
		Project:        "mlx",
		Timeout:        10 * time.Second,
		BatchSize:      100,
		FeedbackScores: FeedbackScoresConfig{Enabled: true, BatchSize: maxScoreBatch},
		ReadBack:       ReadBackConfig{Every: 10, Delay: 5 * time.Second},
		QueueConfig:    configoptional.Some(exporterhelper.NewDefaultQueueConfig()),
		RetryConfig:    configretry.NewDefaultBackOffConfig(),
	}
}

func createTraces(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Traces, error) {
	c := cfg.(*Config)
	if c.Endpoint == "" {
		return &offExporter{log: set.Logger}, nil
	}

	clientCfg := *otlphttpexporter.NewFactory().CreateDefaultConfig().(*otlphttpexporter.Config)
	clientCfg.TracesEndpoint = c.tracesURL()
	clientCfg.ClientConfig.Timeout = c.Timeout
	for k, v := range c.headers() {
		clientCfg.ClientConfig.Headers.Set(k, configopaque.String(v))
	}
	client, err := otlphttpclient.Traces(ctx, set, clientCfg)
	if err != nil {
		return nil, err
	}
	// Each half: the helper's queue and retries around one push; the
	// client's HTTP timeout bounds each attempt.
	helper := func(set exporter.Settings, push func(context.Context, ptrace.Traces) error, opts ...exporterhelper.Option) (exporter.Traces, error) {
		return exporterhelper.NewTraces(ctx, set, cfg, push, append(opts,
			exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
			exporterhelper.WithTimeout(exporterhelper.TimeoutConfig{Timeout: 0}),
			exporterhelper.WithRetry(c.RetryConfig),
			exporterhelper.WithQueue(c.QueueConfig))...)
	}
	w, err := newWriter(c, set)
	if err != nil {
		return nil, err
	}
	rest, err := helper(set, w.push, exporterhelper.WithStart(w.start), exporterhelper.WithShutdown(w.shutdown))
	if err != nil {
		return nil, err
	}
	otlpSet := set
	otlpSet.ID = otlpID(set.ID)
	otlp, err := helper(otlpSet, client.ConsumeTraces, exporterhelper.WithStart(client.Start), exporterhelper.WithShutdown(client.Shutdown))
	if err != nil {
		return nil, err
	}
	return &opikExporter{cfg: c, log: set.Logger, rest: rest, otlp: otlp, w: w}, nil
}

// otlpID names the OTLP half in the collector's telemetry (and its
// persistent queue): opik/otlp for opik, opik/x_otlp for opik/x. The REST
// half, which carries the proxy's requests, keeps the exporter's own id.
func otlpID(id component.ID) component.ID {
	name := "otlp"
	if id.Name() != "" {
		name = id.Name() + "_" + name
	}
	return component.NewIDWithName(id.Type(), name)
}
