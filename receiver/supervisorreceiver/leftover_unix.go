//go:build unix

package supervisorreceiver

import (
	"context"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/shirou/gopsutil/v4/process"
)

// leftoverMembers lists the live processes of the recorded group that are
// provably this supervisor's: the command line is the recorded argv, or the
// environment carries the recorded run token. A group id the system has
// given to someone else since has neither, and is left alone.
func leftoverMembers(ctx context.Context, rec runRecord) []int32 {
	pids, err := process.PidsWithContext(ctx)
	if err != nil {
		return nil
	}
	want := runTokenEnv + "=" + rec.Token
	var ours []int32
	for _, pid := range pids {
		if pgid, err := syscall.Getpgid(int(pid)); err != nil || pgid != rec.PGID {
			continue
		}
		p := &process.Process{Pid: pid}
		if argv, err := p.CmdlineSliceWithContext(ctx); err == nil && slices.Equal(argv, rec.Argv) {
			ours = append(ours, pid)
			continue
		}
		if env, err := p.EnvironWithContext(ctx); err == nil && rec.Token != "" && slices.Contains(env, want) {
			ours = append(ours, pid)
		}
	}
	return ours
}

// processStart is a process's start time in Unix milliseconds, 0 when it
// cannot be read (it is gone).
func processStart(pid int) int64 {
	ms, err := (&process.Process{Pid: int32(pid)}).CreateTime()
	if err != nil {
		return 0
	}
	return ms
}

// ownerRuns says whether the collector that wrote rec still runs (and is
// not this one): its engine is then no leftover.
func ownerRuns(rec runRecord) bool {
	o := rec.Owner
	if o.PID == 0 || o.PID == os.Getpid() {
		return false
	}
	return o.Start != 0 && processStart(o.PID) == o.Start
}

// endLeftover ends what is left of a recorded engine group: SIGTERM to each
// proven member, SIGKILL to those still there after grace. It returns how
// many processes it found.
func endLeftover(ctx context.Context, rec runRecord, grace time.Duration) int {
	members := leftoverMembers(ctx, rec)
	signal := func(sig syscall.Signal) {
		for _, pid := range members {
			_ = syscall.Kill(int(pid), sig)
		}
	}
	if len(members) == 0 {
		return 0
	}
	signal(syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	found := len(members)
	for time.Now().Before(deadline) && len(members) > 0 && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
		members = leftoverMembers(context.WithoutCancel(ctx), rec)
	}
	// Listed again just now: a pid that ended is not signalled twice.
	signal(syscall.SIGKILL)
	return found
}
