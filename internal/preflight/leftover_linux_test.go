package preflight

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A run record naming a live process group that is not the supervisor's
// (a pgid recycled after a reboot: no run token in its environment) is no
// leftover engine: the engine's port is checked and its holder named.
func TestARecycledPgidIsNoLeftoverEngine(t *testing.T) {
	cmd := exec.Command("sleep", "300")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	runFile := filepath.Join(t.TempDir(), "server.run.json")
	rec := fmt.Sprintf(`{"pgid":%d,"argv":["sleep","300"],"token":"not-its-token"}`, cmd.Process.Pid)
	require.NoError(t, os.WriteFile(runFile, []byte(rec), 0o600))

	assert.False(t, systemPorts.engineRecorded(runFile))
}
