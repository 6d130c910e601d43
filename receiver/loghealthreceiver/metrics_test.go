package loghealthreceiver

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet"
	"github.com/mlx-otelcol/mlx-otelcol/internal/loghealth"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/doccheck"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/fleettest"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/loghealthtest"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/metrictest"
)

func busyStats(t *testing.T) *loghealth.Stats {
	s := loghealth.For(loghealthtest.Key(t))
	s.ProcessorStarted()
	s.AddClassified(map[loghealth.LineKey]uint64{{Severity: "info", Category: "cache"}: 40, {Severity: "info", Category: "http"}: 10, {Severity: "error", Category: "gpu"}: 1},
		map[string]uint64{loghealth.ReasonHTTPFilter: 10})
	s.AddShipped("mlx_jsonl", map[string]uint64{"info": 40, "error": 1})
	s.AddShipped("mlx_otlp_http", map[string]uint64{"info": 30})
	s.AddDropped(loghealth.ReasonQueueFull, "mlx_otlp_http", 11)
	s.AddErrors(3)
	s.SetQueue("mlx_otlp_http", func() (int64, bool) { return 7, true })
	s.SetQueue("mlx_jsonl", func() (int64, bool) { return 0, true })
	return s
}

func TestEmittedMetricsAreThoseDocumented(t *testing.T) {
	documented, err := doccheck.MetadataNames("metadata.yaml")
	require.NoError(t, err)
	md := fleettest.AddRole(buildMetrics(busyStats(t).Snapshot(), 0, time.Now()), fleet.RoleLogPipeline)
	assert.Equal(t, documented, metrictest.Names(md))
	assert.NoError(t, doccheck.CheckMetrics("metadata.yaml", md), "types, help texts and labels are metadata.yaml's")
}

func TestSeriesOfABusyPipeline(t *testing.T) {
	p := metrictest.Points(t, buildMetrics(busyStats(t).Snapshot(), 1234, time.Now()))
	for key, want := range map[string]float64{
		"mlx_log_tailer_up": 1,
		"mlx_log_tailer_lines_total{category=cache,severity=info}":           40,
		"mlx_log_tailer_lines_total{category=http,severity=info}":            10,
		"mlx_log_tailer_lines_total{category=gpu,severity=error}":            1,
		"mlx_log_tailer_shipped_total{severity=info,sink=mlx_jsonl}":         40,
		"mlx_log_tailer_shipped_total{severity=error,sink=mlx_jsonl}":        1,
		"mlx_log_tailer_shipped_total{severity=warning,sink=mlx_jsonl}":      0,
		"mlx_log_tailer_shipped_total{severity=info,sink=mlx_otlp_http}":     30,
		"mlx_log_tailer_dropped_total{reason=http_filter,sink=}":             10,
		"mlx_log_tailer_dropped_total{reason=rate_limit,sink=}":              0,
		"mlx_log_tailer_dropped_total{reason=queue_full,sink=mlx_otlp_http}": 11,
		"mlx_log_tailer_dropped_total{reason=queue_full,sink=mlx_jsonl}":     0,
		"mlx_log_tailer_dropped_total{reason=export_failed,sink=mlx_jsonl}":  0,
		"mlx_log_tailer_errors_total":                                        3,
		"mlx_log_tailer_file_bytes":                                          1234,
		"mlx_log_tailer_queue_depth{sink=mlx_otlp_http}":                     7,
		"mlx_log_tailer_queue_depth{sink=mlx_jsonl}":                         0,
	} {
		got, ok := p[key]
		if assert.True(t, ok, "missing %s", key) {
			assert.Equal(t, want, got, key)
		}
	}
	assert.Len(t, p, 1+3+2*5+3+2*2+1+1+2, "no other series")
}

func TestAnIdlePipelineIsDown(t *testing.T) {
	p := metrictest.Points(t, buildMetrics(loghealth.For(loghealthtest.Key(t)).Snapshot(), 0, time.Now()))
	assert.Equal(t, 0.0, metrictest.Value(t, p, "mlx_log_tailer_up"))
	assert.Equal(t, 0.0, metrictest.Value(t, p, "mlx_log_tailer_dropped_total{reason=http_filter,sink=}"))
}

func TestReceiverEmitsTheFileSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	require.NoError(t, os.WriteFile(path, make([]byte, 4321), 0o600))
	cfg := createDefaultConfig().(*Config)
	cfg.FilePath, cfg.HealthKey = path, loghealthtest.Key(t)
	cfg.CollectionInterval = 10 * time.Millisecond
	require.NoError(t, cfg.Validate())
	sink := &consumertest.MetricsSink{}
	r, err := NewFactory().CreateMetrics(context.Background(), receivertest.NewNopSettings(componentType), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	require.Eventually(t, func() bool { return len(sink.AllMetrics()) > 0 }, 5*time.Second, 5*time.Millisecond)
	require.NoError(t, r.Shutdown(context.Background()))
	p := metrictest.Points(t, sink.AllMetrics()[0], metrictest.Without("node", fleet.NodeName("")))
	assert.Equal(t, 4321.0, p["mlx_log_tailer_file_bytes"])
	assert.Equal(t, 0.0, metrictest.Value(t, p, "mlx_agent_restarts_total{role=logpipeline}"), "the role's first start")
}

func TestConfigValidate(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, componenttest.CheckConfigStruct(cfg))
	assert.ErrorContains(t, cfg.Validate(), "file_path")
	cfg.FilePath, cfg.HealthKey = "/x", ""
	assert.ErrorContains(t, cfg.Validate(), "health_key")
}
