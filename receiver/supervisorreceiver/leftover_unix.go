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
// provably this supervisor's, and the processes outside it that carry the
// run token (carriesToken). Where a process's environment can be read,
// only the recorded run token proves it (a command line is anyone's to
// copy); where it cannot, the recorded argv does, and only for a process
// started no earlier than the engine was. A group id the system has given
// to someone else since has neither, and is left alone: so is a group
// whose leader (pid == pgid) is a process started at another time than the
// recorded engine, and this collector's own process and group, whatever
// the record says.
func leftoverMembers(ctx context.Context, rec runRecord) []int32 {
	if rec.PGID <= 1 || rec.PGID == os.Getpid() || rec.PGID == syscall.Getpgrp() {
		return nil
	}
	// A leader started at another time: the pgid is someone else's now
	// (the system reuses no pid still in use as a group id, so nothing of
	// ours is left in that group).
	start := processStart(rec.PGID)
	recycled := rec.LeaderStart != 0 && start != 0 && start != rec.LeaderStart
	pids, err := process.PidsWithContext(ctx)
	if err != nil {
		return nil
	}
	var ours []int32
	for _, pid := range pids {
		if int(pid) == os.Getpid() {
			continue
		}
		p := &process.Process{Pid: pid}
		pgid, err := syscall.Getpgid(int(pid))
		switch {
		case err != nil || pgid == syscall.Getpgrp():
		case pgid == rec.PGID:
			if !recycled && provenOurs(ctx, p, rec) {
				ours = append(ours, pid)
			}
		case carriesToken(ctx, p, rec):
			ours = append(ours, pid)
		}
	}
	return ours
}

// carriesToken: a process outside the recorded group is ours only by the
// run token in its environment, never by its command line. That is a rank
// mlx.launch started over ssh on this host (rank 0 when the hostfile names
// it by a host name, not 127.0.0.1): a child of sshd, in a session of its
// own, which has the token from mlx.launch's --env (withRunToken).
func carriesToken(ctx context.Context, p *process.Process, rec runRecord) bool {
	if rec.Token == "" {
		return false
	}
	env, err := p.EnvironWithContext(ctx)
	return err == nil && slices.Contains(env, runTokenEnv+"="+rec.Token)
}

// provenOurs is the member check of one process of the recorded group.
func provenOurs(ctx context.Context, p *process.Process, rec runRecord) bool {
	if env, err := p.EnvironWithContext(ctx); err == nil {
		return rec.Token != "" && slices.Contains(env, runTokenEnv+"="+rec.Token)
	}
	// The environment is not readable (another user's process, or a system
	// that hides it): the recorded command line, in a process no older than
	// the record's engine.
	argv, err := p.CmdlineSliceWithContext(ctx)
	if err != nil || !slices.Equal(argv, rec.Argv) || rec.Started.IsZero() {
		return false
	}
	start, err := p.CreateTimeWithContext(ctx)
	// Start times are read in milliseconds, and the record's Started was
	// taken just before the spawn: allow a clock tick of slack.
	return err == nil && start >= rec.Started.UnixMilli()-1000
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

// LeftoverEngine says whether the run record at runFile names an engine a
// killed collector left running: a record this user wrote (see
// readRunRecord), whose owner is gone, with a live process the member check
// proves ours. The preflight asks it before it calls the engine's port
// taken, since the supervisor ends that engine first; a pgid that is alive
// but not provably ours (recycled, another user's) is not one.
func LeftoverEngine(runFile string) bool {
	rec, ok, err := readRunRecord(runFile)
	if err != nil || !ok || ownerRuns(rec) {
		return false
	}
	return len(leftoverMembers(context.Background(), rec)) > 0
}
