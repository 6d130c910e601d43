package hwreceiver

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/receiver/hwreceiver/internal/applesrc"
)

// The macOS sources run the system's commands and read their output with
// the applesrc parsers. They are plain Go, not build-tagged: only the
// platform selection is (platform_darwin.go), so the Linux test suite runs
// them against recorded outputs through fake commands on PATH.

// Commands and arguments, as mlx_hw_telemetry.py ran them (documentation.md
// lists them).
var (
	sysctlNames      = []string{"hw.memsize", "vm.swapusage", "kern.boottime", "kern.memorystatus_vm_pressure_level", "iogpu.wired_limit_mb"}
	ioregArgs        = []string{"-r", "-c", "IOAccelerator", "-d", "2"}
	psArgs           = []string{"-axo", "pid=,pcpu=,rss=,command="}
	notifyutilArgs   = []string{"-g", applesrc.ThermalPressureNotifyName}
	powermetricsArgs = []string{"-n", "1", "-i", "1000", "-f", "text", "--samplers", "cpu_power,gpu_power,thermal"}
)

// ringDiscoveryTTL is how long the Thunderbolt interfaces found are kept:
// ports and bridge membership change only when someone reconfigures them.
const ringDiscoveryTTL = 5 * time.Minute

// macOS holds what the macOS sources share.
type macOS struct {
	run   *commandRunner
	procs *procMatcher
	now   func() time.Time
}

func macOSSources(cfg *Config, run *commandRunner, procs *procMatcher) []*source {
	m := &macOS{run: run, procs: procs, now: time.Now}
	srcs := []*source{
		{name: "vm_stat", collect: m.vmStat},
		{name: "sysctl", collect: m.sysctl},
		{name: "ioreg", collect: m.ioreg},
		{name: "netstat", collect: m.netstat},
		{name: "netif", collect: netifSource},
		{name: "ps", collect: m.ps},
		{name: "notifyutil", collect: m.notifyutil},
	}
	if len(cfg.RingInterfaces) == 0 && cfg.RingHostfile == "" {
		srcs = append(srcs, &source{name: "ring_discovery", collect: m.newRingDiscovery(ringDiscoveryTTL)})
	}
	if cfg.Temperatures.Enabled {
		srcs = append(srcs, &source{name: "iohid", collect: temperatureSource})
	}
	return srcs
}

// vmStat feeds used, free and available memory and the original's page
// count. vm_stat prints its own page size (16 KiB on Apple Silicon).
func (m *macOS) vmStat(ctx context.Context) (func(*sample), error) {
	out, err := m.run.run(ctx, "vm_stat")
	if err != nil {
		return nil, err
	}
	v, err := applesrc.ParseVMStat(out)
	if err != nil {
		return nil, err
	}
	return func(s *sample) {
		if b, ok := v.FreeBytes(); ok {
			s.memFree = fp(float64(b))
		}
		if b, ok := v.UsedBytes(); ok {
			s.memUsed = fp(float64(b))
		}
		// The original's "free pages": free + inactive + speculative, the
		// pages macOS hands out without swapping.
		if v.PagesFree != nil && v.PagesInactive != nil && v.PagesSpeculative != nil {
			pages := *v.PagesFree + *v.PagesInactive + *v.PagesSpeculative
			s.memPressurePages = fp(float64(pages))
			if b, ok := v.Bytes(pages); ok {
				s.memAvailable = fp(float64(b))
			}
		}
	}, nil
}

// sysctl feeds total memory, swap, uptime, the kernel's memory pressure
// level and the GPU wired limit. sysctl exits non-zero when one name is
// unknown (iogpu.wired_limit_mb before macOS 14) but still prints the
// others, so its output is read whatever the exit status.
func (m *macOS) sysctl(ctx context.Context) (func(*sample), error) {
	out, runErr := m.run.run(ctx, "sysctl", sysctlNames...)
	sc, err := applesrc.ParseSysctl(out)
	if err != nil {
		return nil, errors.Join(runErr, err)
	}
	if sc.MemSizeBytes == nil {
		return nil, errors.Join(runErr, errors.New("sysctl: no hw.memsize"))
	}
	now := m.now()
	return func(s *sample) {
		s.memTotal = fp(float64(*sc.MemSizeBytes))
		if sc.Swap != nil {
			s.swapTotal, s.swapUsed = fp(float64(sc.Swap.TotalBytes)), fp(float64(sc.Swap.UsedBytes))
		}
		if sc.BootTime != nil && now.After(*sc.BootTime) {
			s.uptimeSeconds = fp(now.Sub(*sc.BootTime).Seconds())
		}
		if sc.MemoryPressure != nil && sc.MemoryPressure.Valid() {
			s.memPressureLevel = fp(float64(*sc.MemoryPressure))
		}
		if sc.IOGPUWiredLimitMB != nil && *sc.IOGPUWiredLimitMB > 0 {
			s.gpuWiredLimit = fp(float64(*sc.IOGPUWiredLimitMB) * (1 << 20))
		}
	}, nil
}

// ioreg feeds the GPU's IOKit utilisation and memory, without root.
func (m *macOS) ioreg(ctx context.Context) (func(*sample), error) {
	out, err := m.run.run(ctx, "ioreg", ioregArgs...)
	if err != nil {
		return nil, err
	}
	acc, err := applesrc.ParseIOReg(out)
	if err != nil {
		return nil, err
	}
	return func(s *sample) {
		s.gpuIOKitUtil = acc.DeviceUtilizationPct
		s.gpuMemUsed = uintf(acc.InUseSystemMemoryBytes)
		s.gpuMemAlloc = uintf(acc.AllocSystemMemoryBytes)
	}, nil
}

// netstat feeds every interface's counters; the ring ones are emitted.
func (m *macOS) netstat(ctx context.Context) (func(*sample), error) {
	out, err := m.run.run(ctx, "netstat", "-ib")
	if err != nil {
		return nil, err
	}
	ns, err := applesrc.ParseNetstat(out)
	if err != nil {
		return nil, err
	}
	counters := make([]netCounters, 0, len(ns.Interfaces))
	for _, i := range ns.Interfaces {
		counters = append(counters, netCounters{
			iface:   i.Name,
			rxBytes: uintf(i.Ibytes), txBytes: uintf(i.Obytes),
			rxErrors: uintf(i.Ierrs), txErrors: uintf(i.Oerrs),
		})
	}
	return func(s *sample) { s.net = counters }, nil
}

// ps feeds the per-component CPU and memory. ps's %CPU is a decaying
// average the kernel keeps (about a minute), 100 per busy core.
func (m *macOS) ps(ctx context.Context) (func(*sample), error) {
	out, err := m.run.run(ctx, "ps", psArgs...)
	if err != nil {
		return nil, err
	}
	pl, err := applesrc.ParsePS(out)
	if err != nil {
		return nil, err
	}
	totals := m.procs.newTotals()
	for _, p := range pl.Processes {
		totals.add(m.procs.match(p.PID, p.Command), p.CPUPercent, float64(p.RSSBytes))
	}
	return func(s *sample) { s.procs = totals }, nil
}

// notifyutil feeds the thermal pressure level, without root; unlike the
// original's pmset reading it moves on Apple Silicon.
func (m *macOS) notifyutil(ctx context.Context) (func(*sample), error) {
	out, err := m.run.run(ctx, "notifyutil", notifyutilArgs...)
	if err != nil {
		return nil, err
	}
	level, err := applesrc.ParseThermalPressureNotify(out)
	if err != nil {
		return nil, err
	}
	return func(s *sample) { s.thermalLevel = fp(float64(level.Level())) }, nil
}

// newRingDiscovery finds the ring interfaces: bridge0's members and the
// "Thunderbolt N" hardware ports. Either command may fail alone (no
// bridge0 once mlx's setup removed it); both failing is a failure. A
// result is kept for ttl; a failure is retried at the next scrape.
func (m *macOS) newRingDiscovery(ttl time.Duration) collectFunc {
	var mu sync.Mutex
	var found []string
	var at time.Time
	return func(ctx context.Context) (func(*sample), error) {
		mu.Lock()
		defer mu.Unlock()
		if at.IsZero() || m.now().Sub(at) > ttl {
			ifaces, err := m.discoverRing(ctx)
			if err != nil {
				return nil, err
			}
			found, at = ifaces, m.now()
		}
		ring := append([]string{}, found...)
		return func(s *sample) { s.ringDefault = ring }, nil
	}
}

func (m *macOS) discoverRing(ctx context.Context) ([]string, error) {
	var bridge applesrc.Bridge
	var ports applesrc.HardwarePorts
	out, errBridge := m.run.run(ctx, "ifconfig", "bridge0")
	if errBridge == nil {
		bridge, errBridge = applesrc.ParseIfconfigBridge(out)
	}
	out, errPorts := m.run.run(ctx, "networksetup", "-listallhardwareports")
	if errPorts == nil {
		ports, errPorts = applesrc.ParseHardwarePorts(out)
	}
	if errBridge != nil && errPorts != nil {
		return nil, fmt.Errorf("no ring interface found: %w", errors.Join(errBridge, errPorts))
	}
	return applesrc.ThunderboltInterfaces(bridge, ports), nil
}

// powermetricsSource is the slow macOS source: power, GPU residency and
// frequency, and the thermal pressure level. It needs root, hence `sudo
// -n`, which fails at once without passwordless sudo.
func powermetricsSource(cfg PowermetricsConfig, run *commandRunner) slowSource {
	name, args := "powermetrics", powermetricsArgs
	if cfg.Sudo {
		name, args = "sudo", append([]string{"-n", "powermetrics"}, powermetricsArgs...)
	}
	return slowSource{name: "powermetrics", collect: func(ctx context.Context) (func(*sample), error) {
		out, err := run.run(ctx, name, args...)
		if err != nil {
			return nil, err
		}
		return applyPowermetrics(out)
	}}
}

// applyPowermetrics parses a powermetrics sample into its series.
func applyPowermetrics(out []byte) (func(*sample), error) {
	pm, err := applesrc.ParsePowermetrics(out)
	if err != nil {
		return nil, err
	}
	// "Combined Power (CPU + GPU + ANE)" is what the original exported as
	// package power; macOS releases before Monterey printed "Package Power".
	pkg := pm.CombinedPowerMW
	if pkg == nil {
		pkg = pm.PackagePowerMW
	}
	var thermal *float64
	if pm.ThermalPressure != nil {
		thermal = fp(float64(pm.ThermalPressure.Level()))
	}
	return func(s *sample) {
		s.gpuActivePercent = pm.GPUActiveResidencyPct
		s.gpuFreqMHz = pm.GPUActiveFreqMHz
		s.gpuPowerMW = pm.GPUPowerMW
		s.packagePowerMW = pkg
		s.cpuPowerMW = pm.CPUPowerMW
		s.anePowerMW = pm.ANEPowerMW
		s.thermalLevelPM = thermal
	}, nil
}

func uintf(v *uint64) *float64 {
	if v == nil {
		return nil
	}
	return fp(float64(*v))
}
