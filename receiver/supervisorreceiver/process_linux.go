//go:build linux

package supervisorreceiver

import "syscall"

// processAttrs puts the engine in its own process group and, on Linux, has
// the kernel kill it if the collector dies without a chance to stop it.
func processAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
