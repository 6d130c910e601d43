package perf

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat:
// 100 on every Linux architecture Go supports.
const clockTicks = 100

// ProcSample is one reading of a process from /proc.
type ProcSample struct {
	At     time.Time
	CPU    time.Duration // user + system time so far
	RSSKiB int64
}

// ReadProc reads pid's CPU time (/proc/<pid>/stat) and resident set
// (VmRSS in /proc/<pid>/status).
func ReadProc(pid int) (ProcSample, error) {
	s := ProcSample{At: time.Now()}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, err
	}
	cpu, err := parseStatCPU(stat)
	if err != nil {
		return s, err
	}
	s.CPU = cpu
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, err
	}
	s.RSSKiB, err = parseVmRSS(status)
	return s, err
}

// ReadProcWithChildren is ReadProc with the CPU time of the children pid
// has waited for (cutime + cstime): a process that runs commands pays for
// them.
func ReadProcWithChildren(pid int) (ProcSample, error) {
	s, err := ReadProc(pid)
	if err != nil {
		return s, err
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, err
	}
	children, err := parseStatChildrenCPU(stat)
	s.CPU += children
	return s, err
}

// parseStatCPU is utime + stime of a /proc/<pid>/stat line (fields 14 and
// 15).
func parseStatCPU(stat []byte) (time.Duration, error) { return statTicks(stat, 14, "utime", "stime") }

// parseStatChildrenCPU is cutime + cstime (fields 16 and 17): the CPU of
// the children the process has waited for.
func parseStatChildrenCPU(stat []byte) (time.Duration, error) {
	return statTicks(stat, 16, "cutime", "cstime")
}

// statTicks is the sum of the two clock-tick fields of a /proc/<pid>/stat
// line from field (1-based) on, as a duration. The command name (field 2)
// is in parentheses and may hold spaces and parentheses, so fields are
// counted from the last ')', after which the state is field 3.
func statTicks(stat []byte, field int, a, b string) (time.Duration, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc stat: no command name")
	}
	f := strings.Fields(string(stat[i+1:]))
	k := field - 3
	if len(f) < k+2 {
		return 0, fmt.Errorf("/proc stat: %d fields after the name", len(f))
	}
	x, err1 := strconv.ParseInt(f[k], 10, 64)
	y, err2 := strconv.ParseInt(f[k+1], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc stat: %s %q %s %q", a, f[k], b, f[k+1])
	}
	return time.Duration(x+y) * time.Second / clockTicks, nil
}

// parseVmRSS is VmRSS of /proc/<pid>/status, in KiB.
func parseVmRSS(status []byte) (int64, error) {
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc status: no VmRSS")
}

// Usage is a process's cost over a window: CPU seconds per wall second (1.0
// is one core busy) and its resident set at the end and at the most.
type Usage struct {
	Cores     float64
	RSSKiB    int64
	MaxRSSKiB int64
}

// Watch samples pid every interval for d and sums its cost.
func Watch(pid int, d, interval time.Duration) (Usage, error) {
	return watch(func() (ProcSample, error) { return ReadProc(pid) }, d, interval)
}

// WatchGroup is Watch of every process of the process group pgid together.
func WatchGroup(pgid int, d, interval time.Duration) (Usage, error) {
	return watch(func() (ProcSample, error) { return ReadGroup(pgid) }, d, interval)
}

func watch(read func() (ProcSample, error), d, interval time.Duration) (Usage, error) {
	first, err := read()
	if err != nil {
		return Usage{}, err
	}
	u := Usage{RSSKiB: first.RSSKiB, MaxRSSKiB: first.RSSKiB}
	last := first
	for end := first.At.Add(d); time.Now().Before(end); {
		time.Sleep(min(interval, time.Until(end)))
		s, err := read()
		if err != nil {
			return u, err
		}
		last = s
		u.RSSKiB = s.RSSKiB
		u.MaxRSSKiB = max(u.MaxRSSKiB, s.RSSKiB)
	}
	u.Cores = (last.CPU - first.CPU).Seconds() / last.At.Sub(first.At).Seconds()
	return u, nil
}

// ReadGroup sums ReadProc over every process of the process group pgid
// (nginx's master and its workers, started with Setpgid).
func ReadGroup(pgid int) (ProcSample, error) {
	s := ProcSample{At: time.Now()}
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return s, err
	}
	found := false
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || statPgrp(stat) != pgid {
			continue
		}
		p, err := ReadProc(pid)
		if err != nil {
			continue // it ended meanwhile
		}
		found = true
		s.CPU += p.CPU
		s.RSSKiB += p.RSSKiB
	}
	if !found {
		return s, fmt.Errorf("no process in group %d", pgid)
	}
	return s, nil
}

// statPgrp is the process group of a /proc/<pid>/stat line (field 5), -1
// when it cannot be read.
func statPgrp(stat []byte) int {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 3 {
		return -1
	}
	n, err := strconv.Atoi(f[2])
	if err != nil {
		return -1
	}
	return n
}
