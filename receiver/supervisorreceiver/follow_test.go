package supervisorreceiver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
)

// attachedSim runs the simulated engine as its owner would, writing its
// own log (appending to path), and returns its URL.
func attachedSim(t *testing.T, path string, opts mlxsim.Options) string {
	t.Helper()
	logf, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	require.NoError(t, err)
	e := mlxsim.New(opts, logf)
	srv := httptest.NewServer(e.Handler())
	t.Cleanup(func() { e.Close(); srv.Close(); logf.Close() })
	return srv.URL
}

func chat(t *testing.T, url string) {
	t.Helper()
	resp, err := http.Post(url+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
}

// Attach mode: the engine (MLX 0.32) loses its generation thread to a
// Metal fault, /health stays 200; the supervisor reads the death from the
// log the engine writes, counts it as metal_gpu_error, and counts the
// next one too after the owner rotated the log and started another
// engine. A death already in the log when the collector starts is not
// counted.
func TestAttachModeCountsAThreadDeathFromTheLog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "server.log")
	require.NoError(t, os.WriteFile(path, []byte("Exception in thread Thread-1 (_generate):\nTraceback (most recent call last):\nRuntimeError: [METAL] Command buffer execution failed: old\n"), 0o600))
	url := attachedSim(t, path, mlxsim.Options{MetalFaultAfter: 1})

	cfg := createDefaultConfig().(*Config)
	cfg.Endpoint = url
	cfg.Log.Path = path
	cfg.HealthCheck.Probe = ProbeHealth // the completions are the test's
	cfg.HealthCheck.Interval = 100 * time.Millisecond
	cfg.HealthCheck.StartupInterval = 50 * time.Millisecond
	cfg.HealthCheck.Timeout = 300 * time.Millisecond
	require.NoError(t, cfg.Validate())
	s := newSupervisor(cfg, zaptest.NewLogger(t))
	require.NoError(t, s.start(context.Background(), nil))
	t.Cleanup(func() { _ = s.shutdown(context.Background()) })
	require.Eventually(t, func() bool { return s.snap().ready }, 5*time.Second, 20*time.Millisecond)
	time.Sleep(2 * followInterval) // the follower has read the old death as history

	chat(t, url)
	require.Eventually(t, func() bool { return s.snap().crashes[ReasonMetalGPUError] == 1 }, 5*time.Second, 50*time.Millisecond)
	assert.Equal(t, ReasonMetalGPUError, s.snap().lastReason)
	resp, err := http.Get(url + "/health")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode, "the process lives on: /health still answers")

	// The owner rotates the log and starts another engine that fails to
	// load its model (mlx-lm 0.31: the generation thread dies too).
	require.NoError(t, os.Rename(path, path+".1"))
	attachedSim(t, path, mlxsim.Options{LoadFail: true})
	require.Eventually(t, func() bool { return s.snap().crashes[ReasonModelLoadFailed] == 1 }, 5*time.Second, 50*time.Millisecond)
	assert.Equal(t, int64(1), s.snap().crashes[ReasonMetalGPUError], "each death once")
	assert.Zero(t, s.snap().restarts, "attach mode restarts nothing")
}

// A log that appears after the collector started is read from its start,
// and the last lines of a rotated file are read before the new one.
func TestFollowerReadsALateFileAndARotatedTail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "server.log")
	st := newStatus()
	f := newLogFollower(path, st, zaptest.NewLogger(t))
	defer f.close()
	f.poll() // no file yet
	death := "Exception in thread Thread-1 (_generate):\nTraceback (most recent call last):\nRuntimeError: [METAL] Command buffer execution failed: Caused GPU Timeout Error\n"
	require.NoError(t, os.WriteFile(path, []byte("early line\n"+death), 0o600))
	f.poll()
	f.poll() // the traceback is classified a poll after its first line
	assert.Equal(t, int64(1), st.crashes[ReasonMetalGPUError], "a death in a file that appeared late")

	// Lines written to the old file after the last poll, then rotation.
	old, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = old.WriteString("Exception in thread Thread-1 (_generate):\nTraceback (most recent call last):\nRuntimeError: [metal::malloc] Attempting to allocate 1 bytes\n")
	require.NoError(t, err)
	old.Close()
	require.NoError(t, os.Rename(path, path+".1"))
	require.NoError(t, os.WriteFile(path, []byte("new file\n"), 0o600))
	f.poll()
	f.poll()
	assert.Equal(t, int64(1), st.crashes[ReasonOOM], "the rotated file's last lines were read")
}
