//go:build unix

package mlxsim

import (
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"
)

// Abort kills the process with SIGABRT like abort(3). The Go runtime would
// turn a plain SIGABRT into a goroutine dump and exit status 2, so the
// traceback mode is set to "crash" (the runtime then re-raises the signal
// with the default action) and stderr is closed first so that no Go dump
// follows the C++ message.
func Abort() {
	debug.SetTraceback("crash")
	_ = syscall.Close(2)
	signal.Reset(syscall.SIGABRT)
	_ = syscall.Kill(os.Getpid(), syscall.SIGABRT)
	time.Sleep(5 * time.Second)
	os.Exit(134)
}
