//go:build unix

package hwreceiver

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/mlx-otelcol/mlx-otelcol/receiver/hwreceiver/internal/applesrc"
)

// BenchmarkFastScrape is one scrape of this host with its platform's real
// sources (on Linux: /proc and /sys through gopsutil), metrics built.
func BenchmarkFastScrape(b *testing.B) {
	cfg := testConfig()
	cfg.NvidiaSMI.Enabled = false
	h := newHWScraper(cfg, zap.NewNop())
	ctx := context.Background()
	for b.Loop() {
		if _, err := h.scrape(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMacOSFastScrapeFakeCommands is one macOS scrape through fake
// commands that print the recorded outputs: the runner, the parsers and
// the building of the series, plus a fork of sh and cat per command, which
// stands in for the real commands' own cost.
func BenchmarkMacOSFastScrapeFakeCommands(b *testing.B) {
	scripts := macFixtures(b)
	delete(scripts, "sudo")
	fakeCommands(b, scripts)
	cfg := testConfig()
	cfg.Powermetrics.Enabled = false
	cfg.Temperatures.Enabled = false
	procs := newProcMatcher(cfg, 2240)
	fast := append(commonSources(cfg), macOSSources(cfg, newCommandRunner(cfg.CommandTimeout), procs)...)
	h := newHWScraperWith(cfg, zap.NewNop(), procs, fast, nil)
	ctx := context.Background()
	for b.Loop() {
		if _, err := h.scrape(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMacOSParse is the parsing and building work of one macOS fast
// scrape, without the commands: every fast-cadence parser on its recorded
// output, then the series.
func BenchmarkMacOSParse(b *testing.B) {
	read := func(name string) []byte {
		out, err := os.ReadFile(fixture(b, name))
		require.NoError(b, err)
		return out
	}
	vm, sc, io, ns, ps, nu := read("vmstat.txt"), read("sysctl.txt"), read("ioreg_agx.txt"), read("netstat_ib.txt"), read("ps.txt"), read("notifyutil_thermalpressure.txt")
	procs := newProcMatcher(testConfig(), 2240)
	for b.Loop() {
		s := newSample()
		v, _ := applesrc.ParseVMStat(vm)
		if u, ok := v.UsedBytes(); ok {
			s.memUsed = fp(float64(u))
		}
		if _, err := applesrc.ParseSysctl(sc); err != nil {
			b.Fatal(err)
		}
		if _, err := applesrc.ParseIOReg(io); err != nil {
			b.Fatal(err)
		}
		if _, err := applesrc.ParseNetstat(ns); err != nil {
			b.Fatal(err)
		}
		pl, err := applesrc.ParsePS(ps)
		if err != nil {
			b.Fatal(err)
		}
		totals := procs.newTotals()
		for _, p := range pl.Processes {
			totals.add(procs.match(p.PID, p.Command), p.CPUPercent, float64(p.RSSBytes))
		}
		s.procs = totals
		if _, err := applesrc.ParseThermalPressureNotify(nu); err != nil {
			b.Fatal(err)
		}
		buildMetrics(s, defaultEmit, time.Now(), time.Now())
	}
}

// BenchmarkSlowPowermetricsParse is the slow cadence's work once
// powermetrics has answered: parse a sample and apply it.
func BenchmarkSlowPowermetricsParse(b *testing.B) {
	out, err := os.ReadFile(fixture(b, "powermetrics_m4max.txt"))
	require.NoError(b, err)
	for b.Loop() {
		apply, err := applyPowermetrics(out)
		if err != nil {
			b.Fatal(err)
		}
		apply(newSample())
	}
}

// TestMeasureReceiverCPU runs the receiver at its default 10 s interval for
// MLX_HW_MEASURE_CPU (e.g. 60s) and reports the CPU it used, its own and
// its commands', as a share of one core. Skipped unless that is set:
//
//	MLX_HW_MEASURE_CPU=60s go test -run TestMeasureReceiverCPU -v ./receiver/hwreceiver/
//
// With MLX_HW_MEASURE_MACOS=1 it runs the macOS sources through the fake
// commands instead (their sh and cat forks standing in for the real ones).
func TestMeasureReceiverCPU(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv("MLX_HW_MEASURE_CPU"))
	if err != nil || d <= 0 {
		t.Skip("set MLX_HW_MEASURE_CPU=60s to measure")
	}
	cfg := testConfig()
	var h *hwScraper
	if os.Getenv("MLX_HW_MEASURE_MACOS") != "" {
		scripts := macFixtures(t)
		fakeCommands(t, scripts)
		cfg.Temperatures.Enabled = false
		procs := newProcMatcher(cfg, 2240)
		fast := append(commonSources(cfg), macOSSources(cfg, newCommandRunner(cfg.CommandTimeout), procs)...)
		slow := []slowSource{powermetricsSource(cfg.Powermetrics, newCommandRunner(cfg.slowTimeout()))}
		h = newHWScraperWith(cfg, zap.NewNop(), procs, fast, slow)
	} else {
		h = newHWScraper(cfg, zap.NewNop())
	}
	require.NoError(t, h.start(context.Background(), nil))
	defer func() { require.NoError(t, h.shutdown(context.Background())) }()

	self0, children0 := rusage(t)
	start := time.Now()
	scrapes := 0
	tick := time.NewTicker(cfg.CollectionInterval)
	defer tick.Stop()
	for {
		_, err := h.scrape(context.Background())
		require.NoError(t, err)
		scrapes++
		if time.Since(start)+cfg.CollectionInterval > d {
			break
		}
		<-tick.C
	}
	// Let the last interval run out, so the figure covers whole intervals.
	time.Sleep(time.Until(start.Add(time.Duration(scrapes) * cfg.CollectionInterval)))
	wall := time.Since(start)
	self1, children1 := rusage(t)
	self, children := self1-self0, children1-children0
	t.Logf("%d scrapes at %s over %s: receiver CPU %s (%.3f%% of a core), its commands %s (%.3f%%), total %.3f%%",
		scrapes, cfg.CollectionInterval, wall.Round(time.Millisecond),
		self.Round(time.Microsecond), 100*self.Seconds()/wall.Seconds(),
		children.Round(time.Microsecond), 100*children.Seconds()/wall.Seconds(),
		100*(self+children).Seconds()/wall.Seconds())
}

// rusage returns the user+system CPU of this process and of its reaped
// children.
func rusage(t *testing.T) (self, children time.Duration) {
	var ru syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru))
	children = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return self, children
}
