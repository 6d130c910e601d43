//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// simEngine is an mlxsim process the test runs itself, on a port of its own.
type simEngine struct {
	t    *testing.T
	port int
	args []string
	cmd  *exec.Cmd
}

// startSimEngine runs one, waits for its /health and kills it at cleanup.
func startSimEngine(t *testing.T, port int, args ...string) *simEngine {
	e := &simEngine{t: t, port: port, args: args}
	e.start()
	t.Cleanup(e.kill)
	return e
}

func (e *simEngine) start() {
	e.t.Helper()
	args := append([]string{"--host", "127.0.0.1", "--port", strconv.Itoa(e.port), "--sim-load-delay", "0s",
		"--sim-decode-tokens-per-second", "400"}, e.args...)
	e.cmd = exec.Command(binary(e.t, "MLXSIM"), args...)
	require.NoError(e.t, e.cmd.Start())
	require.Eventually(e.t, func() bool {
		res, err := http.Get(e.url("/health"))
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	}, 30*time.Second, 50*time.Millisecond, "mlxsim on %d", e.port)
}

func (e *simEngine) kill() {
	if e.cmd != nil && e.cmd.Process != nil {
		_ = e.cmd.Process.Signal(syscall.SIGKILL)
		_ = e.cmd.Wait()
		e.cmd = nil
	}
}

func (e *simEngine) url(path string) string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", e.port, path)
}
