package otlphttpsinkexporter

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/mlx-otelcol/mlx-otelcol/internal/loghealth"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/loghealthtest"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/otlptest"
)

func newTestExporter(t *testing.T, edit func(*Config)) (exporter.Logs, *loghealth.Stats) {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	cfg.HealthKey = loghealthtest.Key(t)
	cfg.RetryConfig.InitialInterval, cfg.RetryConfig.MaxInterval = 10*time.Millisecond, 50*time.Millisecond
	edit(cfg)
	require.NoError(t, cfg.Validate())
	set := exportertest.NewNopSettings(componentType)
	set.ID = component.NewIDWithName(componentType, "opik")
	exp, err := NewFactory().CreateLogs(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(context.Background(), componenttest.NewNopHost()))
	return exp, loghealth.For(cfg.HealthKey)
}

func records(from, to int, severity string) plog.Logs {
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for i := from; i < to; i++ {
		lr := lrs.AppendEmpty()
		lr.Body().SetStr(fmt.Sprintf("line %d", i))
		lr.Attributes().PutStr(loghealth.AttrSeverity, severity)
	}
	return ld
}

const sinkName = "mlx_otlp_http/opik"

func TestShipsWithTheProjectHeader(t *testing.T) {
	d := otlptest.NewLogsDestination(t)
	exp, stats := newTestExporter(t, func(c *Config) {
		c.ClientConfig.Endpoint = d.URL
		c.ClientConfig.Headers.Set("projectName", configopaque.String("mlx"))
	})
	ctx := context.Background()
	require.NoError(t, exp.ConsumeLogs(ctx, records(0, 3, "error")))
	require.NoError(t, exp.ConsumeLogs(ctx, records(3, 5, "info")))
	require.NoError(t, exp.Shutdown(ctx))

	assert.Equal(t, []string{"line 0", "line 1", "line 2", "line 3", "line 4"}, d.Bodies())
	assert.Equal(t, []string{"mlx", "mlx"}, d.Projects())
	snap := stats.Snapshot()
	assert.Equal(t, map[loghealth.ShipKey]uint64{{Severity: "error", Sink: sinkName}: 3, {Severity: "info", Sink: sinkName}: 2}, snap.Shipped)
}

func TestDestinationDownForAWhileLosesNothing(t *testing.T) {
	d := otlptest.NewLogsDestination(t)
	d.SetStatus(http.StatusServiceUnavailable)
	exp, stats := newTestExporter(t, func(c *Config) { c.ClientConfig.Endpoint = d.URL })
	ctx := context.Background()
	for b := 0; b < 10; b++ {
		require.NoError(t, exp.ConsumeLogs(ctx, records(b*10, (b+1)*10, "info")))
	}
	assert.Eventually(t, func() bool { return stats.Snapshot().Errors >= 3 }, 5*time.Second, 5*time.Millisecond, "it keeps trying")
	snap := stats.Snapshot()
	assert.Equal(t, int64(100), snap.Queues[sinkName], "everything waits in the queue")
	assert.Empty(t, snap.Shipped)

	d.SetStatus(0)
	assert.Eventually(t, func() bool { return len(d.Bodies()) == 100 }, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, exp.Shutdown(ctx))
	got := d.Bodies()
	for i, b := range got {
		assert.Equal(t, fmt.Sprintf("line %d", i), b, "once each, in order")
	}
	snap = stats.Snapshot()
	assert.Equal(t, uint64(100), snap.Shipped[loghealth.ShipKey{Severity: "info", Sink: sinkName}])
	assert.Empty(t, snap.Dropped)
}

func TestPastTheQueueBoundIsDroppedAndCounted(t *testing.T) {
	d := otlptest.NewLogsDestination(t)
	d.SetStatus(http.StatusServiceUnavailable)
	exp, stats := newTestExporter(t, func(c *Config) {
		c.ClientConfig.Endpoint = d.URL
		c.QueueConfig.Get().QueueSize = 25
	})
	ctx := context.Background()
	for b := 0; b < 5; b++ {
		require.NoError(t, exp.ConsumeLogs(ctx, records(b*10, (b+1)*10, "info")))
	}
	d.SetStatus(0)
	assert.Eventually(t, func() bool { q, ok := stats.Snapshot().Queues[sinkName]; return ok && q == 0 }, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, exp.Shutdown(ctx))
	snap := stats.Snapshot()
	dropped := snap.Dropped[loghealth.DropKey{Reason: loghealth.ReasonQueueFull, Sink: sinkName}]
	assert.Equal(t, uint64(30), dropped, "batches of 10: two fit in 25")
	assert.Equal(t, 20, len(d.Bodies()))
	assert.Equal(t, uint64(20), snap.Shipped[loghealth.ShipKey{Severity: "info", Sink: sinkName}])
}

func TestRejectedBatchIsDroppedAndCounted(t *testing.T) {
	d := otlptest.NewLogsDestination(t)
	d.SetStatus(http.StatusBadRequest)
	exp, stats := newTestExporter(t, func(c *Config) { c.ClientConfig.Endpoint = d.URL })
	require.NoError(t, exp.ConsumeLogs(context.Background(), records(0, 4, "warning")))
	require.NoError(t, exp.Shutdown(context.Background()))
	snap := stats.Snapshot()
	assert.Equal(t, uint64(4), snap.Dropped[loghealth.DropKey{Reason: loghealth.ReasonExportFailed, Sink: sinkName}], "a 400 is not retried")
	assert.Equal(t, uint64(1), snap.Errors)
}

func TestConfigTakesTheOTLPHTTPKeys(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, componenttest.CheckConfigStruct(cfg))
	conf := confmap.NewFromStringMap(map[string]any{
		"endpoint":         "http://opik:8080/v1/private/otel",
		"headers":          map[string]any{"projectName": "mlx"},
		"compression":      "none",
		"health_key":       "engine",
		"sending_queue":    map[string]any{"queue_size": 500},
		"retry_on_failure": map[string]any{"max_elapsed_time": "0s"},
	})
	require.NoError(t, conf.Unmarshal(cfg))
	require.NoError(t, cfg.Validate())
	assert.Equal(t, "http://opik:8080/v1/private/otel", cfg.ClientConfig.Endpoint)
	assert.Equal(t, "engine", cfg.HealthKey)
	assert.Equal(t, int64(500), cfg.QueueConfig.Get().QueueSize)
	assert.Equal(t, 1, cfg.QueueConfig.Get().NumConsumers, "defaults kept")
	assert.Zero(t, cfg.RetryConfig.MaxElapsedTime)

	empty := createDefaultConfig().(*Config)
	assert.ErrorContains(t, empty.Validate(), "endpoint")
}
