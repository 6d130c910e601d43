//go:build unix

package supervisorreceiver

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// engineProcess is one run of the engine command, in a process group of its
// own so that stopping it also stops whatever it started (mlx.launch starts
// one Python process per local rank).
type engineProcess struct {
	cmd *exec.Cmd
	// exited is closed once the process has ended; status is set before.
	exited chan struct{}
	status exitStatus
}

// startEngine runs argv with its stdout and stderr written to out.
func startEngine(argv []string, env []string, dir string, out io.Writer) (*engineProcess, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = nil
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.SysProcAttr = processAttrs()
	// Children that keep the output pipe open must not hold Wait forever.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &engineProcess{cmd: cmd, exited: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		// The leader is gone; take down what it left in its group.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		p.status = statusOf(cmd.ProcessState, err)
		close(p.exited)
	}()
	return p, nil
}

// stop sends SIGTERM to the group, and SIGKILL after grace. It returns how
// the process ended.
func (p *engineProcess) stop(grace time.Duration) exitStatus {
	pgid := -p.cmd.Process.Pid
	_ = syscall.Kill(pgid, syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.exited:
	case <-t.C:
		_ = syscall.Kill(pgid, syscall.SIGKILL)
		<-p.exited
	}
	return p.status
}

func (p *engineProcess) pid() int { return p.cmd.Process.Pid }

func statusOf(ps *os.ProcessState, err error) exitStatus {
	if ps == nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			ps = ee.ProcessState
		}
	}
	if ps == nil {
		return exitStatus{Code: -1}
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return exitStatus{Code: -int(ws.Signal()), Signal: ws.Signal()}
	}
	return exitStatus{Code: ps.ExitCode()}
}
