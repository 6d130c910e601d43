// Package opikexporter is the opik exporter: it sends spans to Opik's OTLP
// endpoint and writes the proxy's scores as Opik feedback scores, so that
// the proxy itself knows nothing of Opik.
//
// Opik maps an OTel trace id to a UUIDv7 of its own that nothing else can
// compute, so scores could not find their trace. This exporter stamps the
// override attribute opik.trace_id on the spans it sends, to the UUIDv7
// that internal/opikid derives from the trace id and the span's start; the
// scores name the same id.
//
// Spans go through core's otlp_http exporter (no queue, no retries of its
// own: one call is one HTTP export), inside the exporter helper's queue and
// retries. Scores have a queue and retries of their own, so a slow scores
// endpoint never holds up spans, and neither holds up the pipeline's other
// exporters: a full queue drops and counts.
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
		exporter.WithTraces(createTraces, component.StabilityLevelAlpha))
}

func createDefaultConfig() component.Config {
	return &Config{
		Project:        "mlx",
		Timeout:        10 * time.Second,
		FeedbackScores: FeedbackScoresConfig{Enabled: true, BatchSize: maxScoreBatch},
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
	spans, err := helper(set, client.ConsumeTraces, exporterhelper.WithStart(client.Start), exporterhelper.WithShutdown(client.Shutdown))
	if err != nil {
		return nil, err
	}
	e := &opikExporter{cfg: c, log: set.Logger, spans: spans}
	if c.FeedbackScores.Enabled {
		w := newScoreWriter(c)
		scoresSet := set
		scoresSet.ID = scoresID(set.ID)
		if e.scores, err = helper(scoresSet, w.push, exporterhelper.WithShutdown(w.shutdown)); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// scoresID names the scores half in the collector's telemetry (and its
// persistent queue): opik/feedback_scores for opik, opik/x_feedback_scores
// for opik/x.
func scoresID(id component.ID) component.ID {
	name := "feedback_scores"
	if id.Name() != "" {
		name = id.Name() + "_" + name
	}
	return component.NewIDWithName(id.Type(), name)
}
