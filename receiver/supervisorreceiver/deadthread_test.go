package supervisorreceiver

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deadAfterAPI fakes mlx-lm from #1791 on: ready until dead is set, then
// /health answers 503 and completions 404, as the thread's wrapper fails
// them.
func deadAfterAPI(t *testing.T, dead *atomic.Bool) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case dead.Load() && (r.URL.Path == "/health" || r.URL.Path == "/v1/models"):
			w.WriteHeader(http.StatusServiceUnavailable)
		case dead.Load():
			w.WriteHeader(http.StatusNotFound)
		case r.URL.Path == "/health":
			_, _ = w.Write([]byte(`{"status": "ok"}`))
		default:
			_, _ = w.Write([]byte(`{"id": "chatcmpl-1", "choices": [{"index": 0, "finish_reason": "length"}]}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// The engine's log under mlx-lm 0.32.0 as the simulator prints it (the
// wrapper's record, no "Exception in thread" line, which threadwatch
// would catch first), with an older per-request traceback before it.
const wrappedDeathScript = `printf 'Traceback (most recent call last):\nValueError: temperature must be of type float\n' >&2
sleep 0.3
printf '2026-08-04 03:12:09,101 - ERROR - Generation thread failed\nTraceback (most recent call last):\n  File "/x/mlx_lm/server.py", line 853, in _generate\n%s\n' "$LAST" >&2
exec sleep 300`

// A 503 from /health restarts the engine at once (not after hang_after),
// the reason read from the thread's traceback, python_error when it names
// nothing else or there is none.
func TestHealth503RestartsAtOnce(t *testing.T) {
	for last, want := range map[string]string{
		"ValueError: `top_k` has to be an integer in the (0, 151936] interval, but is 151936.":                                                ReasonPythonError,
		"RuntimeError: [METAL] Command buffer execution failed: Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout).": ReasonMetalGPUError,
		"": ReasonPythonError,
	} {
		var dead atomic.Bool
		srv := deadAfterAPI(t, &dead)
		script := wrappedDeathScript
		if last == "" {
			script = "exec sleep 300" // no log at all
		}
		cfg := fastConfig(t, srv.URL, "sh", "-c", script)
		cfg.Env = map[string]string{"LAST": last}
		cfg.HealthCheck.HangAfter = time.Hour // not through hang detection
		s := startSupervisor(t, cfg)
		require.Eventually(t, func() bool { return s.snap().ready }, 5*time.Second, 10*time.Millisecond, want)
		if last != "" {
			require.Eventually(t, func() bool {
				b, _ := os.ReadFile(cfg.Log.Path)
				return strings.Contains(string(b), last)
			}, 5*time.Second, 10*time.Millisecond, "the log has the thread's traceback")
		}
		dead.Store(true)
		require.Eventually(t, func() bool { return s.snap().crashes[want] >= 1 }, 5*time.Second, 10*time.Millisecond, last)
		dead.Store(false)
		require.Eventually(t, func() bool { return s.snap().restarts >= 1 && s.snap().ready }, 5*time.Second, 10*time.Millisecond, want)
		snap := s.snap()
		assert.Zero(t, snap.crashes[ReasonHung], last)
		assert.Equal(t, int64(1), snap.crashes[want], "one restart per death: %s", last)
	}
}

// In attach mode there is nothing to restart: a 503 is not ready, a failed
// check, at once.
func TestHealth503InAttachModeIsNotReady(t *testing.T) {
	var dead atomic.Bool
	srv := deadAfterAPI(t, &dead)
	cfg := fastConfig(t, srv.URL)
	cfg.Command = nil
	cfg.Log.Path = ""
	require.NoError(t, cfg.Validate())
	s := startSupervisor(t, cfg)
	require.Eventually(t, func() bool { return s.snap().ready }, 5*time.Second, 10*time.Millisecond)
	dead.Store(true)
	require.Eventually(t, func() bool { return !s.snap().ready }, 5*time.Second, 10*time.Millisecond)
	assert.True(t, s.snap().up, "the HTTP side answers")
}

func TestDeadThreadReason(t *testing.T) {
	assert.Equal(t, ReasonPythonError, deadThreadReason(nil))
	assert.Equal(t, ReasonModelLoadFailed, deadThreadReason([]byte("x\nTraceback (most recent call last):\n  File \"/x/mlx_lm/server.py\", line 385, in load_default\nRepositoryNotFoundError: 401\n")))
	// An older traceback does not name a later death.
	assert.Equal(t, ReasonPythonError, deadThreadReason([]byte("RuntimeError: [METAL] Command buffer execution failed: x\nTraceback (most recent call last):\nValueError: y\n")))
}
