// Package logclassifyprocessor classifies the lines of mlx_lm.server's log:
// it reads mlx_lm's logging format and the lines without it (access log,
// mlx.launch warnings, Metal and ring errors, tracebacks), sets each record's
// timestamp and severity and the mlx.log.* attributes of the original
// mlx_server_log_tailer.py, drops the access log unless asked to keep it,
// optionally rate-limits, and counts what it saw and dropped for the
// pipeline's health series.
package logclassifyprocessor

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/mlx-otelcol/mlx-otelcol/internal/loghealth"
)

var componentType = component.MustNewType("mlx_log_classify")

// NewFactory returns the factory of the mlx_log_classify processor.
func NewFactory() processor.Factory {
	return processor.NewFactory(componentType, createDefaultConfig,
		processor.WithLogs(createLogs, component.StabilityLevelAlpha))
}

func createDefaultConfig() component.Config {
	return &Config{
		Project:   "mlx",
		Source:    "mlx_lm.server",
		Timezone:  "Local",
		HealthKey: loghealth.DefaultKey,
	}
}

func createLogs(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Logs) (processor.Logs, error) {
	c, err := newClassifier(cfg.(*Config), time.Now)
	if err != nil {
		return nil, err
	}
	return processorhelper.NewLogs(ctx, set, cfg, next, c.processLogs,
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}),
		processorhelper.WithStart(c.start),
		processorhelper.WithShutdown(c.shutdown))
}
