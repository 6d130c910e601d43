//go:build !linux

package hwreceiver

import (
	"context"

	"github.com/shirou/gopsutil/v4/process"
)

// cmdlineReader elsewhere is gopsutil's: /proc is Linux's.
type cmdlineReader struct{}

func (cmdlineReader) read(ctx context.Context, pid int32) (string, error) {
	return (&process.Process{Pid: pid}).CmdlineWithContext(ctx)
}
