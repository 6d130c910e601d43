//go:build e2e && fault

package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

// fastProbes make the supervisor probe every 500 ms with a 500 ms timeout
// and call an engine hung after 2 s of failures.
var fastProbes = []string{
	"receivers::mlx_supervisor::health_check::interval=500ms",
	"receivers::mlx_supervisor::health_check::timeout=500ms",
	"receivers::mlx_supervisor::health_check::hang_after=2s",
}

// quickRestart restarts a dead engine after 200 ms instead of 3 s.
const quickRestart = "receivers::mlx_supervisor::restart::initial_backoff=200ms"

func supervisorValue(f *faultStack, name string, labels ...string) float64 {
	sc, err := f.scrape("prometheus/supervisor")
	if err != nil {
		return -1
	}
	v, _ := sc.Value(name, labels...)
	return v
}

// The engine is killed (SIGKILL) while eight clients stream through the
// proxy: the streams in flight end with an error, the supervisor restarts
// the engine, and clients succeed again without anything done by hand.
func TestFaultEngineKilledMidStreamUnderLoad(t *testing.T) {
	f := startFaultCollector(t, collectorOptions{configs: demoConfigs, sets: []string{quickRestart}})
	waitEngineReady(f.stack)
	url := f.proxyURL("/v1/chat/completions")
	require.False(t, completion(context.Background(), url, true, 8), "warm-up")
	f.mark()

	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var killedAt atomic.Int64
	var okAfter atomic.Int64
	go func() {
		time.Sleep(3 * time.Second)
		for _, pid := range enginePids(f.stack) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		killedAt.Store(time.Now().UnixNano())
	}()
	var backAt atomic.Int64 // when the first request begun after the kill succeeded
	const clients, backoff = 8, 100 * time.Millisecond
	load := runLoad(ctx, clients, 10_000, func(ctx context.Context, _ int) bool {
		began := time.Now().UnixNano()
		failed := completion(ctx, url, true, 48)
		k := killedAt.Load()
		if !failed && k > 0 && began > k {
			backAt.CompareAndSwap(0, time.Now().UnixNano())
		}
		if !failed && k > 0 && time.Now().UnixNano()-k > int64(2*time.Second) {
			okAfter.Add(1)
		}
		if failed {
			time.Sleep(backoff) // a client backs off
		}
		return failed
	})

	assert.GreaterOrEqual(t, supervisorValue(f, "mlx_server_crashes_total", "reason", "signal"), 1.0)
	assert.GreaterOrEqual(t, supervisorValue(f, "mlx_server_restarts_total"), 1.0)
	assert.Positive(t, load.failed.Load(), "the streams in flight were cut")
	// Only the streams in flight at the kill and the tries while the engine
	// was down failed: each client fails at most once per backoff while it
	// is down, and once more for the request it had in flight.
	require.NotZero(t, backAt.Load(), "a request begun after the kill succeeded")
	down := time.Duration(backAt.Load() - killedAt.Load())
	t.Logf("the engine was back %s after the kill", down.Round(time.Millisecond))
	assert.LessOrEqual(t, load.failed.Load(), int64(clients)*(int64(down/backoff)+2), "only those in flight and during the restart failed")
	assert.Positive(t, okAfter.Load(), "clients succeed again after the restart")
	f.finish(t, faultRow{name: "engine killed mid-stream, 8 streaming clients", sent: load.sent.Load(), failed: load.failed.Load(), hasFailed: true,
		note: "failed: streams in flight at the kill and requests during the restart"})
}

// The generation thread wedges (every completion waits, nothing is
// printed, /health and /v1/models still answer, as mlx_lm's HTTP threads
// do: mlx_lm v0.31.3 server.py, do_GET never waits for the generation
// thread): requests wait, and with four clients one is always
// waiting, which excuses the silence only for busy_limit. The supervisor
// then finds it hung and replaces it, the waiting requests get an error,
// and clients succeed again. (Before busy_limit, a wedged engine under
// load was "busy" for as long as requests kept coming; before D7 the
// simulator's hang blocked /health too, which hid that.)
func TestFaultEngineHung(t *testing.T) {
	f := startFaultCollector(t, collectorOptions{configs: append(demoConfigs, hangOnceOverlay(t, 20)),
		sets: append([]string{quickRestart, "receivers::mlx_supervisor::health_check::busy_limit=5s"}, fastProbes...)})
	waitEngineReady(f.stack)
	url := f.proxyURL("/v1/chat/completions")
	f.mark()

	// Load until the hung engine has been replaced.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() {
		for ctx.Err() == nil && supervisorValue(f, "mlx_server_crashes_total", "reason", "hung") < 1 {
			time.Sleep(100 * time.Millisecond)
		}
		cancel()
	}()
	load := runLoad(ctx, 4, 10_000, func(ctx context.Context, _ int) bool {
		failed := completion(ctx, url, false, 8)
		if failed {
			time.Sleep(100 * time.Millisecond) // a client backs off
		}
		return failed
	})
	hung := supervisorValue(f, "mlx_server_crashes_total", "reason", "hung")
	assert.GreaterOrEqual(t, hung, 1.0, "the hung engine was replaced")
	f.waitFor("prometheus/supervisor", 30*time.Second, "the new engine ready", func(sc *promtext.Scrape) bool {
		restarts, _ := sc.Value("mlx_server_restarts_total")
		ready, _ := sc.Value("mlx_server_ready")
		return restarts >= 1 && ready == 1
	})
	assert.False(t, completion(context.Background(), url, false, 8), "the new engine answers")
	assert.Less(t, load.failed.Load(), load.sent.Load(), "not every request failed")
	f.finish(t, faultRow{name: "engine hung, 4 clients", sent: load.sent.Load(), failed: load.failed.Load(), hasFailed: true,
		note: "failed: requests held by the hung engine until it was replaced"})
}

// A long unbatchable request (a seed: mlx_lm's one generation thread
// serves it alone) makes every completion probe wait and fail for
// seconds. Its tokens flowing through the proxy prove the engine alive:
// no restart, and the client gets its whole answer. (Before, the
// supervisor killed the busy engine after hang_after, with the request in
// flight.)
func TestFaultBusyEngineIsNotRestarted(t *testing.T) {
	f := startSlowEngine(t, "6")
	// Reasoning and answer are 24 to 144 tokens: 4 to 24 s at 6 tokens/s,
	// all of it past hang_after.
	_, body := askProxy(t, f, `{"model": "mlx-community/Qwen3-4B-4bit", "messages": [{"role": "user", "content": "Write a long essay"}], "stream": true, "seed": 7, "chat_template_kwargs": {"enable_thinking": true}}`)
	whole := strings.HasSuffix(string(body), "data: [DONE]\n\n")
	assert.True(t, whole, "the whole stream reached the client")
	assertBusyNotRestarted(t, f)
	assert.Contains(t, f.out.String(), "makes progress; not restarting it")
	failed := int64(0)
	if !whole {
		failed = 1
	}
	f.finish(t, faultRow{name: "long unbatchable request (seed), probes failing", sent: 1, failed: failed, hasFailed: true,
		note: "restarts: 0"})
}

// startSlowEngine starts the collector with an engine that decodes
// tokensPerSecond and probes every 500 ms; it returns once the engine is
// ready, with the fault row's clock started.
func startSlowEngine(t *testing.T, tokensPerSecond string) *faultStack {
	t.Helper()
	f := startFaultCollector(t, collectorOptions{configs: append(demoConfigs, engineOverlay(t, "--sim-decode-tokens-per-second", tokensPerSecond)),
		sets: fastProbes})
	waitEngineReady(f.stack)
	f.mark()
	return f
}

// askProxy posts a chat completion through the proxy and reads the whole
// answer.
func askProxy(t *testing.T, f *faultStack, body string) (int, []byte) {
	t.Helper()
	resp, err := http.Post(f.proxyURL("/v1/chat/completions"), "application/json", strings.NewReader(body))
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	return resp.StatusCode, b
}

// assertBusyNotRestarted: once the long request is over the engine is
// ready again, its probes failed meanwhile, and it was never restarted.
func assertBusyNotRestarted(t *testing.T, f *faultStack) {
	t.Helper()
	sc := f.waitFor("prometheus/supervisor", 10*time.Second, "ready again", func(sc *promtext.Scrape) bool {
		v, _ := sc.Value("mlx_server_ready")
		return v == 1
	})
	assert.Positive(t, value(t, sc, "mlx_server_health_checks_total", "result", "fail"), "the probes did fail while the engine was busy")
	assert.Equal(t, 0.0, value(t, sc, "mlx_server_restarts_total"))
	assert.Equal(t, 0.0, value(t, sc, "mlx_server_crashes_total", "reason", "hung"))
}

// hangOnceOverlay runs the simulated engine with --sim-hang-after n the
// first time only: the engine the supervisor starts in its place serves.
// (Completion probes count too, so an engine started with the flag every
// time would hang again after n of them.)
func hangOnceOverlay(t *testing.T, n int) string {
	t.Helper()
	mark := filepath.Join(t.TempDir(), "started-once")
	return commandOverlay(t, fmt.Sprintf("#!/bin/sh\nif [ ! -e %q ]; then : > %q; exec \"$MLXSIM\" \"$@\" --sim-hang-after %d; fi\nexec \"$MLXSIM\" \"$@\"\n", mark, mark, n), simArgs)
}
