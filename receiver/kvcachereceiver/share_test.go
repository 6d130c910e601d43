package kvcachereceiver

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.uber.org/zap/zaptest"
)

// usageSink stands for the mlx_proxy extension: it keeps what it was given.
type usageSink struct {
	component.StartFunc
	component.ShutdownFunc
	u      float64
	known  bool
	called int
}

func (s *usageSink) SetKVCacheUsage(u float64, known bool) {
	s.u, s.known, s.called = u, known, s.called+1
}

type hostWith struct {
	component.Host
	exts map[component.ID]component.Component
}

func (h hostWith) GetExtensions() map[component.ID]component.Component { return h.exts }

// Each collection gives the proxy the utilisation it emits, and says when
// there is none: vllm:kv_cache_usage_perc follows mlx_kv_cache_utilization.
func TestEachCollectionSharesTheUtilization(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.LogPath = filepath.Join(t.TempDir(), "server.log")
	cfg.PromptCacheSize = 4
	sink := &usageSink{}
	s := newKVScraper(cfg, zaptest.NewLogger(t))
	now := localTime("2026-08-22 17:01:20,007")
	s.now = func() time.Time { return now }
	host := hostWith{Host: componenttest.NewNopHost(), exts: map[component.ID]component.Component{
		component.MustNewID("mlx_proxy"): sink,
		component.MustNewID("other"): &struct {
			component.StartFunc
			component.ShutdownFunc
		}{},
	}}
	require.NoError(t, s.start(context.Background(), host))
	t.Cleanup(func() { _ = s.shutdown(context.Background()) })

	scrapePoints(t, s)
	assert.Equal(t, 1, sink.called)
	assert.False(t, sink.known, "no cache state yet")

	log, err := os.ReadFile("testdata/server.log")
	require.NoError(t, err)
	appendFile(t, cfg.LogPath, string(log))
	points := scrapePoints(t, s)
	require.Contains(t, points, "mlx_kv_cache_utilization")
	assert.True(t, sink.known)
	assert.Equal(t, points["mlx_kv_cache_utilization"], sink.u)
	assert.Equal(t, 1.0, sink.u, "4 sequences of 4")
}
