package perf

import (
	"sync"
	"syscall"
)

// The processes mlxperf started and has not stopped yet: the collector,
// and nginx, the Go proxy and the original agents, each in a process group
// of its own. An interrupted run (Ctrl-C, kill) skips the deferred stops;
// EndStarted ends them instead, so that none is left holding its port.
var started = struct {
	sync.Mutex
	procs map[int]bool // pid -> it leads a group of its own
}{procs: map[int]bool{}}

func track(pid int, group bool) {
	started.Lock()
	started.procs[pid] = group
	started.Unlock()
}

func untrack(pid int) {
	started.Lock()
	delete(started.procs, pid)
	started.Unlock()
}

// EndStarted sends SIGTERM to every process mlxperf started and has not
// stopped (to the whole group of those that lead one). The collector stops
// the engine it runs; the original supervisor's engine is in its group.
func EndStarted() {
	started.Lock()
	defer started.Unlock()
	for pid, group := range started.procs {
		if group {
			_ = syscall.Kill(-pid, syscall.SIGTERM)
		} else {
			_ = syscall.Kill(pid, syscall.SIGTERM)
		}
	}
}
