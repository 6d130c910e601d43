package kvcachereceiver

import (
	"syscall"
	"time"
)

// threadCPU is the CPU time (user + system) of the calling OS thread; the
// caller locks its goroutine to the thread so that this is its own.
func threadCPU() time.Duration {
	const rusageThread = 1 // RUSAGE_THREAD
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
