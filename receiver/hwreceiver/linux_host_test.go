//go:build linux

package hwreceiver

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/proctest"
)

// These tests read this Linux host through the real sources.

func TestLinuxScrapeReadsThisHost(t *testing.T) {
	cfg := testConfig()
	h := newHWScraper(cfg, zap.NewNop())
	require.NoError(t, h.start(context.Background(), nil))
	defer func() { require.NoError(t, h.shutdown(context.Background())) }()
	md, err := h.scrape(context.Background())
	require.NoError(t, err)
	p := points(t, md, "test-node")

	for _, src := range []string{"load", "cpu_count", "disk", "meminfo", "uptime", "netdev", "procfs"} {
		assert.Equal(t, 1.0, p["mlx_hw_source_up{source="+src+"}"], src)
	}
	for _, mac := range []string{"vm_stat", "sysctl", "powermetrics", "ps"} {
		assert.NotContains(t, p, "mlx_hw_source_up{source="+mac+"}", "macOS sources do not apply on Linux")
	}
	assert.Equal(t, proctest.MeminfoBytes(t, "MemTotal"), p["mlx_hw_mem_total_bytes"])
	assert.Equal(t, float64(proctest.CPUCount(t)), p["mlx_hw_cpu_count"])
	assert.Greater(t, p["mlx_hw_disk_total_bytes"], p["mlx_hw_disk_used_bytes"])
	assert.Greater(t, p["mlx_hw_uptime_seconds"], 0.0)
	assert.Equal(t, 1.0, p["mlx_proc_count{component=mlx_otelcol}"], "the test binary is the collector here")
	assert.Greater(t, p["mlx_proc_rss_bytes{component=mlx_otelcol}"], 1e6)
	assert.Contains(t, p, "mlx_worker_cpu_percent")
}

// A process matched by a pattern is found, counted and measured, and its
// CPU is the CPU it used between two scrapes.
func TestProcfsSourceFindsAProcess(t *testing.T) {
	cmd := exec.Command("sh", "-c", "while :; do :; done", "hw-test-busy-loop")
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	cfg := testConfig()
	cfg.Processes = map[string]string{"busy": `while :; do :; done hw-test-busy-loop$`}
	cfg.WorkerComponent = "busy"
	src := newProcfsSource(newProcMatcher(cfg, os.Getpid()), time.Now)
	_, err := src.collect(context.Background())
	require.NoError(t, err)
	time.Sleep(500 * time.Millisecond)
	apply, err := src.collect(context.Background())
	require.NoError(t, err)
	s := newSample()
	apply(s)
	busy := s.procs["busy"]
	assert.Equal(t, 1, busy.count)
	assert.Greater(t, busy.rssBytes, 0.0)
	// A busy loop uses most of a core; on a loaded test host, at least some.
	assert.Greater(t, busy.cpuPercent, 5.0)
	assert.LessOrEqual(t, busy.cpuPercent, 110.0)
}
