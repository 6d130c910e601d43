package jsonlexporter

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/mlx-otelcol/mlx-otelcol/internal/loghealth"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/loghealthtest"
)

func newTestExporter(t *testing.T, edit func(*Config)) (exporter.Logs, *Config) {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	cfg.Path = filepath.Join(t.TempDir(), "logs", "engine.jsonl")
	cfg.HealthKey = loghealthtest.Key(t)
	if edit != nil {
		edit(cfg)
	}
	require.NoError(t, cfg.Validate())
	set := exportertest.NewNopSettings(componentType)
	set.ID = component.NewID(componentType) // the sink label is the id
	exp, err := NewFactory().CreateLogs(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(context.Background(), componenttest.NewNopHost()))
	return exp, cfg
}

// numbered makes records "<prefix> <i>" for i in [from, to).
func numbered(prefix string, from, to int) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "mlx-lm-server")
	lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
	for i := from; i < to; i++ {
		lr := lrs.AppendEmpty()
		lr.Body().SetStr(fmt.Sprintf("%s %d", prefix, i))
		lr.Attributes().PutStr(loghealth.AttrSeverity, "info")
		lr.SetSeverityNumber(plog.SeverityNumberInfo)
		lr.SetSeverityText("INFO")
		lr.SetObservedTimestamp(pcommon.NewTimestampFromTime(time.Unix(1_787_000_000, 0)))
	}
	return ld
}

// readLines returns the lines of the file and of its rotated copies, oldest
// file first.
func readLines(t *testing.T, path string) []string {
	t.Helper()
	dir, base := filepath.Dir(path), filepath.Base(path)
	ext := filepath.Ext(base)
	backups, err := filepath.Glob(filepath.Join(dir, strings.TrimSuffix(base, ext)+"-*"+ext))
	require.NoError(t, err)
	sort.Strings(backups) // lumberjack's time stamps sort by age
	var lines []string
	for _, f := range append(backups, path) {
		fh, err := os.Open(f)
		require.NoError(t, err)
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		require.NoError(t, sc.Err())
		fh.Close()
	}
	return lines
}

func bodies(t *testing.T, lines []string) []string {
	t.Helper()
	out := make([]string, len(lines))
	for i, l := range lines {
		var rec struct{ Body string }
		require.NoError(t, json.Unmarshal([]byte(l), &rec), l)
		out[i] = rec.Body
	}
	return out
}

func TestRecordsArriveInOrderAndAreCounted(t *testing.T) {
	exp, cfg := newTestExporter(t, nil)
	ctx := context.Background()
	for b := 0; b < 20; b++ {
		require.NoError(t, exp.ConsumeLogs(ctx, numbered("line", b*50, (b+1)*50)))
	}
	require.NoError(t, exp.Shutdown(ctx), "shutdown drains the queue")

	got := bodies(t, readLines(t, cfg.Path))
	require.Len(t, got, 1000)
	for i, b := range got {
		require.Equal(t, fmt.Sprintf("line %d", i), b)
	}
	snap := loghealth.For(cfg.HealthKey).Snapshot()
	assert.Equal(t, uint64(1000), snap.Shipped[loghealth.ShipKey{Severity: "info", Sink: "mlx_jsonl"}])
	assert.Zero(t, snap.Errors)
}

func TestRecordLineShape(t *testing.T) {
	exp, cfg := newTestExporter(t, nil)
	ld := numbered("2026-08-22 16:59:44,123 - INFO - \"quoted\"\tand\\", 0, 1)
	lr := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	lr.SetTimestamp(pcommon.NewTimestampFromTime(time.Date(2026, 8, 22, 16, 59, 44, 123e6, time.UTC)))
	lr.Attributes().PutInt("http.response.status_code", 404)
	require.NoError(t, exp.ConsumeLogs(context.Background(), ld))
	require.NoError(t, exp.Shutdown(context.Background()))

	lines := readLines(t, cfg.Path)
	require.Len(t, lines, 1)
	var rec map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &rec))
	assert.Equal(t, map[string]any{
		"timestamp":          "2026-08-22T16:59:44.123Z",
		"observed_timestamp": "2026-08-17T20:53:20Z",
		"severity_text":      "INFO",
		"severity_number":    9.0,
		"body":               "2026-08-22 16:59:44,123 - INFO - \"quoted\"\tand\\ 0",
		"attributes":         map[string]any{"mlx.log.severity": "info", "http.response.status_code": 404.0},
		"resource":           map[string]any{"service.name": "mlx-lm-server"},
	}, rec)
}

func TestOTLPJSONFormat(t *testing.T) {
	exp, cfg := newTestExporter(t, func(c *Config) { c.Format = FormatOTLPJSON })
	require.NoError(t, exp.ConsumeLogs(context.Background(), numbered("line", 0, 3)))
	require.NoError(t, exp.Shutdown(context.Background()))
	lines := readLines(t, cfg.Path)
	require.Len(t, lines, 1, "one line per batch")
	ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs([]byte(lines[0]))
	require.NoError(t, err)
	assert.Equal(t, 3, ld.LogRecordCount())
}

func TestRotationKeepsBatchesWholeAndBoundsBackups(t *testing.T) {
	exp, cfg := newTestExporter(t, func(c *Config) {
		c.Rotation.MaxMegabytes = 1
		c.Rotation.MaxBackups = 100
	})
	ctx := context.Background()
	pad := strings.Repeat("x", 900)
	for b := 0; b < 40; b++ { // about 4 MB in batches of 100 records
		require.NoError(t, exp.ConsumeLogs(ctx, numbered(pad, b*100, (b+1)*100)))
	}
	require.NoError(t, exp.Shutdown(ctx))

	backups, _ := filepath.Glob(filepath.Join(filepath.Dir(cfg.Path), "engine-*.jsonl"))
	assert.GreaterOrEqual(t, len(backups), 3, "rotated at 1 MB")
	got := bodies(t, readLines(t, cfg.Path)) // every line parses: none cut by a rotation
	require.Len(t, got, 4000)
	for i, b := range got {
		require.Equal(t, fmt.Sprintf("%s %d", pad, i), b)
	}
	for _, f := range append(backups, cfg.Path) {
		st, err := os.Stat(f)
		require.NoError(t, err)
		assert.LessOrEqual(t, st.Size(), int64(1<<20), f)
	}
}

func TestUnwritableFileIsCountedNotReturned(t *testing.T) {
	exp, cfg := newTestExporter(t, func(c *Config) {
		blocker := filepath.Join(t.TempDir(), "not-a-dir")
		require.NoError(t, os.WriteFile(blocker, nil, 0o600))
		c.Path = filepath.Join(blocker, "engine.jsonl")
		c.RetryConfig.Enabled = false
	})
	require.NoError(t, exp.ConsumeLogs(context.Background(), numbered("line", 0, 7)))
	require.NoError(t, exp.Shutdown(context.Background()))
	snap := loghealth.For(cfg.HealthKey).Snapshot()
	assert.Equal(t, uint64(7), snap.Dropped[loghealth.DropKey{Reason: loghealth.ReasonExportFailed, Sink: "mlx_jsonl"}])
	assert.Equal(t, uint64(1), snap.Errors)
	assert.Zero(t, snap.Shipped[loghealth.ShipKey{Severity: "info", Sink: "mlx_jsonl"}])
}

func TestConfigValidate(t *testing.T) {
	good := createDefaultConfig().(*Config)
	good.Path = "/tmp/x.jsonl"
	require.NoError(t, good.Validate())
	assert.NoError(t, componenttest.CheckConfigStruct(good))
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Path = "" }, "path: must be set"},
		{func(c *Config) { c.Format = "xml" }, "format:"},
		{func(c *Config) { c.Rotation.MaxMegabytes = 0 }, "rotation.max_megabytes"},
		{func(c *Config) { c.Rotation.MaxBackups = -1 }, "rotation.max_backups"},
		{func(c *Config) { c.QueueConfig.Get().NumConsumers = 4 }, "num_consumers: must be 1"},
		{func(c *Config) { c.HealthKey = "" }, "health_key"},
	} {
		c := createDefaultConfig().(*Config)
		c.Path = good.Path
		tc.edit(c)
		assert.ErrorContains(t, c.Validate(), tc.want)
	}
}
