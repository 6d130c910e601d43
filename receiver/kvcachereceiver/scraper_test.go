package kvcachereceiver

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
	"go.uber.org/zap/zaptest"

	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/doccheck"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/fleettest"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/metrictest"
)

// qwen3-4B (testdata/model): 36 layers x 2 x 8 KV heads x 128 x 2 bytes
// per token, 40960 tokens of context.
const qwenBytesMaxContext = 147456 * 40960

func TestEmittedMetricsAreThoseDocumented(t *testing.T) {
	documented, err := doccheck.MetadataNames("metadata.yaml")
	require.NoError(t, err)
	md := fleettest.AddRole(buildMetrics(snapshot{
		logReadable: true, known: true,
		state:        cacheState{Format: formatPromptCache, SeenAt: readAt},
		maxSequences: 10, maxBytes: 8e9, hasMaxBytes: true,
		estBytesMaxContext: qwenBytesMaxContext, hasEst: true,
	}, readAt, readAt), fleet.RoleKVCache)
	assert.Equal(t, documented, metrictest.Names(md))
	assert.NoError(t, doccheck.CheckMetrics("metadata.yaml", md), "types, help texts and labels are metadata.yaml's")
}

func TestNoCacheSeriesUntilAStateIsSeen(t *testing.T) {
	md := buildMetrics(snapshot{logReadable: true, maxSequences: 10}, readAt, readAt)
	assert.Equal(t, map[string]float64{"mlx_kv_agent_up": 1, "mlx_kv_cache_max_sequences": 10}, metrictest.Points(t, md),
		"no zeros claiming an empty cache, no age of nothing")
}

func TestTheOlderFormatGivesTotalsOnly(t *testing.T) {
	md := buildMetrics(snapshot{
		logReadable: true, known: true, maxSequences: 10,
		state: cacheState{Format: formatKVCaches, Total: usage{2, 1_270_000_000}, SeenAt: readAt},
	}, readAt, readAt.Add(3*time.Second))
	assert.Equal(t, map[string]float64{
		"mlx_kv_agent_up":                    1,
		"mlx_kv_cache_max_sequences":         10,
		"mlx_kv_cache_sequences{type=total}": 2,
		"mlx_kv_cache_bytes{type=total}":     1.27e9,
		"mlx_kv_cache_utilization":           0.2,
		"mlx_kv_cache_state_age_seconds":     3,
	}, metrictest.Points(t, md))
}

func TestUtilizationIsAgainstTheLimitCloserToEviction(t *testing.T) {
	for _, tc := range []struct {
		name     string
		u        usage
		seqs     int64
		maxBytes int64 // 0: none
		want     float64
		ok       bool
	}{
		{"count only", usage{3, 9e9}, 10, 0, 0.3, true},
		{"count is closer", usage{8, 1e9}, 10, 8e9, 0.8, true},
		{"bytes are closer", usage{2, 6e9}, 10, 8e9, 0.75, true},
		{"full", usage{4, 1e9}, 4, 0, 1, true},
		{"size 0 with a byte limit", usage{0, 0}, 0, 8e9, 0, true},
		{"nothing is cached at all", usage{0, 0}, 0, 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := utilization(tc.u, snapshot{maxSequences: tc.seqs, maxBytes: tc.maxBytes, hasMaxBytes: tc.maxBytes > 0})
			assert.Equal(t, tc.ok, ok)
			assert.InDelta(t, tc.want, got, 1e-12)
		})
	}
}

func TestAgeIsNeverNegative(t *testing.T) {
	md := buildMetrics(snapshot{known: true, state: cacheState{Format: formatKVCaches, SeenAt: readAt.Add(time.Hour)}}, readAt, readAt)
	assert.Equal(t, 0.0, metrictest.Value(t, metrictest.Points(t, md), "mlx_kv_cache_state_age_seconds"), "a clock ahead of the collector's reads as just now")
}

func startScraper(t *testing.T, cfg *Config, now *time.Time) *kvScraper {
	t.Helper()
	require.NoError(t, cfg.Validate())
	s := newKVScraper(cfg, zaptest.NewLogger(t))
	s.now = func() time.Time { return *now }
	require.NoError(t, s.start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { _ = s.shutdown(context.Background()) })
	return s
}

func scrapePoints(t *testing.T, s *kvScraper) map[string]float64 {
	t.Helper()
	md, err := s.scrape(context.Background())
	require.NoError(t, err)
	return metrictest.Points(t, md)
}

func TestScraperFollowsTheEngineLog(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.LogPath = filepath.Join(t.TempDir(), "server.log")
	cfg.Model = "testdata/model"
	cfg.PromptCacheSize = 4
	cfg.PromptCacheBytes = "1G"
	now := localTime("2026-08-22 17:01:20,007")
	s := startScraper(t, cfg, &now)

	// Before the engine has written anything.
	assert.Equal(t, map[string]float64{
		"mlx_kv_agent_up":              0,
		"mlx_kv_cache_max_sequences":   4,
		"mlx_kv_cache_max_bytes":       1e9,
		"mlx_kv_est_bytes_max_context": qwenBytesMaxContext,
	}, scrapePoints(t, s))

	log, err := os.ReadFile("testdata/server.log")
	require.NoError(t, err)
	appendFile(t, cfg.LogPath, string(log))
	assert.Equal(t, map[string]float64{
		"mlx_kv_agent_up":                        1,
		"mlx_kv_cache_max_sequences":             4,
		"mlx_kv_cache_max_bytes":                 1e9,
		"mlx_kv_est_bytes_max_context":           qwenBytesMaxContext,
		"mlx_kv_cache_sequences{type=total}":     4,
		"mlx_kv_cache_sequences{type=assistant}": 3,
		"mlx_kv_cache_sequences{type=user}":      1,
		"mlx_kv_cache_sequences{type=system}":    0,
		"mlx_kv_cache_bytes{type=total}":         30e6,
		"mlx_kv_cache_bytes{type=assistant}":     20e6,
		"mlx_kv_cache_bytes{type=user}":          10e6,
		"mlx_kv_cache_bytes{type=system}":        0,
		"mlx_kv_cache_utilization":               1, // 4 of 4 sequences
		"mlx_kv_cache_state_age_seconds":         5, // logged at 17:01:15,007
	}, scrapePoints(t, s))

	// The engine restarts: the old process's cache is gone.
	appendFile(t, cfg.LogPath, "2026-08-22 17:02:00,000 - INFO - Starting httpd at 127.0.0.1 on port 8081...\n")
	p := scrapePoints(t, s)
	assert.NotContains(t, p, "mlx_kv_cache_sequences{type=total}")
	assert.NotContains(t, p, "mlx_kv_cache_state_age_seconds")
	assert.Equal(t, 1.0, p["mlx_kv_agent_up"])

	appendFile(t, cfg.LogPath, "2026-08-22 17:02:01,000 - INFO - Prompt Cache: 0 sequences, 0.00 GB\n"+
		"2026-08-22 17:02:01,000 - INFO - - assistant: 0 sequences, 0.00 GB\n"+
		"2026-08-22 17:02:01,000 - INFO - - user: 0 sequences, 0.00 GB\n"+
		"2026-08-22 17:02:01,000 - INFO - - system: 0 sequences, 0.00 GB\n")
	now = localTime("2026-08-22 17:02:03,500")
	p = scrapePoints(t, s)
	assert.Equal(t, 0.0, metrictest.Value(t, p, "mlx_kv_cache_sequences{type=total}"))
	assert.Equal(t, 0.0, metrictest.Value(t, p, "mlx_kv_cache_utilization"))
	assert.Equal(t, 2.5, p["mlx_kv_cache_state_age_seconds"])

	// The log goes away: the agent says so, the last state stays (it ages).
	require.NoError(t, os.Remove(cfg.LogPath))
	now = now.Add(10 * time.Second)
	p = scrapePoints(t, s)
	assert.Equal(t, 0.0, metrictest.Value(t, p, "mlx_kv_agent_up"))
	assert.Equal(t, 12.5, p["mlx_kv_cache_state_age_seconds"])
}

func TestAModelNotDownloadedYetIsPickedUpLater(t *testing.T) {
	hub := t.TempDir()
	cfg := createDefaultConfig().(*Config)
	cfg.LogPath = filepath.Join(t.TempDir(), "server.log")
	cfg.Model = "mlx-community/Qwen3-4B-4bit"
	cfg.HFHubCache = hub
	now := readAt
	s := startScraper(t, cfg, &now)
	assert.NotContains(t, scrapePoints(t, s), "mlx_kv_est_bytes_max_context")

	// The engine downloads it into the hub cache.
	snap := filepath.Join(hub, "models--mlx-community--Qwen3-4B-4bit", "snapshots", "abc123")
	require.NoError(t, os.MkdirAll(snap, 0o755))
	b, err := os.ReadFile("testdata/model/config.json")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(snap, "config.json"), b, 0o644))
	assert.Equal(t, float64(qwenBytesMaxContext), scrapePoints(t, s)["mlx_kv_est_bytes_max_context"])
}

func TestReceiverLifecycle(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.LogPath = filepath.Join(t.TempDir(), "server.log")
	cfg.CollectionInterval = 20 * time.Millisecond
	log, err := os.ReadFile("testdata/server-0.31.1.log")
	require.NoError(t, err)
	appendFile(t, cfg.LogPath, string(log))

	sink := new(consumertest.MetricsSink)
	r, err := NewFactory().CreateMetrics(context.Background(), receivertest.NewNopSettings(componentType), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	require.Eventually(t, func() bool { return sink.DataPointCount() > 0 }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, r.Shutdown(context.Background()))
	p := metrictest.Points(t, sink.AllMetrics()[0], metrictest.Without("node", fleet.NodeName("")))
	assert.Equal(t, 1.0, p["mlx_kv_agent_up"])
	assert.Equal(t, 2.0, p["mlx_kv_cache_sequences{type=total}"])
	assert.Equal(t, 1.27e9, p["mlx_kv_cache_bytes{type=total}"])
}

func TestShutdownWithoutStart(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.LogPath = "/nonexistent/server.log"
	r, err := NewFactory().CreateMetrics(context.Background(), receivertest.NewNopSettings(componentType), cfg, consumertest.NewNop())
	require.NoError(t, err)
	assert.NoError(t, r.Shutdown(context.Background()))
}
