//go:build linux

package hwreceiver

import (
	"context"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/shirou/gopsutil/v4/process"
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
// CPU is the CPU it used between two scrapes over the wall time between
// them. The process runs a busy loop only between the scrapes and is
// stopped while each scrape reads it, and the source's clock is the
// test's: the expected percentage is exact, whatever the host's load.
func TestProcfsSourceFindsAProcess(t *testing.T) {
	cmd := exec.Command("sh", "-c", "while :; do :; done", "hw-test-busy-loop")
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	busyProc := &process.Process{Pid: int32(cmd.Process.Pid)}
	// stop stops the loop and returns the CPU seconds it has used, read
	// once the kernel says it is stopped (its CPU time no longer moves).
	stop := func() float64 {
		require.NoError(t, cmd.Process.Signal(syscall.SIGSTOP))
		require.Eventually(t, func() bool {
			st, err := busyProc.Status()
			return err == nil && len(st) > 0 && st[0] == process.Stop
		}, 10*time.Second, time.Millisecond)
		times, err := busyProc.Times()
		require.NoError(t, err)
		return times.User + times.System
	}
	before := stop()

	cfg := testConfig()
	cfg.Processes = map[string]string{"busy": `while :; do :; done hw-test-busy-loop$`}
	cfg.WorkerComponent = "busy"
	at := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	src := newProcfsSource(newProcMatcher(cfg, os.Getpid()), func() time.Time { return at })
	_, err := src.collect(context.Background())
	require.NoError(t, err)

	// Run until the loop has used some CPU (a few clock ticks), then stop
	// it again.
	require.NoError(t, cmd.Process.Signal(syscall.SIGCONT))
	require.Eventually(t, func() bool {
		times, err := busyProc.Times()
		return err == nil && times.User+times.System >= before+0.05
	}, 30*time.Second, 5*time.Millisecond, "the busy loop runs")
	used := stop() - before
	at = at.Add(4 * time.Second)

	apply, err := src.collect(context.Background())
	require.NoError(t, err)
	s := newSample()
	apply(s)
	busy := s.procs["busy"]
	assert.Equal(t, 1, busy.count)
	assert.Greater(t, busy.rssBytes, 0.0)
	assert.Positive(t, used)
	assert.InDelta(t, used/4*100, busy.cpuPercent, 1e-9, "its CPU seconds between the scrapes over their 4 s apart")
}
