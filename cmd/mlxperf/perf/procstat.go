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

// parseStatChildrenCPU is cutime + cstime (fields 16 and 17) of a
// /proc/<pid>/stat line.
func parseStatChildrenCPU(stat []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc stat: no command name")
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 15 {
		return 0, fmt.Errorf("/proc stat: %d fields after the name", len(f))
	}
	cu, err1 := strconv.ParseInt(f[13], 10, 64)
	cs, err2 := strconv.ParseInt(f[14], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc stat: cutime %q cstime %q", f[13], f[14])
	}
	return time.Duration(cu+cs) * time.Second / clockTicks, nil
}

// parseStatCPU is utime + stime of a /proc/<pid>/stat line. The command
// name (field 2) is in parentheses and may hold spaces and parentheses, so
// fields are counted from the last ')'.
func parseStatCPU(stat []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc stat: no command name")
	}
	f := strings.Fields(string(stat[i+1:]))
	// After the name: state is field 3, utime 14 and stime 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc stat: %d fields after the name", len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc stat: utime %q stime %q", f[11], f[12])
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
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
