//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/doccheck"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

var demoConfigs = []string{"config/mlx.yaml", "config/demo.yaml"}

// engineOverlay writes a config that runs the simulated engine with extra
// flags (lists replace, so this is the whole command).
func engineOverlay(t *testing.T, extra ...string) string {
	t.Helper()
	return commandOverlay(t, "", append([]string{"${env:MLXSIM}", "--model", "mlx-community/Qwen3-4B-4bit", "--host", "127.0.0.1", "--port", "${env:MLX_ENGINE_PORT}"}, extra...))
}

// commandOverlay writes a config whose supervisor runs argv; script, when
// set, is a shell script of the test's own that argv's first element
// names (it gets $MLXSIM through env_passthrough).
func commandOverlay(t *testing.T, script string, argv []string) string {
	t.Helper()
	y := "receivers:\n  mlx_supervisor:\n"
	if script != "" {
		argv = append([]string{filepath.Join(t.TempDir(), "engine.sh")}, argv...)
		require.NoError(t, os.WriteFile(argv[0], []byte(script), 0o755))
		y += "    env_passthrough: [MLXSIM]\n"
	}
	y += "    command:\n"
	for _, a := range argv {
		y += fmt.Sprintf("      - %q\n", a)
	}
	return writeOverlay(t, "engine.yaml", y)
}

// simArgs are the simulated engine's arguments for a script that runs it.
var simArgs = []string{"--model", "mlx-community/Qwen3-4B-4bit", "--host", "127.0.0.1", "--port", "${env:MLX_ENGINE_PORT}", "--sim-load-delay", "0s"}

func enginePids(s *stack) []int {
	return processesRunning(binary(s.t, "MLXSIM"), strconv.Itoa(s.enginePort))
}

func TestReadyOnlyAfterTheModelLoads(t *testing.T) {
	const loadDelay = 3 * time.Second
	s := startCollector(t, collectorOptions{
		configs: demoConfigs,
		env:     map[string]string{"MLXSIM_LOAD_DELAY": loadDelay.String()},
	})
	start := time.Now()

	// The engine's HTTP side answers while the model is still loading...
	var health *http.Response
	require.Eventually(t, func() bool {
		r, err := http.Get(s.engineURL("/health"))
		if err == nil {
			health = r
			r.Body.Close()
		}
		return err == nil
	}, 10*time.Second, 20*time.Millisecond)
	assert.Equal(t, http.StatusOK, health.StatusCode)

	// ...but the supervisor does not call it ready.
	sc := s.waitFor("prometheus/supervisor", 10*time.Second, "the engine process up", func(sc *promtext.Scrape) bool {
		v, _ := sc.Value("mlx_server_up")
		return v == 1
	})
	if time.Since(start) < loadDelay-500*time.Millisecond {
		assert.Equal(t, 0.0, value(t, sc, "mlx_server_ready"), "not ready while the model loads")
		assert.Equal(t, 2.0, value(t, sc, "mlx_server_state"), "starting")
		assert.Equal(t, 0.0, value(t, sc, "mlx_model_loaded", "model", "mlx-community/Qwen3-4B-4bit"))
	}

	sc = s.waitFor("prometheus/supervisor", 30*time.Second, "mlx_server_ready 1", func(sc *promtext.Scrape) bool {
		v, _ := sc.Value("mlx_server_ready")
		return v == 1
	})
	assert.GreaterOrEqual(t, time.Since(start), loadDelay, "ready comes after the model-load delay")
	assert.GreaterOrEqual(t, value(t, sc, "mlx_server_uptime_seconds"), (loadDelay - time.Second).Seconds())
	assert.Equal(t, 1.0, value(t, sc, "mlx_server_state"), "running")
	assert.Equal(t, 1.0, value(t, sc, "mlx_model_loaded", "model", "mlx-community/Qwen3-4B-4bit"))
	assert.GreaterOrEqual(t, value(t, sc, "mlx_server_health_checks_total", "result", "ok"), 1.0)
	assert.Equal(t, 0.0, value(t, sc, "mlx_server_restarts_total"))

	// The engine's output lands in the server log, in mlx_lm's format.
	log, err := os.ReadFile(s.serverLog())
	require.NoError(t, err)
	assert.Contains(t, string(log), "Starting httpd at 127.0.0.1 on port "+strconv.Itoa(s.enginePort)+"...")
	assert.Contains(t, string(log), " - INFO - Prompt Cache: ")
}

func TestScrapeServesExactlyTheDocumentedSeries(t *testing.T) {
	s := startCollector(t, collectorOptions{configs: demoConfigs, env: map[string]string{"MLXSIM_LOAD_DELAY": "0s"}})
	// :9105 serves the supervisor's series and the judge loop's.
	documented, err := doccheck.MetadataNames(filepath.Join(repoRoot, "receiver/supervisorreceiver/metadata.yaml"))
	require.NoError(t, err)
	judged, err := doccheck.MetadataNames(filepath.Join(repoRoot, "receiver/judgereceiver/metadata.yaml"))
	require.NoError(t, err)
	for _, n := range judged {
		// mlx_judge_score only once the judge has scored something; the
		// fleet contract's series once (a role label tells the two apart).
		if n != "mlx_judge_score" && !slices.Contains(documented, n) {
			documented = append(documented, n)
		}
	}
	// The two receivers report on their own clocks: wait for both.
	sc := s.waitFor("prometheus/supervisor", 30*time.Second, "mlx_server_ready 1 and the judge's first report", func(sc *promtext.Scrape) bool {
		v, _ := sc.Value("mlx_server_ready")
		return v == 1 && sc.Families["mlx_judge_traces_total"] != nil
	})
	sort.Strings(documented)
	assert.Equal(t, documented, sc.Names())
	// Labels are the data points' own and the node: no scope or resource
	// labels leak in.
	n := `node="` + fleet.NodeName("") + `"`
	assert.Equal(t, []string{`mlx_server_health_checks_total{` + n + `,result="fail"}`, `mlx_server_health_checks_total{` + n + `,result="ok"}`, `mlx_server_health_checks_total{` + n + `,result="skipped"}`},
		sc.Series("mlx_server_health_checks_total"))
	assert.Equal(t, []string{`mlx_server_state{` + n + `}`}, sc.Series("mlx_server_state"))
	assert.Equal(t, []string{`mlx_agent_up{` + n + `,role="judge"}`, `mlx_agent_up{` + n + `,role="supervisor"}`}, sc.Series("mlx_agent_up"), "each role's series once")
	assert.Equal(t, "COUNTER", sc.Families["mlx_server_crashes_total"].GetType().String())
	assert.Equal(t, "GAUGE", sc.Families["mlx_server_last_crash_reason"].GetType().String())
}

// A Metal fault, in both MLX generations: before 0.32 the process aborts
// (SIGABRT); from 0.32 (what pip installs with mlx-lm 0.31.3) only the
// generation thread dies, /health stays up and nothing exits, so the
// supervisor stops it itself on the traceback (SIGTERM). Either way the
// crash is metal_gpu_error and the engine serves again.
func TestMetalFaultIsCountedAndTheEngineRestarted(t *testing.T) {
	for _, tc := range []struct {
		mlx  string
		exit float64
	}{{"0.30", -6}, {"0.32.1", -15}} {
		t.Run("MLX "+tc.mlx, func(t *testing.T) { testMetalFault(t, tc.mlx, tc.exit) })
	}
}

func testMetalFault(t *testing.T, mlxVersion string, exitCode float64) {
	// The first probe is request 1; the test's own request is the second,
	// and the engine meets a Metal fault on it.
	overlay := engineOverlay(t, "--sim-load-delay", "1s", "--sim-metal-fault-after", "2", "--sim-mlx-version", mlxVersion)
	s := startCollector(t, collectorOptions{
		configs: append(demoConfigs, overlay),
		// After readiness, no probe until the test is over, so the count
		// of requests the engine sees is the test's.
		sets: []string{"receivers::mlx_supervisor::health_check::interval=1h"},
	})
	s.waitFor("prometheus/supervisor", 30*time.Second, "mlx_server_ready 1", func(sc *promtext.Scrape) bool {
		v, _ := sc.Value("mlx_server_ready")
		return v == 1
	})
	firstPids := enginePids(s)
	require.Len(t, firstPids, 1)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if resp, err := chat(ctx, s.engineURL("/v1/chat/completions")); err == nil {
		resp.Body.Close()
	}
	faulted := time.Now()

	sc := s.waitFor("prometheus/supervisor", 30*time.Second, "a metal_gpu_error crash and a restart", func(sc *promtext.Scrape) bool {
		c, _ := sc.Value("mlx_server_crashes_total", "reason", "metal_gpu_error")
		r, _ := sc.Value("mlx_server_restarts_total")
		return c == 1 && r == 1
	})
	assert.Equal(t, 1.0, value(t, sc, "mlx_server_last_crash_reason", "reason", "metal_gpu_error"))
	assert.Equal(t, 0.0, value(t, sc, "mlx_server_last_crash_reason", "reason", "signal"))
	assert.Equal(t, exitCode, value(t, sc, "mlx_server_last_exit_code"), "SIGABRT (abort) or SIGTERM (the supervisor)")
	for _, r := range []string{"oom", "python_error", "ring_error", "signal", "exit", "exec_failed", "hung", "model_load_failed", "startup_timeout"} {
		assert.Equal(t, 0.0, value(t, sc, "mlx_server_crashes_total", "reason", r), r)
	}

	// It comes back: a new process, ready again, within the back-off, the
	// load and a probe interval (not after hang_after of failed probes).
	s.waitFor("prometheus/supervisor", 30*time.Second, "ready after the restart", func(sc *promtext.Scrape) bool {
		v, _ := sc.Value("mlx_server_ready")
		return v == 1
	})
	assert.Less(t, time.Since(faulted), 15*time.Second)
	pids := enginePids(s)
	require.Len(t, pids, 1)
	assert.NotEqual(t, firstPids[0], pids[0])
	resp, err := chat(ctx, s.engineURL("/v1/chat/completions"))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the new engine serves")
}

// A model that cannot be loaded: under mlx-lm 0.31 (the default pair) the
// generation thread dies and the process stays up, never ready; under
// 0.30 the process exits 1. Both are model_load_failed, within
// startup_timeout, and restarted with back-off.
func TestModelLoadFailureIsNamedAndRestarted(t *testing.T) {
	for _, mlx := range []string{"0.32.1", "0.30"} {
		t.Run("MLX "+mlx, func(t *testing.T) {
			const startupTimeout = 20 * time.Second
			s := startCollector(t, collectorOptions{
				configs: append(demoConfigs, engineOverlay(t, "--sim-load-delay", "500ms", "--sim-load-fail", "--sim-mlx-version", mlx)),
				sets:    []string{"receivers::mlx_supervisor::startup_timeout=" + startupTimeout.String()},
			})
			started := time.Now()
			sc := s.waitFor("prometheus/supervisor", startupTimeout, "a model_load_failed crash", func(sc *promtext.Scrape) bool {
				c, _ := sc.Value("mlx_server_crashes_total", "reason", "model_load_failed")
				return c >= 1
			})
			assert.Less(t, time.Since(started), startupTimeout)
			assert.Equal(t, 0.0, value(t, sc, "mlx_server_ready"))
			for _, r := range []string{"python_error", "hung", "startup_timeout", "exit"} {
				assert.Equal(t, 0.0, value(t, sc, "mlx_server_crashes_total", "reason", r), r)
			}
			s.waitFor("prometheus/supervisor", 30*time.Second, "restarted", func(sc *promtext.Scrape) bool {
				r, _ := sc.Value("mlx_server_restarts_total")
				return r >= 1
			})
		})
	}
}

func TestShutdownLeavesNoEngineProcess(t *testing.T) {
	s := startCollector(t, collectorOptions{configs: demoConfigs, env: map[string]string{"MLXSIM_LOAD_DELAY": "0s"}})
	s.waitFor("prometheus/supervisor", 30*time.Second, "the engine up", func(sc *promtext.Scrape) bool {
		v, _ := sc.Value("mlx_server_up")
		return v == 1
	})
	require.Len(t, enginePids(s), 1)
	s.stop()
	assert.Zero(t, s.cmd.ProcessState.ExitCode(), "the collector exits cleanly on SIGTERM")
	assert.Empty(t, enginePids(s), "no engine process is left behind")
}

func TestValidateRejectsABadConfig(t *testing.T) {
	bin := binary(t, "MLX_OTELCOL")
	for _, tc := range []struct{ set, want string }{
		{"receivers::mlx_supervisor::log::path=", "log.path: must be set in spawn mode"},
		{"receivers::mlx_supervisor::health_check::interval=-1s", "health_check.interval: must be positive"},
		{"receivers::mlx_supervisor::restrat::enabled=false", "invalid keys: restrat"},
	} {
		out, err := exec.Command(bin, "validate", "--config", filepath.Join(repoRoot, "config/mlx.yaml"), "--set", tc.set).CombinedOutput()
		require.Error(t, err, tc.set)
		assert.Contains(t, string(out), tc.want)
	}
	out, err := exec.Command(bin, "validate", "--config", filepath.Join(repoRoot, "config/mlx.yaml"), "--config", filepath.Join(repoRoot, "config/demo.yaml")).CombinedOutput()
	assert.NoError(t, err, string(out))
}

func TestComponentsListsTheDistribution(t *testing.T) {
	out, err := exec.Command(binary(t, "MLX_OTELCOL"), "components").CombinedOutput()
	require.NoError(t, err)
	for _, c := range []string{"mlx_supervisor", "otlp", "file_log", "prometheus", "otlp_http", "otlp_grpc", "debug", "batch", "memory_limiter", "resource", "health_check", "file_storage"} {
		assert.Contains(t, string(out), "name: "+c+"\n", c)
	}
}
