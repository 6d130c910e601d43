//go:build unix

package hwreceiver

import (
	"os/exec"
	"syscall"
)

// inOwnProcessGroup starts the command in a new process group and makes
// the timeout kill the whole group, so a shell script's children (or
// whatever a command forked) do not outlive it.
//
// A process that runs as another user cannot be signalled: `sudo -n
// powermetrics` started by an unprivileged collector survives the kill. The
// slow loop that runs it then waits for it alone; scrapes go on.
func inOwnProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		// The negative pid names the group, whose id is the leader's pid.
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
			return cmd.Process.Kill()
		}
		return nil
	}
}
