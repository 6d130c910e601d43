//go:build e2e && fault

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The engine as pip installs it today (mlx-lm 0.31.3 with MLX 0.32.1)
// fails differently from the older pair: a Metal fault kills only the
// generation thread (the process and /health stay up, every completion
// waits), and the requests of our own never make it drain its batch.

// metalOnceOverlay runs the simulated engine with --sim-metal-fault-after
// n under MLX mlxVersion (and mlx-lm mlxLMVersion, "" for the pair's) the
// first time only.
func metalOnceOverlay(t *testing.T, n int, mlxVersion, mlxLMVersion string) string {
	t.Helper()
	mark := filepath.Join(t.TempDir(), "started-once")
	lm := ""
	if mlxLMVersion != "" {
		lm = " --sim-mlx-lm-version " + mlxLMVersion
	}
	return commandOverlay(t, fmt.Sprintf("#!/bin/sh\nif [ ! -e %q ]; then : > %q; exec \"$MLXSIM\" \"$@\" --sim-metal-fault-after %d --sim-mlx-version %s%s; fi\nexec \"$MLXSIM\" \"$@\"\n", mark, mark, n, mlxVersion, lm), simArgs)
}

// The generation thread dies of a Metal fault while four clients stream
// through the proxy, in both MLX generations and both mlx-lm eras of MLX
// 0.32 (0.31.3: seen in the log; 0.32.0: /health's 503): the supervisor
// names it metal_gpu_error (not hung), restarts the engine, and clients
// succeed again.
func TestFaultMetalFaultUnderLoad(t *testing.T) {
	for _, v := range []struct{ mlx, mlxLM string }{{"0.32.1", "0.31.3"}, {"0.32.1", "0.32.0"}, {"0.30", ""}} {
		mlx := v.mlx
		if v.mlxLM != "" {
			mlx += ", mlx-lm " + v.mlxLM
		}
		t.Run("MLX "+mlx, func(t *testing.T) {
			f := startFaultCollector(t, collectorOptions{configs: append(demoConfigs, metalOnceOverlay(t, 12, v.mlx, v.mlxLM)), sets: append([]string{quickRestart}, fastProbes...)})
			waitEngineReady(f.stack)
			url := f.proxyURL("/v1/chat/completions")
			f.mark()
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			var okAfter atomic.Int64
			load := runLoad(ctx, 4, 10_000, func(ctx context.Context, _ int) bool {
				rctx, rcancel := context.WithTimeout(ctx, 4*time.Second)
				defer rcancel()
				failed := completion(rctx, url, true, 16)
				if !failed && supervisorValue(f, "mlx_server_restarts_total") >= 1 {
					okAfter.Add(1)
				}
				if failed {
					time.Sleep(100 * time.Millisecond)
				}
				return failed
			})
			assert.Equal(t, 1.0, supervisorValue(f, "mlx_server_crashes_total", "reason", "metal_gpu_error"))
			assert.Equal(t, 0.0, supervisorValue(f, "mlx_server_crashes_total", "reason", "hung"))
			assert.GreaterOrEqual(t, supervisorValue(f, "mlx_server_restarts_total"), 1.0)
			assert.Positive(t, okAfter.Load(), "clients succeed again after the restart")
			f.finish(t, faultRow{name: "Metal fault (MLX " + mlx + "), 4 streaming clients", sent: load.sent.Load(), failed: load.failed.Load(), hasFailed: true,
				note: "failed: requests in flight at the fault and during the restart"})
		})
	}
}

// A long non-streamed unbatchable request (a seed, about 60 s) under
// failing probes: no byte reaches the proxy before the end and the engine
// prints nothing while it decodes, but the request in flight through the
// proxy is progress: no restart, and the client gets its answer. (Before,
// the supervisor killed it as hung after hang_after.)
func TestFaultLongNonStreamedRequestIsNotRestarted(t *testing.T) {
	// Seed 7's answer is 112 tokens: 60 s at 1.87 tokens/s.
	f := startSlowEngine(t, "1.87")
	began := time.Now()
	status, body := askProxy(t, f, `{"messages": [{"role": "user", "content": "Write a long essay"}], "seed": 7, "max_tokens": 400, "chat_template_kwargs": {"enable_thinking": true}}`)
	took := time.Since(began)
	t.Logf("the request took %s", took.Round(time.Second))
	assert.Equal(t, http.StatusOK, status, string(body))
	assert.Contains(t, string(body), `"finish_reason": "stop"`)
	assert.Greater(t, took, 50*time.Second)
	assertBusyNotRestarted(t, f)
	failed := int64(0)
	if status != http.StatusOK {
		failed = 1
	}
	f.finish(t, faultRow{name: "long non-streamed request (seed, 60 s), probes failing", sent: 1, failed: failed, hasFailed: true,
		note: fmt.Sprintf("restarts: 0; took %s", took.Round(time.Second))})
}

// The probe names the model as the proxy sends it (default_model), so it
// joins the running batch instead of making the engine drain it: while a
// long batched request runs, every probe answers.
func TestFaultProbeDoesNotDrainTheBatch(t *testing.T) {
	f := startSlowEngine(t, "8")
	before := supervisorValue(f, "mlx_server_health_checks_total", "result", "fail")
	okBefore := supervisorValue(f, "mlx_server_health_checks_total", "result", "ok")
	began := time.Now()
	askProxy(t, f, `{"messages": [{"role": "user", "content": "Write a long essay"}], "max_tokens": 400}`)
	took := time.Since(began)
	require.Greater(t, took, 5*time.Second, "a long generation")
	assert.Equal(t, before, supervisorValue(f, "mlx_server_health_checks_total", "result", "fail"), "a probe waited for the batch")
	assert.GreaterOrEqual(t, supervisorValue(f, "mlx_server_health_checks_total", "result", "ok")-okBefore, 4.0, "probes answered during the generation")
	f.finish(t, faultRow{name: "probes during a long batched request", sent: 1, hasFailed: true,
		note: fmt.Sprintf("no probe failed in %s", took.Round(time.Second))})
}
