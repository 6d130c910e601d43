//go:build unix

package hwreceiver

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/metrictest"
)

// macFixtures are fake macOS commands printing the recorded outputs of the
// applesrc tests.
func macFixtures(t testing.TB) map[string]string {
	return map[string]string{
		"vm_stat":      catScript(fixture(t, "vmstat.txt")),
		"sysctl":       catScript(fixture(t, "sysctl.txt")),
		"ioreg":        catScript(fixture(t, "ioreg_agx.txt")),
		"netstat":      catScript(fixture(t, "netstat_ib.txt")),
		"ps":           catScript(fixture(t, "ps.txt")),
		"notifyutil":   `echo "com.apple.system.thermalpressurelevel 2"`,
		"ifconfig":     catScript(fixture(t, "ifconfig_bridge0.txt")),
		"networksetup": catScript(fixture(t, "networksetup_hardwareports.txt")),
		"sudo":         `[ "$1 $2" = "-n powermetrics" ] || exit 3; cat '` + fixture(t, "powermetrics_m4max.txt") + `'`,
	}
}

// macScraper is the receiver with the macOS sources, whatever the OS the
// test runs on; 2240 is the collector's pid in ps.txt.
func macScraper(t *testing.T, cfg *Config) *hwScraper {
	t.Helper()
	cfg.Temperatures.Enabled = false // IOHID is darwin only; covered in temperature_test.go
	require.NoError(t, cfg.Validate())
	procs := newProcMatcher(cfg, 2240)
	fast := append(commonSources(cfg), macOSSources(cfg, newCommandRunner(cfg.CommandTimeout), procs)...)
	var slow []slowSource
	if cfg.Powermetrics.Enabled {
		slow = append(slow, powermetricsSource(cfg.Powermetrics, newCommandRunner(cfg.slowTimeout())))
	}
	h := newHWScraperWith(cfg, zap.NewNop(), procs, fast, slow)
	require.NoError(t, h.start(context.Background(), nil))
	t.Cleanup(func() { require.NoError(t, h.shutdown(context.Background())) })
	return h
}

// waitSlow waits for the slow sources' first runs.
func waitSlow(t *testing.T, h *hwScraper) {
	t.Helper()
	require.Eventually(t, func() bool {
		h.slow.mu.Lock()
		defer h.slow.mu.Unlock()
		return len(h.slow.last) == len(h.slow.sources)
	}, 20*time.Second, 10*time.Millisecond)
}

func TestMacOSScrape(t *testing.T) {
	fakeCommands(t, macFixtures(t))
	cfg := testConfig()
	cfg.Powermetrics.Sudo = true
	h := macScraper(t, cfg)
	waitSlow(t, h)
	md, err := h.scrape(context.Background())
	require.NoError(t, err)
	p := points(t, md, "test-node")

	for _, src := range []string{"vm_stat", "sysctl", "ioreg", "netstat", "ps", "notifyutil", "ring_discovery", "powermetrics", "load", "cpu_count", "disk"} {
		assert.Equal(t, 1.0, p["mlx_hw_source_up{source="+src+"}"], src)
	}

	// sysctl.txt
	assert.Equal(t, 68719476736.0, p["mlx_hw_mem_total_bytes"])
	assert.Equal(t, 4096.0*(1<<20), p["mlx_hw_swap_total_bytes"])
	assert.Equal(t, 1536.5*(1<<20), p["mlx_hw_swap_used_bytes"])
	assert.Equal(t, 2.0, p["mlx_hw_mem_pressure_level"])
	assert.InDelta(t, time.Since(time.Unix(1700000000, 123000)).Seconds(), p["mlx_hw_uptime_seconds"], 60)
	assert.NotContains(t, p, "mlx_hw_gpu_wired_limit_bytes", "iogpu.wired_limit_mb is 0: the default limit")

	// vmstat.txt, 16 KiB pages: free 4518, inactive 191193, speculative 3014.
	assert.Equal(t, 198725.0, p["mlx_hw_mem_pressure"], "the original's page count")
	assert.Equal(t, 198725.0*16384, p["mlx_hw_mem_available_bytes"])
	assert.Equal(t, 4518.0*16384, p["mlx_hw_mem_free_bytes"])
	// active + inactive + wired + speculative + compressor - purgeable - file-backed
	assert.Equal(t, float64(194947+191193+159117+3014+454496-630-141843)*16384, p["mlx_hw_mem_used_bytes"])

	// ioreg_agx.txt
	assert.Equal(t, 36.0, p["mlx_hw_gpu_iokit_util_percent"])
	assert.Equal(t, 7688503296.0, p["mlx_hw_gpu_mem_used_bytes"], "not the (driver) key")
	assert.Equal(t, 14511046656.0, p["mlx_hw_gpu_mem_alloc_bytes"])
	assert.Equal(t, 68719476736.0, p["mlx_hw_gpu_mem_total_bytes"])

	// netstat_ib.txt, ring = bridge0's members en1 en2 + Thunderbolt ports en1 en2 en3.
	assert.Equal(t, 98765432109.0, p["mlx_net_rx_bytes_total{iface=en1}"], "the first <Link#> row of en1")
	assert.Equal(t, 87654321098.0, p["mlx_net_tx_bytes_total{iface=en1}"])
	assert.Equal(t, 3.0, p["mlx_net_rx_errors_total{iface=en1}"])
	assert.Equal(t, 1.0, p["mlx_net_tx_errors_total{iface=en1}"])
	assert.Contains(t, p, "mlx_net_rx_bytes_total{iface=en2}")
	assert.Contains(t, p, "mlx_net_rx_bytes_total{iface=en3}")
	assert.NotContains(t, p, "mlx_net_rx_bytes_total{iface=en0}", "Ethernet is not a ring port")
	assert.NotContains(t, p, "mlx_net_rx_bytes_total{iface=bridge0}")

	// ps.txt: mlx_lm.server is pid 2231; the collector is pid 2240.
	assert.Equal(t, 187.4, p["mlx_worker_cpu_percent"])
	assert.Equal(t, 9437184.0*1024, p["mlx_worker_rss_bytes"])
	assert.Equal(t, 1.0, p["mlx_proc_count{component=mlx_lm_server}"])
	assert.Equal(t, 0.2, p["mlx_proc_cpu_percent{component=mlx_otelcol}"])
	assert.Equal(t, 51200.0*1024, p["mlx_proc_rss_bytes{component=mlx_otelcol}"])

	// notifyutil's level 2 (heavy) wins over powermetrics' Moderate.
	assert.Equal(t, 0.5, p["mlx_hw_thermal_pressure"])
	assert.Equal(t, 2.0, p["mlx_hw_thermal_pressure_level"])

	// powermetrics_m4max.txt
	assert.Equal(t, 1.21, p["mlx_hw_gpu_utilization_percent"])
	assert.Equal(t, 338.0, p["mlx_hw_gpu_frequency_mhz"])
	assert.Equal(t, 2.0, p["mlx_hw_gpu_power_milliwatts"])
	assert.Equal(t, 43.0, p["mlx_hw_package_power_milliwatts"])
	assert.Equal(t, 41.0, p["mlx_hw_cpu_power_milliwatts"])
	assert.Equal(t, 0.0, metrictest.Value(t, p, "mlx_hw_ane_power_milliwatts"))

	assert.NotContains(t, p, "mlx_hw_cpu_temp_celsius", "no temperature without a sensor source")
}

// Without passwordless sudo, and with commands missing or failing, their
// series are absent and mlx_hw_source_up says which.
func TestMacOSScrapeWithFailingSources(t *testing.T) {
	scripts := macFixtures(t)
	scripts["sudo"] = "echo 'sudo: a password is required' >&2; exit 1"
	scripts["notifyutil"] = "exit 1"
	scripts["vm_stat"] = "echo 'not vm_stat output'"
	delete(scripts, "ioreg")
	delete(scripts, "ifconfig")
	fakeCommands(t, scripts)
	h := macScraper(t, testConfig())
	waitSlow(t, h)
	md, err := h.scrape(context.Background())
	require.NoError(t, err)
	p := points(t, md, "test-node")

	for _, src := range []string{"powermetrics", "notifyutil", "vm_stat", "ioreg"} {
		assert.Equal(t, 0.0, metrictest.Value(t, p, "mlx_hw_source_up{source="+src+"}"), src)
	}
	assert.Equal(t, 1.0, p["mlx_hw_source_up{source=ring_discovery}"], "networksetup alone finds the ports")
	for _, absent := range []string{
		"mlx_hw_gpu_power_milliwatts", "mlx_hw_gpu_utilization_percent", "mlx_hw_package_power_milliwatts",
		"mlx_hw_thermal_pressure", "mlx_hw_thermal_pressure_level",
		"mlx_hw_mem_used_bytes", "mlx_hw_mem_pressure", "mlx_hw_gpu_mem_total_bytes", "mlx_hw_gpu_iokit_util_percent",
	} {
		assert.NotContains(t, p, absent)
	}
	assert.Equal(t, 68719476736.0, p["mlx_hw_mem_total_bytes"], "sysctl still works")
	assert.Contains(t, p, "mlx_net_rx_bytes_total{iface=en3}")
}

func TestMacOSPowermetricsThermalWhenNotifyutilFails(t *testing.T) {
	scripts := macFixtures(t)
	scripts["notifyutil"] = "exit 1"
	scripts["powermetrics"] = "cat '" + fixture(t, "powermetrics_m4max.txt") + "'"
	fakeCommands(t, scripts)
	cfg := testConfig()
	cfg.Powermetrics.Sudo = false // running as root
	h := macScraper(t, cfg)
	waitSlow(t, h)
	md, err := h.scrape(context.Background())
	require.NoError(t, err)
	p := points(t, md, "test-node")
	assert.Equal(t, 0.25, p["mlx_hw_thermal_pressure"], "Moderate from the thermal sampler")
	assert.Equal(t, 1.0, p["mlx_hw_source_up{source=powermetrics}"])
}

func TestMacOSConfiguredRingSkipsDiscovery(t *testing.T) {
	scripts := macFixtures(t)
	scripts["ifconfig"] = "exit 99"
	scripts["networksetup"] = "exit 99"
	fakeCommands(t, scripts)
	cfg := testConfig()
	cfg.RingInterfaces = []string{"en0"}
	cfg.Powermetrics.Enabled = false
	h := macScraper(t, cfg)
	md, err := h.scrape(context.Background())
	require.NoError(t, err)
	p := points(t, md, "test-node")
	assert.NotContains(t, p, "mlx_hw_source_up{source=ring_discovery}")
	assert.NotContains(t, p, "mlx_hw_source_up{source=powermetrics}", "disabled: not reported")
	assert.Equal(t, 3899988586.0, p["mlx_net_rx_bytes_total{iface=en0}"])
	assert.NotContains(t, p, "mlx_net_rx_bytes_total{iface=en1}")
}

// A command that hangs is killed at command_timeout; the scrape goes on
// with the others.
func TestMacOSHungCommandDoesNotStallTheScrape(t *testing.T) {
	scripts := macFixtures(t)
	scripts["ioreg"] = "exec sleep 300"
	fakeCommands(t, scripts)
	cfg := testConfig()
	cfg.CommandTimeout = 200 * time.Millisecond
	cfg.Powermetrics.Enabled = false
	h := macScraper(t, cfg)

	done := make(chan map[string]float64)
	go func() {
		md, _ := h.scrape(context.Background())
		done <- points(t, md, "test-node")
	}()
	select {
	case p := <-done:
		assert.Equal(t, 0.0, metrictest.Value(t, p, "mlx_hw_source_up{source=ioreg}"))
		assert.Equal(t, 1.0, p["mlx_hw_source_up{source=vm_stat}"])
		assert.Contains(t, p, "mlx_hw_mem_used_bytes")
	case <-time.After(60 * time.Second):
		t.Fatal("the scrape waited for the hung ioreg")
	}
}

func TestSysctlOutputIsReadDespiteAnUnknownName(t *testing.T) {
	scripts := macFixtures(t)
	scripts["sysctl"] = `echo 'hw.memsize: 17179869184'; echo "sysctl: unknown oid 'iogpu.wired_limit_mb'" >&2; exit 1`
	fakeCommands(t, scripts)
	m := &macOS{run: newCommandRunner(5 * time.Second), now: time.Now}
	apply, err := m.sysctl(context.Background())
	require.NoError(t, err)
	s := newSample()
	apply(s)
	assert.Equal(t, 17179869184.0, *s.memTotal)
	assert.Nil(t, s.swapTotal)
}

func TestRingDiscoveryIsCached(t *testing.T) {
	scripts := macFixtures(t)
	fakeCommands(t, scripts)
	clock := newFakeClock()
	m := &macOS{run: newCommandRunner(5 * time.Second), now: clock.now}
	discover := m.newRingDiscovery(time.Minute)
	apply, err := discover(context.Background())
	require.NoError(t, err)
	s := newSample()
	apply(s)
	assert.Equal(t, []string{"en1", "en2", "en3"}, s.ringDefault)

	// The commands now fail, but the answer is still fresh.
	scripts["ifconfig"], scripts["networksetup"] = "exit 1", "exit 1"
	fakeCommands(t, scripts)
	_, err = discover(context.Background())
	require.NoError(t, err)
	clock.advance(2 * time.Minute)
	_, err = discover(context.Background())
	assert.ErrorContains(t, err, "no ring interface found")
}
