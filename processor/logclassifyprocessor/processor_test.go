package logclassifyprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/mlx-otelcol/mlx-otelcol/internal/loghealth"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/loghealthtest"
)

func logsOf(bodies ...string) plog.Logs {
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for _, b := range bodies {
		lrs.AppendEmpty().Body().SetStr(b)
	}
	return ld
}

func records(sink *consumertest.LogsSink) []plog.LogRecord {
	var out []plog.LogRecord
	for _, ld := range sink.AllLogs() {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			sls := ld.ResourceLogs().At(i).ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				lrs := sls.At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					out = append(out, lrs.At(k))
				}
			}
		}
	}
	return out
}

// newTestProcessor runs a processor with its own health key.
func newTestProcessor(t *testing.T, edit func(*Config)) (processor.Logs, *consumertest.LogsSink, *loghealth.Stats) {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	cfg.Timezone = "UTC"
	cfg.HealthKey = loghealthtest.Key(t)
	if edit != nil {
		edit(cfg)
	}
	require.NoError(t, cfg.Validate())
	sink := &consumertest.LogsSink{}
	p, err := NewFactory().CreateLogs(context.Background(), processortest.NewNopSettings(componentType), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })
	return p, sink, loghealth.For(cfg.HealthKey)
}

func TestRecordsGetTheOriginalAttributes(t *testing.T) {
	p, sink, _ := newTestProcessor(t, func(c *Config) { c.Project = "proj" })
	require.NoError(t, p.ConsumeLogs(context.Background(), logsOf(
		"2026-08-22 16:59:44,123 - INFO - Prompt Cache: 4 sequences, 0.03 GB",
		"\x1b[33m[WARN] Node with rank 1 exited with code 1 \x1b[0m",
	)))
	got := records(sink)
	require.Len(t, got, 2)

	cache := got[0]
	assert.Equal(t, time.Date(2026, 8, 22, 16, 59, 44, 123e6, time.UTC), cache.Timestamp().AsTime())
	assert.Equal(t, plog.SeverityNumberInfo, cache.SeverityNumber())
	assert.Equal(t, "INFO", cache.SeverityText())
	assert.Equal(t, map[string]any{
		"mlx.log.severity": "info",
		"mlx.log.category": "cache",
		"mlx.log.source":   "mlx_lm.server",
		"mlx.log.project":  "proj",
	}, cache.Attributes().AsRaw())
	assert.Equal(t, "2026-08-22 16:59:44,123 - INFO - Prompt Cache: 4 sequences, 0.03 GB", cache.Body().Str(), "the body is the line")

	rank := got[1]
	assert.Equal(t, "[WARN] Node with rank 1 exited with code 1 ", rank.Body().Str(), "colour codes removed")
	assert.Equal(t, "WARNING", rank.SeverityText())
	assert.Zero(t, rank.Timestamp(), "no time in the line, none invented")
}

func TestAccessLogIsDroppedAndCounted(t *testing.T) {
	p, sink, stats := newTestProcessor(t, nil)
	require.NoError(t, p.ConsumeLogs(context.Background(), logsOf(
		`127.0.0.1 - - [22/Aug/2026 16:59:44] "POST /v1/chat/completions HTTP/1.1" 200 -`,
		"2026-08-22 16:59:44,123 - INFO - Prompt processing progress: 2048/8192",
		`127.0.0.1 - - [22/Aug/2026 16:59:45] "GET /health HTTP/1.1" 200 -`,
	)))
	got := records(sink)
	require.Len(t, got, 1)
	assert.Equal(t, "generation", got[0].Attributes().AsRaw()["mlx.log.category"])

	snap := stats.Snapshot()
	assert.Equal(t, uint64(2), snap.Lines[loghealth.LineKey{Severity: "info", Category: "http"}], "dropped lines are still lines")
	assert.Equal(t, uint64(1), snap.Lines[loghealth.LineKey{Severity: "info", Category: "generation"}])
	assert.Equal(t, uint64(2), snap.Dropped[loghealth.DropKey{Reason: loghealth.ReasonHTTPFilter}])
}

func TestIncludeHTTPKeepsTheAccessLog(t *testing.T) {
	p, sink, stats := newTestProcessor(t, func(c *Config) { c.IncludeHTTP = true })
	require.NoError(t, p.ConsumeLogs(context.Background(), logsOf(
		`127.0.0.1 - - [22/Aug/2026 16:59:44] "POST /v1/chat/completions?stream=1 HTTP/1.1" 404 -`,
	)))
	got := records(sink)
	require.Len(t, got, 1)
	assert.Equal(t, map[string]any{
		"mlx.log.severity":          "warning",
		"mlx.log.category":          "http",
		"mlx.log.source":            "mlx_lm.server",
		"mlx.log.project":           "mlx",
		"client.address":            "127.0.0.1",
		"http.request.method":       "POST",
		"url.path":                  "/v1/chat/completions",
		"url.query":                 "stream=1",
		"http.response.status_code": int64(404),
	}, got[0].Attributes().AsRaw())
	assert.Zero(t, stats.Snapshot().Dropped[loghealth.DropKey{Reason: loghealth.ReasonHTTPFilter}])
}

func TestTracebackCarriesItsException(t *testing.T) {
	p, sink, _ := newTestProcessor(t, nil)
	require.NoError(t, p.ConsumeLogs(context.Background(), logsOf(
		"Traceback (most recent call last):\n  File \"x.py\", line 1, in f\nValueError: temperature must be at least 0",
	)))
	got := records(sink)
	require.Len(t, got, 1)
	attrs := got[0].Attributes().AsRaw()
	assert.Equal(t, "ValueError", attrs["exception.type"])
	assert.Equal(t, "temperature must be at least 0", attrs["exception.message"])
	assert.Equal(t, "python", attrs["mlx.log.category"])
	assert.Equal(t, plog.SeverityNumberError, got[0].SeverityNumber())
}

func TestBatchWithNothingLeftGoesNoFurther(t *testing.T) {
	p, sink, stats := newTestProcessor(t, nil)
	require.NoError(t, p.ConsumeLogs(context.Background(), logsOf(`127.0.0.1 - - [22/Aug/2026 16:59:44] "GET /health HTTP/1.1" 200 -`, "  ")))
	assert.Empty(t, sink.AllLogs(), "no empty batch is sent on")
	assert.Equal(t, uint64(1), stats.Snapshot().Dropped[loghealth.DropKey{Reason: loghealth.ReasonEmpty}])
}

func TestRateLimitDropsAndCountsWhatIsOver(t *testing.T) {
	clock := time.Date(2026, 8, 22, 0, 0, 0, 0, time.UTC)
	cfg := createDefaultConfig().(*Config)
	cfg.Timezone, cfg.HealthKey = "UTC", loghealthtest.Key(t)
	cfg.RateLimit = RateLimitConfig{LinesPerSecond: 10, Burst: 5}
	c, err := newClassifier(cfg, func() time.Time { return clock })
	require.NoError(t, err)

	lines := make([]string, 20)
	for i := range lines {
		lines[i] = "2026-08-22 16:59:44,123 - INFO - Prompt processing progress: 1/2"
	}
	ld, err := c.processLogs(context.Background(), logsOf(lines...))
	require.NoError(t, err)
	assert.Equal(t, 5, ld.LogRecordCount(), "the burst passes")

	clock = clock.Add(time.Second) // refills 10, capped at the burst of 5
	ld, err = c.processLogs(context.Background(), logsOf(lines...))
	require.NoError(t, err)
	assert.Equal(t, 5, ld.LogRecordCount())

	clock = clock.Add(200 * time.Millisecond) // 2 tokens
	ld, err = c.processLogs(context.Background(), logsOf(lines...))
	require.NoError(t, err)
	assert.Equal(t, 2, ld.LogRecordCount())

	snap := loghealth.For(cfg.HealthKey).Snapshot()
	assert.Equal(t, uint64(15+15+18), snap.Dropped[loghealth.DropKey{Reason: loghealth.ReasonRateLimit}])
	assert.Equal(t, uint64(60), snap.Lines[loghealth.LineKey{Severity: "info", Category: "generation"}])
}

func TestUpWhileRunning(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.HealthKey = loghealthtest.Key(t)
	p, err := NewFactory().CreateLogs(context.Background(), processortest.NewNopSettings(componentType), cfg, consumertest.NewNop())
	require.NoError(t, err)
	stats := loghealth.For(cfg.HealthKey)
	assert.False(t, stats.Snapshot().Up)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	assert.True(t, stats.Snapshot().Up)
	require.NoError(t, p.Shutdown(context.Background()))
	assert.False(t, stats.Snapshot().Up)
}

func TestConfigValidate(t *testing.T) {
	good := createDefaultConfig().(*Config)
	require.NoError(t, good.Validate())
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Timezone = "Mars/Olympus" }, "timezone:"},
		{func(c *Config) { c.Timezone = "" }, "timezone:"},
		{func(c *Config) { c.HealthKey = "" }, "health_key:"},
		{func(c *Config) { c.RateLimit.LinesPerSecond = -1 }, "rate_limit.lines_per_second:"},
		{func(c *Config) { c.RateLimit.Burst = -1 }, "rate_limit.burst:"},
	} {
		c := *good
		tc.edit(&c)
		assert.ErrorContains(t, c.Validate(), tc.want)
	}
	assert.NoError(t, componenttest.CheckConfigStruct(good))
}
