package hwreceiver

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/shirou/gopsutil/v4/host"
	"github.com/shirou/gopsutil/v4/mem"
	"github.com/shirou/gopsutil/v4/net"
	"github.com/shirou/gopsutil/v4/process"
)

// The Linux sources read /proc and /sys through gopsutil, which honours
// HOST_PROC and HOST_SYS: a collector in a container reads the host's
// figures when the host's /proc and /sys are mounted there.
func linuxSources(cfg *Config, procs *procMatcher) []*source {
	srcs := []*source{
		{name: "meminfo", collect: meminfoSource(os.Getpagesize())},
		{name: "psi", collect: psiSource},
		{name: "uptime", collect: uptimeSource},
		{name: "netdev", collect: netdevSource},
		{name: "netif", collect: netifSource},
		{name: "procfs", collect: newProcfsSource(procs, time.Now).collect},
	}
	if cfg.Temperatures.Enabled {
		srcs = append(srcs, &source{name: "hwmon", collect: temperatureSource})
	}
	return srcs
}

// meminfoSource reads /proc/meminfo. used = MemTotal - MemAvailable, the
// memory the kernel could not hand out without reclaiming from processes;
// mlx_hw_mem_pressure keeps the original's unit, pages.
func meminfoSource(pageSize int) collectFunc {
	return func(ctx context.Context) (func(*sample), error) {
		vm, err := mem.VirtualMemoryWithContext(ctx)
		if err != nil {
			return nil, err
		}
		if vm.Total == 0 {
			return nil, errors.New("MemTotal is 0")
		}
		return func(s *sample) {
			s.memTotal = fp(float64(vm.Total))
			s.memUsed = fp(float64(vm.Used))
			s.memFree = fp(float64(vm.Free))
			s.memAvailable = fp(float64(vm.Available))
			s.memPressurePages = fp(float64(vm.Available / uint64(pageSize)))
			s.swapTotal = fp(float64(vm.SwapTotal))
			if vm.SwapFree <= vm.SwapTotal {
				s.swapUsed = fp(float64(vm.SwapTotal - vm.SwapFree))
			}
		}, nil
	}
}

// uptimeSource reads the uptime from sysinfo(2), in whole seconds.
func uptimeSource(ctx context.Context) (func(*sample), error) {
	up, err := host.UptimeWithContext(ctx)
	if err != nil {
		return nil, err
	}
	return func(s *sample) { s.uptimeSeconds = fp(float64(up)) }, nil
}

// netdevSource reads every interface's counters from /proc/net/dev. The
// default ring on Linux is every interface but the loopback.
func netdevSource(ctx context.Context) (func(*sample), error) {
	stats, err := net.IOCountersWithContext(ctx, true)
	if err != nil {
		return nil, err
	}
	var counters []netCounters
	var ring []string
	for _, st := range stats {
		counters = append(counters, netCounters{
			iface:    st.Name,
			rxBytes:  fp(float64(st.BytesRecv)),
			txBytes:  fp(float64(st.BytesSent)),
			rxErrors: fp(float64(st.Errin)),
			txErrors: fp(float64(st.Errout)),
		})
		if st.Name != "lo" {
			ring = append(ring, st.Name)
		}
	}
	return func(s *sample) { s.net, s.ringDefault = counters, ring }, nil
}

// procfsSource sums CPU and resident memory per component from /proc. The
// CPU percentage of a process is its CPU time over the wall time since the
// previous scrape (100 per busy core, like ps and top); a process seen for
// the first time gets its average since it started.
type procfsSource struct {
	procs *procMatcher
	now   func() time.Time
	// prev holds the CPU time of the processes matched at the previous
	// scrape. Only the source's own run touches it: runSources never runs a
	// source twice at once.
	prev    map[int32]cpuMark
	cmdline cmdlineReader
}

type cpuMark struct {
	createTime int64 // ms since the epoch; tells a reused pid apart
	cpuSeconds float64
	at         time.Time
}

func newProcfsSource(procs *procMatcher, now func() time.Time) *procfsSource {
	return &procfsSource{procs: procs, now: now, prev: map[int32]cpuMark{}}
}

func (p *procfsSource) collect(ctx context.Context) (func(*sample), error) {
	pids, err := process.PidsWithContext(ctx)
	if err != nil {
		return nil, err
	}
	if len(pids) == 0 {
		return nil, errors.New("no process in /proc")
	}
	totals := p.procs.newTotals()
	next := map[int32]cpuMark{}
	for _, pid := range pids {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		cmdline, err := p.cmdline.read(ctx, pid)
		if err != nil {
			continue // gone since the listing
		}
		comps := p.procs.match(int(pid), cmdline)
		if len(comps) == 0 {
			continue
		}
		proc := &process.Process{Pid: pid}
		times, err := proc.TimesWithContext(ctx)
		if err != nil {
			continue
		}
		mi, err := proc.MemoryInfoWithContext(ctx)
		if err != nil {
			continue
		}
		created, err := proc.CreateTimeWithContext(ctx)
		if err != nil {
			continue
		}
		mark := cpuMark{createTime: created, cpuSeconds: times.User + times.System, at: p.now()}
		next[pid] = mark
		totals.add(comps, p.cpuPercent(pid, mark), float64(mi.RSS))
	}
	p.prev = next
	return func(s *sample) { s.procs = totals }, nil
}

func (p *procfsSource) cpuPercent(pid int32, m cpuMark) float64 {
	if prev, ok := p.prev[pid]; ok && prev.createTime == m.createTime {
		if wall := m.at.Sub(prev.at).Seconds(); wall > 0 && m.cpuSeconds >= prev.cpuSeconds {
			return (m.cpuSeconds - prev.cpuSeconds) / wall * 100
		}
		return 0
	}
	if life := m.at.Sub(time.UnixMilli(m.createTime)).Seconds(); life > 0 {
		return m.cpuSeconds / life * 100
	}
	return 0
}
