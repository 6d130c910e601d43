//go:build !linux

package kvcachereceiver

import (
	"syscall"
	"time"
)

// threadCPU falls back to the process's CPU time where there is no
// per-thread figure: it then includes the writer's.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
