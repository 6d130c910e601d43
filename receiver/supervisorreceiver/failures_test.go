package supervisorreceiver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

// What mlx_lm prints when its generation thread dies of a Metal fault
// under MLX 0.32; the process lives on (the script sleeps).
const metalDeathScript = `echo "2026-08-04 03:12:09,101 - INFO - Starting httpd at 127.0.0.1 on port 8081..." >&2
sleep 0.3
printf 'Exception in thread Thread-1 (_generate):\nTraceback (most recent call last):\n  File "/x/mlx_lm/server.py", line 853, in _generate\n' >&2
printf 'RuntimeError: [METAL] Command buffer execution failed: Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout).\n' >&2
exec sleep 300`

// A dead generation thread is a crash: stopped at once and restarted, the
// reason read from its traceback, though /health answers and the process
// runs.
func TestDeadGenerationThreadIsACrash(t *testing.T) {
	var loaded, hung atomic.Bool
	loaded.Store(true)
	srv := engineAPI(t, &loaded, &hung)
	cfg := fastConfig(t, srv.URL, "sh", "-c", metalDeathScript)
	cfg.HealthCheck.HangAfter = time.Hour // not through hang detection
	s := startSupervisor(t, cfg)
	require.Eventually(t, func() bool { return s.snap().crashes[ReasonMetalGPUError] >= 1 }, 5*time.Second, 10*time.Millisecond)
	snap := s.snap()
	assert.Zero(t, snap.crashes[ReasonHung])
	assert.Zero(t, snap.crashes[ReasonSignal])
	assert.Equal(t, ReasonMetalGPUError, snap.lastReason)
	require.Eventually(t, func() bool { return s.snap().restarts >= 1 && s.snap().up }, 5*time.Second, 10*time.Millisecond)
}

// A start that is never ready is ended after startup_timeout and started
// again with back-off: model_load_failed when the log says so, else
// startup_timeout.
func TestStartupTimeout(t *testing.T) {
	for script, want := range map[string]string{
		`printf 'Traceback (most recent call last):\nOSError: [Errno 48] Address already in use\n' >&2; exec sleep 300`:                               ReasonStartupTimeout,
		`printf 'Traceback (most recent call last):\n  File "/x/mlx_lm/server.py", line 385, in load_default\nValueError: bad\n' >&2; exec sleep 300`: ReasonModelLoadFailed,
	} {
		var loaded, hung atomic.Bool
		srv := engineAPI(t, &loaded, &hung)
		cfg := fastConfig(t, srv.URL, "sh", "-c", script)
		cfg.StartupTimeout = 700 * time.Millisecond
		s := startSupervisor(t, cfg)
		require.Eventually(t, func() bool { return s.snap().crashes[want] >= 2 }, 10*time.Second, 10*time.Millisecond, want)
		assert.GreaterOrEqual(t, s.snap().restarts, int64(1), want)
	}
}

// A failed load in mlx-lm 0.31's generation thread is seen by its
// traceback at once, before startup_timeout.
func TestLoadFailureInTheThreadIsSeenAtOnce(t *testing.T) {
	var loaded, hung atomic.Bool
	srv := engineAPI(t, &loaded, &hung)
	cfg := fastConfig(t, srv.URL, "sh", "-c", `printf 'Exception in thread Thread-1 (_generate):\nTraceback (most recent call last):\n  File "/x/mlx_lm/server.py", line 695, in _generate\n  File "/x/mlx_lm/server.py", line 385, in load_default\nhuggingface_hub.errors.RepositoryNotFoundError: 401 Client Error.\n' >&2; exec sleep 300`)
	start := time.Now()
	s := startSupervisor(t, cfg) // startup_timeout: the default 20 minutes
	require.Eventually(t, func() bool { return s.snap().crashes[ReasonModelLoadFailed] >= 1 }, 5*time.Second, 10*time.Millisecond)
	assert.Less(t, time.Since(start), 5*time.Second)
}

// Probes of an engine that never answers do not pile up: one is in flight
// at a time, whatever the number of checks.
func TestProbesOfAWedgedEngineDoNotPileUp(t *testing.T) {
	var inFlight, most, total atomic.Int64
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			_, _ = w.Write([]byte(`{"status": "ok"}`))
			return
		}
		total.Add(1)
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		select { // like mlx_lm's handler: the client going away does not end it
		case <-release:
		case <-time.After(5 * time.Second):
		}
	}))
	defer srv.Close()
	defer close(release)
	cfg := fastConfig(t, srv.URL)
	cfg.HealthCheck.Timeout = 50 * time.Millisecond
	s := newSupervisor(cfg, zaptest.NewLogger(t))
	require.NoError(t, s.start(context.Background(), nil))
	t.Cleanup(func() { _ = s.shutdown(context.Background()) })
	require.Eventually(t, func() bool { return s.snap().checks["fail"] >= 10 }, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, int64(1), most.Load(), "probes in flight at once")
	assert.Equal(t, int64(1), total.Load(), "probes sent")
}

// hungWithARequestWaiting starts a supervisor (hang_after 300 ms, then
// tune) whose engine was ready and then goes silent while the proxy has
// one request in flight; n is that count.
func hungWithARequestWaiting(t *testing.T, tune func(*Config)) (*supervisor, *atomic.Int64) {
	t.Helper()
	var loaded, hung atomic.Bool
	loaded.Store(true)
	srv := engineAPI(t, &loaded, &hung)
	cfg := fastConfig(t, srv.URL, "sleep", "300")
	cfg.HealthCheck.HangAfter = 300 * time.Millisecond
	tune(cfg)
	n := &atomic.Int64{}
	s := newSupervisor(cfg, zaptest.NewLogger(t))
	require.NoError(t, s.start(context.Background(), proxyHost{inFlight: n}))
	t.Cleanup(func() { _ = s.shutdown(context.Background()) })
	require.Eventually(t, func() bool { return s.snap().ready }, 5*time.Second, 10*time.Millisecond)
	n.Store(1)
	hung.Store(true)
	return s, n
}

// Requests in flight through the proxy are progress, streamed or not: a
// silent engine whose probes fail while a user's non-streamed request is
// in flight is not restarted; once none is, it is hung.
func TestInFlightRequestsAreProgress(t *testing.T) {
	s, n := hungWithARequestWaiting(t, func(*Config) {})
	require.Eventually(t, func() bool { return s.snap().checks["fail"] >= 8 }, 10*time.Second, 10*time.Millisecond)
	assert.Zero(t, s.snap().crashes[ReasonHung], "killed an engine with a request in flight")
	n.Store(0)
	require.Eventually(t, func() bool { return s.snap().crashes[ReasonHung] == 1 }, 10*time.Second, 10*time.Millisecond)
}

// Waiting requests excuse a silent engine for busy_limit only: a wedged
// generation thread under steady load always has requests waiting, and
// /health answers all the same (mlx_lm v0.31.3 server.py: the
// ThreadingHTTPServer's do_GET never waits for the generation thread).
func TestBusyLimitEndsTheExcuse(t *testing.T) {
	s, _ := hungWithARequestWaiting(t, func(c *Config) { c.HealthCheck.BusyLimit = 1500 * time.Millisecond })
	cfg := s.cfg
	began := time.Now()
	require.Eventually(t, func() bool { return s.snap().crashes[ReasonHung] == 1 }, 10*time.Second, 10*time.Millisecond,
		"a silent engine with a request always waiting is hung after busy_limit")
	assert.GreaterOrEqual(t, time.Since(began), cfg.HealthCheck.BusyLimit, "not before busy_limit")
}

// The access lines of requests mlx_lm's HTTP threads answer alone are no
// sign of the generation thread's work; any other line is.
func TestShowsGeneration(t *testing.T) {
	for line, want := range map[string]bool{
		`127.0.0.1 - - [06/Dec/2026 04:00:00] "GET /health HTTP/1.1" 200 -` + "\n":                                            false,
		`127.0.0.1 - - [06/Dec/2026 04:00:00] "GET /v1/models HTTP/1.1" 200 -` + "\r\n":                                       false,
		`::1 - - [06/Dec/2026 04:00:00] "OPTIONS /v1/chat/completions HTTP/1.1" 204 -` + "\n":                                 false,
		`127.0.0.1 - - [06/Dec/2026 04:00:00] code 501, message Unsupported method ('HEAD')` + "\n":                           false,
		`127.0.0.1 - - [06/Dec/2026 04:00:00] "POST /v1/chat/completions HTTP/1.1" 200 -` + "\n":                              true,
		"2026-12-06 04:00:00,000 - INFO - Prompt processing progress: 512/2048\n":                                             true,
		`127.0.0.1 - - [06/Dec/2026 04:00:00] "GET /health HTTP/1.1" 200 -` + "\nException in thread Thread-2 (_generate):\n": true,
		"\n": false,
	} {
		assert.Equal(t, want, showsGeneration([]byte(line)), "%q", line)
	}
}
