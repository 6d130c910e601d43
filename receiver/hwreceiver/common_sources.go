package hwreceiver

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/shirou/gopsutil/v4/cpu"
	"github.com/shirou/gopsutil/v4/disk"
	"github.com/shirou/gopsutil/v4/load"
)

// The sources both platforms read the same way, through gopsutil: sysctl
// vm.loadavg / hw.logicalcpu and statfs on macOS (no cgo, no command),
// /proc/loadavg, /proc/cpuinfo and statfs on Linux.
func commonSources(cfg *Config) []*source {
	return []*source{
		{name: "load", collect: loadSource},
		{name: "cpu_count", collect: newCPUCountSource(time.Minute)},
		{name: "disk", collect: diskSource(cfg.DiskPath)},
	}
}

func loadSource(ctx context.Context) (func(*sample), error) {
	avg, err := load.AvgWithContext(ctx)
	if err != nil {
		return nil, err
	}
	return func(s *sample) {
		s.load1, s.load5, s.load15 = fp(avg.Load1), fp(avg.Load5), fp(avg.Load15)
	}, nil
}

// newCPUCountSource counts the logical CPUs, every ttl at most: on Linux
// that reads /proc/cpuinfo, which is large and slow to generate on big
// hosts, for a number that changes only with CPU hotplug.
func newCPUCountSource(ttl time.Duration) collectFunc {
	var mu sync.Mutex
	var count int
	var at time.Time
	return func(ctx context.Context) (func(*sample), error) {
		mu.Lock()
		defer mu.Unlock()
		if count == 0 || time.Since(at) > ttl {
			n, err := cpu.CountsWithContext(ctx, true)
			if err != nil {
				return nil, err
			}
			if n <= 0 {
				return nil, errors.New("no logical CPU counted")
			}
			count, at = n, time.Now()
		}
		n := float64(count)
		return func(s *sample) { s.cpuCount = fp(n) }, nil
	}
}

// diskSource reads the size and use of the file system holding path, the
// way df and Python's shutil.disk_usage do: used = (blocks - free blocks)
// × block size, so blocks reserved for root count as used.
func diskSource(path string) collectFunc {
	return func(ctx context.Context) (func(*sample), error) {
		u, err := disk.UsageWithContext(ctx, path)
		if err != nil {
			return nil, err
		}
		return func(s *sample) {
			s.diskTotal, s.diskUsed = fp(float64(u.Total)), fp(float64(u.Used))
		}, nil
	}
}
