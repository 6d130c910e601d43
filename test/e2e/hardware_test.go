//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/doccheck"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/proctest"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

// hwOverlay makes the hardware receiver quick to test: a 1 s cadence, and
// the simulated engine as a component.
var hwOverlay = []string{
	"receivers::mlx_hw::collection_interval=1s",
	"receivers::mlx_hw::command_timeout=500ms",
	"receivers::mlx_hw::slow_interval=1s",
	"receivers::mlx_hw::processes::mlxsim=mlxsim .*--port",
}

func startHardware(t *testing.T, env map[string]string) *stack {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("compares the scrape with /proc: Linux only")
	}
	if env == nil {
		env = map[string]string{}
	}
	env["MLX_NODE_NAME"] = "e2e-node"
	return startCollector(t, collectorOptions{configs: demoConfigs, sets: hwOverlay, env: env})
}

// A scrape of :9102 on this Linux host returns its real memory, CPU count,
// load, uptime, disk and interface counters, labelled with the node, and
// exactly the series documentation.md says Linux has.
func TestHardwareSeriesOfThisLinuxHost(t *testing.T) {
	netBefore := procNetDev(t)
	s := startHardware(t, nil)
	// The engine's RSS is what the kernel says of the mlxsim process. It
	// grows fast while the engine starts, so the scrape is awaited until it
	// agrees with /proc within a quarter: a source that read the wrong
	// field (pages, VSZ) or the wrong process never would.
	sc := s.waitFor("prometheus/hw", 30*time.Second, "the engine's RSS as /proc has it", func(sc *promtext.Scrape) bool {
		n, _ := sc.Value("mlx_proc_count", "component", "mlxsim")
		rss, _ := sc.Value("mlx_proc_rss_bytes", "component", "mlxsim")
		kernel := procRSSOf(t, s.cmd.Process.Pid, "mlxsim")
		return n == 1 && rss > 0.75*kernel && rss < 1.25*kernel
	})
	load := readLoadavg(t)
	netAfter := procNetDev(t)

	// Memory, CPUs, load, uptime, disk: the host's own figures.
	assert.Equal(t, proctest.MeminfoBytes(t, "MemTotal"), value(t, sc, "mlx_hw_mem_total_bytes", "node", "e2e-node"))
	assert.Equal(t, float64(proctest.CPUCount(t)), value(t, sc, "mlx_hw_cpu_count"))
	assert.GreaterOrEqual(t, value(t, sc, "mlx_hw_cpu_count"), float64(runtime.NumCPU()))
	assert.InDelta(t, load, value(t, sc, "mlx_hw_load1"), 0.5+0.25*load, "load1 against /proc/loadavg")
	assert.InDelta(t, procUptime(t), value(t, sc, "mlx_hw_uptime_seconds"), 5)
	var st syscall.Statfs_t
	require.NoError(t, syscall.Statfs("/", &st))
	assert.Equal(t, float64(st.Blocks)*float64(st.Bsize), value(t, sc, "mlx_hw_disk_total_bytes"))
	assert.Greater(t, value(t, sc, "mlx_hw_mem_available_bytes"), 0.0)
	pages := value(t, sc, "mlx_hw_mem_pressure")
	assert.Equal(t, float64(int64(pages)), pages, "mlx_hw_mem_pressure is a page count")
	assert.InDelta(t, value(t, sc, "mlx_hw_mem_available_bytes"), pages*float64(os.Getpagesize()), float64(os.Getpagesize()))

	// Interfaces other than lo: counters between the two readings.
	for iface, before := range netBefore {
		if iface == "lo" {
			_, ok := sc.Value("mlx_net_rx_bytes_total", "iface", "lo")
			assert.False(t, ok, "lo is not a ring interface")
			continue
		}
		rx := value(t, sc, "mlx_net_rx_bytes_total", "iface", iface)
		assert.GreaterOrEqual(t, rx, before[0], iface)
		assert.LessOrEqual(t, rx, netAfter[iface][0], iface)
		tx := value(t, sc, "mlx_net_tx_bytes_total", "iface", iface)
		assert.GreaterOrEqual(t, tx, before[1], iface)
		assert.LessOrEqual(t, tx, netAfter[iface][1], iface)
	}

	// Processes: the engine the supervisor runs, and the collector itself.
	// The engine's RSS is what the kernel says of the mlxsim processes, give
	// or take what it allocated between the collection and now.
	assert.Equal(t, 1.0, value(t, sc, "mlx_proc_count", "component", "mlx_otelcol"))
	assert.Greater(t, value(t, sc, "mlx_proc_rss_bytes", "component", "mlx_otelcol"), 10e6)
	assert.Equal(t, 0.0, value(t, sc, "mlx_worker_rss_bytes"), "no mlx_lm.server here")

	// Sources: those of Linux, all working; none of macOS.
	for _, src := range []string{"load", "cpu_count", "disk", "meminfo", "uptime", "netdev", "procfs"} {
		assert.Equal(t, 1.0, value(t, sc, "mlx_hw_source_up", "source", src), src)
	}
	for _, src := range []string{"powermetrics", "vm_stat", "sysctl", "ioreg", "ps"} {
		_, ok := sc.Value("mlx_hw_source_up", "source", src)
		assert.False(t, ok, "%s does not apply on Linux", src)
	}

	// Every series carries the node.
	for _, name := range sc.Names() {
		for _, series := range sc.Series(name) {
			assert.Contains(t, series, `node="e2e-node"`)
		}
	}

	// The families are those documentation.md gives Linux.
	always, maybe := linuxDocumented(t)
	got := map[string]bool{}
	for _, n := range sc.Names() {
		got[n] = true
		assert.True(t, always[n] || maybe[n], "%s is scraped but not documented for Linux", n)
	}
	for n := range always {
		assert.True(t, got[n], "%s is documented for every Linux host but not scraped", n)
	}
}

// startHardwareWithNvidiaSMI runs the collector with a fake nvidia-smi,
// the shell script body, first on PATH.
func startHardwareWithNvidiaSMI(t *testing.T, body string) *stack {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	return startHardware(t, map[string]string{"PATH": dir + ":" + os.Getenv("PATH")})
}

// nvidia-smi, where installed, feeds the NVIDIA series through the slow
// cadence; here a fake one on PATH prints what nvidia-smi prints.
func TestHardwareNvidiaGPUsThroughNvidiaSMI(t *testing.T) {
	s := startHardwareWithNvidiaSMI(t, "echo '0, GPU-5d8f0c3e-1111-2222-3333-444455556666, NVIDIA L4, 37, 10240, 23034, 41.52, 55, 2040, 6250'")
	sc := s.waitFor("prometheus/hw", 30*time.Second, "the NVIDIA series", func(sc *promtext.Scrape) bool {
		_, ok := sc.Value("mlx_hw_nvidia_gpu_power_watts", "gpu", "0")
		return ok
	})
	assert.Equal(t, 1.0, value(t, sc, "mlx_hw_source_up", "source", "nvidia_smi"))
	assert.Equal(t, 1.0, value(t, sc, "mlx_hw_nvidia_gpu_info", "gpu", "0", "name", "NVIDIA L4", "uuid", "GPU-5d8f0c3e-1111-2222-3333-444455556666"))
	assert.Equal(t, 41.52, value(t, sc, "mlx_hw_nvidia_gpu_power_watts", "gpu", "0"))
	assert.Equal(t, 23034.0*(1<<20), value(t, sc, "mlx_hw_nvidia_gpu_memory_total_bytes", "gpu", "0"))
	assert.Equal(t, 2040e6, value(t, sc, "mlx_hw_nvidia_gpu_sm_clock_hertz", "gpu", "0"))
	assert.InDelta(t, 0.37, value(t, sc, "mlx_hw_nvidia_gpu_utilization_ratio", "gpu", "0"), 1e-9)
}

// A broken nvidia-smi is a failing source: reported 0, no NVIDIA series.
func TestHardwareBrokenNvidiaSMI(t *testing.T) {
	s := startHardwareWithNvidiaSMI(t, "echo 'NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.'\nexit 9")
	sc := s.waitFor("prometheus/hw", 30*time.Second, "nvidia_smi reported", func(sc *promtext.Scrape) bool {
		_, ok := sc.Value("mlx_hw_source_up", "source", "nvidia_smi")
		return ok
	})
	assert.Equal(t, 0.0, value(t, sc, "mlx_hw_source_up", "source", "nvidia_smi"))
	for _, n := range sc.Names() {
		assert.False(t, strings.HasPrefix(n, "mlx_hw_nvidia_"), n)
	}
	// The gauge and the log line come from the same failed collection, in
	// no fixed order: the scrape may see the gauge first.
	assert.Eventually(t, func() bool { return strings.Contains(s.out.String(), "NVIDIA-SMI has failed") }, 10*time.Second, 20*time.Millisecond,
		"the reason is logged")
}

// linuxDocumented reads metadata.yaml: the metrics with a Linux platform
// line, split into those every Linux host has and those that depend on the
// host ("only when").
func linuxDocumented(t *testing.T) (always, maybe map[string]bool) {
	t.Helper()
	doc, err := doccheck.MetadataPlatforms(filepath.Join(repoRoot, "receiver", "hwreceiver", "metadata.yaml"), "Linux")
	require.NoError(t, err)
	always, maybe = map[string]bool{}, map[string]bool{}
	for metric, where := range doc {
		if line, ok := where["Linux"]; ok {
			if strings.Contains(line, "only when") {
				maybe[metric] = true
			} else {
				always[metric] = true
			}
		}
	}
	require.NotEmpty(t, always)
	return always, maybe
}

// procRSSOf sums VmRSS over the descendants of the process root whose
// command name is comm (0 when there is none): only this test's, whatever
// else runs on the machine.
func procRSSOf(t *testing.T, root int, comm string) float64 {
	t.Helper()
	total := 0.0
	for todo := childrenOf(root); len(todo) > 0; {
		pid := todo[0]
		todo = append(todo[1:], childrenOf(pid)...)
		d := fmt.Sprintf("/proc/%d", pid)
		c, err := os.ReadFile(filepath.Join(d, "comm"))
		if err != nil || strings.TrimSpace(string(c)) != comm {
			continue
		}
		// A process that exited between the two reads adds nothing.
		rss, _ := proctest.KBField(t, filepath.Join(d, "status"), "VmRSS")
		total += rss
	}
	return total
}

// childrenOf lists the processes whose parent is pid: every thread's
// children (Go forks from any of them; Linux's /proc/PID/task/TID/children).
func childrenOf(pid int) []int {
	var out []int
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, field := range strings.Fields(string(b)) {
			if child, err := strconv.Atoi(field); err == nil {
				out = append(out, child)
			}
		}
	}
	return out
}

func readLoadavg(t *testing.T) float64 {
	t.Helper()
	b, err := os.ReadFile("/proc/loadavg")
	require.NoError(t, err)
	v, err := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	require.NoError(t, err)
	return v
}

func procUptime(t *testing.T) float64 {
	t.Helper()
	b, err := os.ReadFile("/proc/uptime")
	require.NoError(t, err)
	v, err := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	require.NoError(t, err)
	return v
}

// procNetDev returns each interface's received and sent bytes.
func procNetDev(t *testing.T) map[string][2]float64 {
	t.Helper()
	b, err := os.ReadFile("/proc/net/dev")
	require.NoError(t, err)
	out := map[string][2]float64{}
	lines := strings.Split(string(b), "\n")
	for _, l := range lines[2:] {
		name, rest, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		require.GreaterOrEqual(t, len(f), 9, l)
		rx, err1 := strconv.ParseFloat(f[0], 64)
		tx, err2 := strconv.ParseFloat(f[8], 64)
		require.NoError(t, err1)
		require.NoError(t, err2)
		out[strings.TrimSpace(name)] = [2]float64{rx, tx}
	}
	names := make([]string, 0, len(out))
	for n := range out {
		names = append(names, n)
	}
	sort.Strings(names)
	t.Logf("interfaces: %v", names)
	return out
}
