package perf

import (
	"os/exec"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// A process group mlxperf started and did not stop is ended by EndStarted,
// its children with it.
func TestEndStartedEndsTheGroups(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 60 & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	track(cmd.Process.Pid, true)
	t.Cleanup(func() { untrack(cmd.Process.Pid) })
	EndStarted()
	err := cmd.Wait() // returns once SIGTERM has ended sh
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	require.Equal(t, syscall.SIGTERM, exit.Sys().(syscall.WaitStatus).Signal())
}
