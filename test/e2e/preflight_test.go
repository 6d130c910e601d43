//go:build e2e

package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The preflight (internal/preflight): a configuration error stops the
// collector at once, before any component starts, with one message that
// names every problem.

// preflightBound is how soon the collector must have exited by itself.
const preflightBound = 10 * time.Second

// waitExit waits for the collector to exit on its own and returns its exit
// status and output.
func waitExit(t *testing.T, s *stack, within time.Duration) (int, string) {
	t.Helper()
	select {
	case <-s.exited:
	case <-time.After(within):
		t.Fatalf("the collector still runs %s after its start; output:\n%s", within, s.out.String())
	}
	return s.cmd.ProcessState.ExitCode(), s.out.String()
}

// holdPort listens on a free loopback port for the rest of the test.
func holdPort(t *testing.T) int {
	t.Helper()
	port := freePort(t)
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	return port
}

// heldByThisTest is how the message names this test process as the holder.
func heldByThisTest() string {
	return fmt.Sprintf("is already in use, held by pid %d (%s", os.Getpid(), os.Args[0])
}

// assertNothingStarted: the preflight stopped the collector before any
// component, so the engine never ran.
func assertNothingStarted(t *testing.T, s *stack, out string) {
	t.Helper()
	assert.NotContains(t, out, "Starting extensions")
	assert.NotContains(t, out, "Cannot start the engine")
	assert.Empty(t, enginePids(s), "no engine started")
	_, err := os.Stat(s.serverLog())
	assert.True(t, os.IsNotExist(err), "no server log: the supervisor never ran")
}

// Each kind of listener: a port held by this test stops the collector
// within the bound, naming the port, the component and this test's pid.
func TestPreflightPortInUse(t *testing.T) {
	for _, tc := range []struct {
		component string
		setting   string
		opts      func(t *testing.T, port int) collectorOptions
	}{
		{"exporters::prometheus/hw", "endpoint", func(t *testing.T, port int) collectorOptions {
			return collectorOptions{sets: []string{fmt.Sprintf("exporters::prometheus/hw::endpoint=127.0.0.1:%d", port)}}
		}},
		{"extensions::mlx_proxy", "endpoint", func(t *testing.T, port int) collectorOptions {
			return collectorOptions{sets: []string{fmt.Sprintf("extensions::mlx_proxy::endpoint=127.0.0.1:%d", port)}}
		}},
		{"receivers::otlp", "protocols::grpc::endpoint", func(t *testing.T, port int) collectorOptions {
			return collectorOptions{sets: []string{fmt.Sprintf("receivers::otlp::protocols::grpc::endpoint=127.0.0.1:%d", port)}}
		}},
		{"service::telemetry::metrics", "readers[0] pull prometheus", func(t *testing.T, port int) collectorOptions {
			return collectorOptions{
				configs: append(append([]string{}, demoConfigs...), telemetryOverlay(t, port)),
				sets:    []string{"service::telemetry::metrics::level=normal"},
			}
		}},
		{"receivers::mlx_supervisor", "the engine's --port in command", func(t *testing.T, port int) collectorOptions {
			return collectorOptions{enginePort: port}
		}},
	} {
		t.Run(tc.component, func(t *testing.T) {
			port := holdPort(t)
			opts := tc.opts(t, port)
			if opts.configs == nil {
				opts.configs = demoConfigs
			}
			s := startCollector(t, opts)
			code, out := waitExit(t, s, preflightBound)
			assert.Equal(t, 1, code)
			assert.Contains(t, out, "preflight: the collector cannot start (MLX_PREFLIGHT=off skips these checks):")
			assert.Contains(t, out, fmt.Sprintf("  - port %d of %s (%s: 127.0.0.1:%d) %s", port, tc.component, tc.setting, port, heldByThisTest()))
			assert.NotContains(t, out, "bind: address already in use", "not the component's own error")
			assertNothingStarted(t, s, out)
		})
	}
}

// The engine's program is not on PATH: the collector exits at once with
// the PATH searched and what to do, instead of backing off forever.
func TestPreflightEngineNotFound(t *testing.T) {
	t.Run("command", func(t *testing.T) {
		s := startCollector(t, collectorOptions{configs: append(append([]string{}, demoConfigs...),
			commandOverlay(t, "", []string{"no-such-engine-e2e", "--model", "mlx-community/Qwen3-4B-4bit", "--port", "${env:MLX_ENGINE_PORT}"}))})
		code, out := waitExit(t, s, preflightBound)
		assert.Equal(t, 1, code)
		assert.Contains(t, out, `  - receivers::mlx_supervisor: the engine "no-such-engine-e2e" (command[0]) is not on PATH (`+os.Getenv("PATH")+"): install it, or set receivers::mlx_supervisor::command to the engine's full path")
		assertNothingStarted(t, s, out)
	})
	// make run where mlx_lm.server is not installed (this Linux host).
	t.Run("make run", func(t *testing.T) {
		bin := t.TempDir()
		s := startCollector(t, collectorOptions{configs: []string{"config/mlx.yaml"}, env: map[string]string{"PATH": bin}})
		code, out := waitExit(t, s, preflightBound)
		assert.Equal(t, 1, code)
		assert.Contains(t, out, `  - receivers::mlx_supervisor: the engine "mlx_lm.server" (command[0]) is not on PATH (`+bin+"): install mlx-lm (pip install mlx-lm, on an Apple Silicon Mac) so that it is on PATH, or set receivers::mlx_supervisor::command to the engine's full path (without an engine, make demo runs the simulated one)")
		assertNothingStarted(t, s, out)
	})
	t.Run("path", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "mlx_lm.server")
		s := startCollector(t, collectorOptions{configs: append(append([]string{}, demoConfigs...),
			commandOverlay(t, "", []string{missing, "--model", "mlx-community/Qwen3-4B-4bit"}))})
		code, out := waitExit(t, s, preflightBound)
		assert.Equal(t, 1, code)
		assert.Contains(t, out, fmt.Sprintf(`  - receivers::mlx_supervisor: the engine %q (command[0]) cannot be run: stat %s: no such file or directory; install mlx-lm`, missing, missing))
		assertNothingStarted(t, s, out)
	})
}

// A model path that cannot be read stops the collector; a Hugging Face
// repo id (every other test's) is not a path.
func TestPreflightModelPathUnreadable(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "weights")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	for name, model := range map[string]string{
		"missing":      filepath.Join(dir, "no-such-model"),
		"under a file": filepath.Join(file, "model"),
	} {
		t.Run(name, func(t *testing.T) {
			s := startCollector(t, collectorOptions{configs: append(append([]string{}, demoConfigs...),
				commandOverlay(t, "", []string{"${env:MLXSIM}", "--model", model, "--host", "127.0.0.1", "--port", "${env:MLX_ENGINE_PORT}"}))})
			code, out := waitExit(t, s, preflightBound)
			assert.Equal(t, 1, code)
			assert.Contains(t, out, fmt.Sprintf(`  - receivers::mlx_supervisor: the model path %q (--model in command) cannot be read: open %s: `, model, model))
			assert.Contains(t, out, "give a readable model directory or file, or a Hugging Face repo id (org/name)")
			assertNothingStarted(t, s, out)
		})
	}
}

// Every problem in one message: a held port, a missing engine, a missing
// model, and the proxy's model that is not the engine's.
func TestPreflightEveryProblemAtOnce(t *testing.T) {
	port := holdPort(t)
	model := filepath.Join(t.TempDir(), "no-such-model")
	s := startCollector(t, collectorOptions{
		configs: append(append([]string{}, demoConfigs...),
			commandOverlay(t, "", []string{"no-such-engine-e2e", "--model", model})),
		sets: []string{fmt.Sprintf("extensions::health_check::endpoint=127.0.0.1:%d", port)},
	})
	code, out := waitExit(t, s, preflightBound)
	assert.Equal(t, 1, code)
	_, msg, ok := strings.Cut(out, "preflight: ")
	require.True(t, ok, out)
	assert.Equal(t, 4, strings.Count(msg, "\n  - "), msg)
	assert.Contains(t, msg, fmt.Sprintf("port %d of extensions::health_check (endpoint: 127.0.0.1:%d) %s", port, port, heldByThisTest()))
	assert.Contains(t, msg, `the engine "no-such-engine-e2e" (command[0]) is not on PATH`)
	assert.Contains(t, msg, fmt.Sprintf("the model path %q (--model in command) cannot be read", model))
	assert.Contains(t, msg, fmt.Sprintf(`is not the engine's --model %q`, model))
}

// MLX_PREFLIGHT=off: the port's component fails at its start, as before
// the preflight.
func TestPreflightOff(t *testing.T) {
	port := holdPort(t)
	s := startCollector(t, collectorOptions{
		configs: demoConfigs,
		sets:    []string{fmt.Sprintf("exporters::prometheus/hw::endpoint=127.0.0.1:%d", port)},
		env:     map[string]string{"MLX_PREFLIGHT": "off"},
	})
	code, out := waitExit(t, s, 30*time.Second)
	assert.NotEqual(t, 0, code)
	assert.NotContains(t, out, "preflight")
	assert.Contains(t, out, fmt.Sprintf("listen tcp 127.0.0.1:%d: bind: address already in use", port))
}

// validate and print-config check the configuration, not this host: they
// pass beside a running collector (its ports in use) and without the
// engine.
func TestPreflightNotForValidate(t *testing.T) {
	port := holdPort(t)
	bin := binary(t, "MLX_OTELCOL")
	for _, sub := range [][]string{{"validate"}, {"print-config", "--mode", "redacted"}} {
		args := append(append([]string{}, sub...), "--config", filepath.Join(repoRoot, "config/mlx.yaml"),
			"--set", fmt.Sprintf("exporters::prometheus/hw::endpoint=127.0.0.1:%d", port))
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "PATH="+t.TempDir())
		out, err := cmd.CombinedOutput()
		assert.NoError(t, err, "%s: %s", sub[0], out)
		assert.NotContains(t, string(out), "preflight", sub[0])
	}
}
