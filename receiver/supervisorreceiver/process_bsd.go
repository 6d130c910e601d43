//go:build unix && !linux

package supervisorreceiver

import "syscall"

// processAttrs puts the engine in its own process group (macOS has no
// parent-death signal: a killed collector leaves the engine running, and the
// next start finds its port taken until it is stopped by hand).
func processAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
