//go:build unix

package supervisorreceiver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap/zaptest"

	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/metrictest"
)

// fastConfig is a spawn or attach config with test-sized timings.
func fastConfig(t *testing.T, endpoint string, command ...string) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.Endpoint = endpoint
	cfg.Command = command
	cfg.Log.Path = filepath.Join(t.TempDir(), "server.log")
	cfg.HealthCheck.Interval = 50 * time.Millisecond
	cfg.HealthCheck.StartupInterval = 20 * time.Millisecond
	cfg.HealthCheck.Timeout = 500 * time.Millisecond
	cfg.Restart.InitialBackoff = 50 * time.Millisecond
	cfg.Restart.MaxBackoff = 200 * time.Millisecond
	cfg.ShutdownGracePeriod = 300 * time.Millisecond
	require.NoError(t, cfg.Validate())
	return cfg
}

func startSupervisor(t *testing.T, cfg *Config) *supervisor {
	s := newSupervisor(cfg, zaptest.NewLogger(t))
	require.NoError(t, s.start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { _ = s.shutdown(context.Background()) })
	return s
}

func (s *supervisor) snap() snapshot { return s.st.snapshot(s.cfg.SpawnMode(), time.Now()) }

// engineAPI fakes the engine's HTTP side: /health always answers, the
// completion only once loaded is set and while hung is not.
func engineAPI(t *testing.T, loaded, hung *atomic.Bool) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/health":
			_, _ = w.Write([]byte(`{"status": "ok"}`))
		case "/v1/chat/completions":
			assert.Equal(t, userAgent, r.Header.Get("User-Agent"))
			if !loaded.Load() || hung.Load() {
				time.Sleep(600 * time.Millisecond) // past the probe timeout
				return
			}
			_, _ = w.Write([]byte(`{"id": "chatcmpl-1", "choices": [{"index": 0, "finish_reason": "length"}]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestCrashIsClassifiedCountedAndRestarted(t *testing.T) {
	cfg := fastConfig(t, "http://127.0.0.1:1", "sh", "-c",
		`echo "2026-08-04 03:12:09,101 - INFO - Starting httpd at 127.0.0.1 on port 8081..." >&2
		 echo "[METAL] Command buffer execution failed: Caused GPU Timeout Error" >&2; exit 3`)
	s := startSupervisor(t, cfg)
	require.Eventually(t, func() bool { return s.snap().crashes[ReasonMetalGPUError] >= 3 }, 10*time.Second, 10*time.Millisecond)
	snap := s.snap()
	assert.GreaterOrEqual(t, snap.restarts, int64(2))
	assert.Equal(t, 3, snap.lastExit)
	assert.Equal(t, ReasonMetalGPUError, snap.lastReason)
	assert.Zero(t, snap.crashes[ReasonExit])
	log, err := os.ReadFile(cfg.Log.Path)
	require.NoError(t, err)
	assert.Contains(t, string(log), "[METAL] Command buffer execution failed", "the engine's stderr goes to the server log")
}

func TestBackoffStateBetweenCrashes(t *testing.T) {
	cfg := fastConfig(t, "http://127.0.0.1:1", "sh", "-c", "exit 0")
	cfg.Restart.InitialBackoff = time.Second
	cfg.Restart.MaxBackoff = 2 * time.Second
	s := startSupervisor(t, cfg)
	require.Eventually(t, func() bool { return s.snap().state == stateBackoff }, 5*time.Second, 5*time.Millisecond)
	snap := s.snap()
	assert.Equal(t, time.Second, snap.backoff)
	assert.False(t, snap.up)
	assert.Equal(t, int64(1), snap.crashes[ReasonExit])
	require.Eventually(t, func() bool { return s.snap().backoff == 2*time.Second }, 5*time.Second, 5*time.Millisecond, "the second wait doubles")
}

func TestExecFailed(t *testing.T) {
	cfg := fastConfig(t, "http://127.0.0.1:1", filepath.Join(t.TempDir(), "no-such-engine"))
	s := startSupervisor(t, cfg)
	require.Eventually(t, func() bool { return s.snap().crashes[ReasonExecFailed] >= 1 }, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, -1, s.snap().lastExit)
}

func TestShutdownLeavesNoProcess(t *testing.T) {
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	// A leader that ignores SIGTERM and a child of its own, like mlx.launch
	// and its rank processes.
	cfg := fastConfig(t, "http://127.0.0.1:1", "sh", "-c",
		`trap "" TERM; sleep 300 & echo $! >> `+pids+`; echo $$ >> `+pids+`; wait`)
	s := newSupervisor(cfg, zaptest.NewLogger(t))
	require.NoError(t, s.start(context.Background(), componenttest.NewNopHost()))
	var ids []int
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(pids)
		ids = nil
		for _, f := range strings.Fields(string(b)) {
			n, _ := strconv.Atoi(f)
			ids = append(ids, n)
		}
		return len(ids) == 2 && s.snap().up
	}, 5*time.Second, 10*time.Millisecond)
	for _, id := range ids {
		require.True(t, alive(id), "pid %d runs before shutdown", id)
	}
	require.NoError(t, s.shutdown(context.Background()))
	for _, id := range ids {
		assert.Eventually(t, func() bool { return !alive(id) }, 2*time.Second, 10*time.Millisecond, "pid %d is gone after shutdown", id)
	}
	assert.False(t, s.snap().up)
}

// alive says whether pid runs (a zombie waiting to be reaped does not).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // not Linux: kill(0) is all we have
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

func TestReadinessWaitsForTheModel(t *testing.T) {
	var loaded, hung atomic.Bool
	srv := engineAPI(t, &loaded, &hung)
	s := startSupervisor(t, fastConfig(t, srv.URL)) // attach mode
	require.Eventually(t, func() bool { return s.snap().checks["fail"] >= 2 }, 5*time.Second, 10*time.Millisecond)
	snap := s.snap()
	assert.True(t, snap.up, "/health answers before the model is loaded")
	assert.False(t, snap.ready)
	assert.Equal(t, stateStarting, snap.state)
	loaded.Store(true)
	require.Eventually(t, func() bool { return s.snap().ready }, 5*time.Second, 10*time.Millisecond)
	snap = s.snap()
	assert.Equal(t, stateRunning, snap.state)
	assert.GreaterOrEqual(t, snap.checks["ok"], int64(1))
	assert.Zero(t, snap.restarts, "attach mode restarts nothing")
}

func TestHungEngineIsRestarted(t *testing.T) {
	var loaded, hung atomic.Bool
	loaded.Store(true)
	srv := engineAPI(t, &loaded, &hung)
	cfg := fastConfig(t, srv.URL, "sleep", "300")
	cfg.HealthCheck.HangAfter = 300 * time.Millisecond
	s := startSupervisor(t, cfg)
	require.Eventually(t, func() bool { return s.snap().ready }, 5*time.Second, 10*time.Millisecond)
	hung.Store(true)
	require.Eventually(t, func() bool { return s.snap().crashes[ReasonHung] == 1 }, 10*time.Second, 10*time.Millisecond)
	snap := s.snap()
	assert.Equal(t, ReasonHung, snap.lastReason)
	assert.Zero(t, snap.crashes[ReasonSignal], "a stop the supervisor asked for is not a signal crash")
	hung.Store(false)
	require.Eventually(t, func() bool { s := s.snap(); return s.ready && s.up && s.restarts == 1 }, 10*time.Second, 10*time.Millisecond)
}

func TestReceiverLifecycleEmitsMetrics(t *testing.T) {
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.CollectionInterval = 20 * time.Millisecond
	cfg.Endpoint = "http://127.0.0.1:1"
	sink := new(consumertest.MetricsSink)
	rcv, err := f.CreateMetrics(context.Background(), receivertest.NewNopSettings(componentType), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, rcv.Shutdown(context.Background()), "Shutdown is safe without Start")

	rcv, err = f.CreateMetrics(context.Background(), receivertest.NewNopSettings(componentType), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, rcv.Start(context.Background(), componenttest.NewNopHost()))
	require.Eventually(t, func() bool { return sink.DataPointCount() > 0 }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, rcv.Shutdown(context.Background()))
	md := sink.AllMetrics()[0]
	assert.Equal(t, 13+5, md.MetricCount(), "the supervisor's series and the role's mlx_agent_*")
	p := metrictest.Points(t, md, metrictest.Without("node", fleet.NodeName("")))
	assert.Equal(t, 1.0, p["mlx_agent_up{role=supervisor}"])
}

func TestProbesSlowDownOnceReady(t *testing.T) {
	var loaded, hung atomic.Bool
	loaded.Store(true)
	srv := engineAPI(t, &loaded, &hung)
	cfg := fastConfig(t, srv.URL)
	cfg.HealthCheck.Interval = time.Hour
	s := startSupervisor(t, cfg)
	require.Eventually(t, func() bool { return s.snap().ready }, 5*time.Second, 10*time.Millisecond)
	// A witness with the same startup interval, started now, whose engine
	// never answers: it stays at the startup interval. Once it has probed
	// ten times, ten startup intervals have passed at the least (a timer
	// only fires late); a ready supervisor still at the startup interval
	// would have probed again by then.
	witness := startSupervisor(t, fastConfig(t, "http://127.0.0.1:1"))
	require.Eventually(t, func() bool {
		n := int64(0)
		for _, c := range witness.snap().checks {
			n += c
		}
		return n >= 10
	}, 30*time.Second, 10*time.Millisecond, "the witness probes at its startup interval")
	assert.False(t, witness.snap().ready)
	assert.Equal(t, map[string]int64{"ok": 1}, nonZero(s.snap().checks), "after the first success the next probe waits the full interval")
}

// nonZero is counts without its zero entries.
func nonZero(counts map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range counts {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

func TestRestartedEngineIsProbedAtOnce(t *testing.T) {
	var loaded, hung atomic.Bool
	loaded.Store(true)
	srv := engineAPI(t, &loaded, &hung)
	// The engine lives a second, then exits; probes after ready wait an hour.
	cfg := fastConfig(t, srv.URL, "sh", "-c", "sleep 1")
	cfg.HealthCheck.Interval = time.Hour
	s := startSupervisor(t, cfg)
	require.Eventually(t, func() bool { return s.snap().ready }, 5*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool { s := s.snap(); return s.restarts >= 1 && s.ready }, 10*time.Second, 10*time.Millisecond,
		"the restarted engine is probed without waiting the full interval")
}

// A panic in a supervisor loop is recovered, logged at error level,
// counted by loop, and the loop runs again: the collector and the
// supervision go on.
func TestAPanickingLoopIsRecoveredAndStartedAgain(t *testing.T) {
	s := newSupervisor(fastConfig(t, "http://127.0.0.1:1"), zaptest.NewLogger(t))
	ctx, cancel := context.WithCancel(context.Background())
	var runs atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.keep(ctx, loopProber, func(ctx context.Context) {
			if runs.Add(1) == 1 {
				panic("boom")
			}
			<-ctx.Done()
		})
	}()
	require.Eventually(t, func() bool { return runs.Load() == 2 }, 5*time.Second, 10*time.Millisecond, "the loop runs again")
	cancel()
	<-done
	snap := s.st.snapshot(false, time.Now())
	assert.Equal(t, int64(1), snap.panics[loopProber])
	assert.Equal(t, 1.0, metrictest.Points(t, buildMetrics(snap, "m", time.Now(), time.Now()))["mlx_supervisor_panics_total{where=prober}"])
}
