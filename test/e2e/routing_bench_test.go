//go:build e2e && routingbench

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mlxbench/bench"
)

// TestRoutingBench measures the front door over several engines with
// mlxbench's agent loops (multi-turn conversations, each its own
// X-Session-Id): the prompt cache's hit share and TTFT with affinity,
// with routing.affinity none, and with one engine alone; then the
// requests that fail when an engine is killed, and when one wedges, under
// that load. make bench-routing runs it; it logs a table and asserts no
// speed. Engines: two serving Qwen3-4B (a, under the collector's
// supervisor, as mlx_lm 0.31.3; b, run by the test), one another model.
func TestRoutingBench(t *testing.T) {
	mlxbench := binary(t, "MLXBENCH")
	agents := envInt(t, "ROUTING_BENCH_AGENTS", 6)
	runs := envInt(t, "ROUTING_BENCH_RUNS", 2)
	type row struct {
		name           string
		requests, errs int
		byUpstream     string
		hit            float64 // later turns' prompt tokens from the cache
		first, later   bench.Pcts
		note           string
	}
	var rows []row
	// Each setup: the collector and its engines, fresh (empty caches).
	setup := func(t *testing.T, affinity string, engines int, hangAfter int) (proxy string, s *stack, b *simEngine) {
		enginePort, portB, portC := freePort(t), freePort(t), freePort(t)
		simArgs := []string{"--prompt-cache-size", "64"}
		b = startSimEngine(t, portB, append([]string{"--model", routeQwen}, simArgs...)...)
		startSimEngine(t, portC, append([]string{"--model", routeLlama}, simArgs...)...)
		hang := ""
		if hangAfter > 0 {
			hang = fmt.Sprintf(", --sim-hang-after, %q", fmt.Sprint(hangAfter))
		}
		ups := fmt.Sprintf(`      - {name: a, endpoint: "http://127.0.0.1:%d", node: mac-a, models: [%q], max_in_flight: 8}
`, enginePort, routeQwen)
		if engines > 1 {
			ups += fmt.Sprintf(`      - {name: b, endpoint: "http://127.0.0.1:%d", node: mac-b, models: [%q], max_in_flight: 8}
      - {name: c, endpoint: "http://127.0.0.1:%d", node: mac-c, models: [%q], max_in_flight: 8}
`, portB, routeQwen, portC, routeLlama)
		}
		overlay := writeOverlay(t, "routing.yaml", fmt.Sprintf(`
receivers:
  mlx_supervisor:
    command: [%q, --model, %q, --host, 127.0.0.1, --port, "%d", --sim-load-delay, 0s,
      --sim-decode-tokens-per-second, "400", --prompt-cache-size, "64"%s]
    health_check:
      interval: 2s
      timeout: 2s
      hang_after: 0s
extensions:
  mlx_proxy:
    upstream: ""
    upstream_probe_interval: 2s
    routing: {affinity: %s}
    upstreams:
%s`, binary(t, "MLXSIM"), routeQwen, enginePort, hang, affinity, ups))
		s = startCollector(t, collectorOptions{configs: append(append([]string{}, demoConfigs...), overlay), enginePort: enginePort})
		proxy = s.proxyURL("")
		require.Eventually(t, func() bool { return routedChat(proxy, routeQwen, "warm", 5*time.Second).status == 200 },
			60*time.Second, 200*time.Millisecond, "the front door serves")
		// Every engine in before the load, or a row measures fewer.
		names := []string{"a", "b", "c"}[:engines]
		require.Eventually(t, func() bool {
			for _, u := range names {
				if upstreamGauge(s, "mlx_upstream_up", u) != 1 {
					return false
				}
			}
			return true
		}, 60*time.Second, 200*time.Millisecond, "every engine up")
		return proxy, s, b
	}
	// agentic runs mlxbench's agent loops against proxy, during is called
	// while they run; the run's samples.
	agentic := func(t *testing.T, proxy string, during func()) []bench.Sample {
		out := t.TempDir()
		cmd := exec.Command(mlxbench, "agentic", "--base-url", proxy+"/v1", "--model", routeQwen,
			"--agents", fmt.Sprint(agents), "--runs", fmt.Sprint(runs), "--out-dir", out, "--progress", "off",
			"--proxy-metrics", "", "--hw-metrics", "", "--kv-metrics", "", "--supervisor-metrics", "", "--version-url", "",
			"--timeout", "30s", "--max-tokens", "128")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		require.NoError(t, cmd.Start())
		if during != nil {
			during()
		}
		_ = cmd.Wait()
		reports, _ := filepath.Glob(filepath.Join(out, "*.json"))
		require.Len(t, reports, 1)
		_, samples, err := bench.ReadReport(reports[0])
		require.NoError(t, err)
		return samples
	}
	// summarize is a row: the first turn of a conversation has nothing
	// in any cache (mlxbench makes each loop's prompt its own); a later
	// turn finds its prefix in the cache only on the engine that served
	// the turn before.
	summarize := func(name string, s *stack, samples []bench.Sample) {
		var first, later []bench.Sample
		cached, prompt := 0, 0
		for _, smp := range samples {
			if smp.Turn <= 1 {
				first = append(first, smp)
				continue
			}
			later = append(later, smp)
			cached += smp.CachedTokens
			prompt += smp.PromptTokens
		}
		all := bench.Summarize(samples, bench.SummaryOptions{})
		errs := 0
		for _, n := range all.Errors {
			errs += n
		}
		rows = append(rows, row{name: name, requests: all.Requests, errs: errs, byUpstream: sentByUpstream(t, s),
			hit:   float64(cached) / float64(max(prompt, 1)),
			first: bench.Summarize(first, bench.SummaryOptions{}).TTFT, later: bench.Summarize(later, bench.SummaryOptions{}).TTFT})
	}

	for _, c := range []struct {
		name     string
		affinity string
		engines  int
	}{{"affinity (conversation)", "conversation", 3}, {"spread (affinity none)", "none", 3}, {"one engine alone", "conversation", 1}} {
		t.Run(c.name, func(t *testing.T) {
			proxy, s, _ := setup(t, c.affinity, c.engines, 0)
			summarize(c.name, s, agentic(t, proxy, nil))
		})
	}
	t.Run("an engine killed mid-load", func(t *testing.T) {
		proxy, s, b := setup(t, "conversation", 3, 0)
		var inFlight float64
		samples := agentic(t, proxy, func() {
			// Killed while it holds requests: the first moment the
			// proxy counts some in flight on it.
			deadline := time.Now().Add(time.Minute)
			for upstreamGauge(s, "mlx_upstream_in_flight", "b") < 2 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			inFlight = upstreamGauge(s, "mlx_upstream_in_flight", "b")
			_ = b.cmd.Process.Signal(syscall.SIGKILL)
		})
		summarize("b killed under load", s, samples)
		rows[len(rows)-1].note = fmt.Sprintf("%.0f in flight on b when killed", inFlight)
	})
	t.Run("an engine wedged mid-load", func(t *testing.T) {
		proxy, s, _ := setup(t, "conversation", 3, 15)
		var inFlight, sentBefore float64
		samples := agentic(t, proxy, func() {
			// The moment its supervisor's not-ready takes it out.
			deadline := time.Now().Add(time.Minute)
			for time.Now().Before(deadline) {
				if upstreamGauge(s, "mlx_upstream_up", "a") == 0 {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			inFlight, sentBefore = upstreamGauge(s, "mlx_upstream_in_flight", "a"), sentTo(t, s, "a")
		})
		summarize("a wedged at its 15th completion", s, samples)
		rows[len(rows)-1].note = fmt.Sprintf("%.0f in flight on a when it went out, %.0f sent to it after",
			inFlight, sentTo(t, s, "a")-sentBefore)
	})

	var b strings.Builder
	b.WriteString("\n| run | requests | failed | sent to a / b | later turns: prompt from the cache | later turns: TTFT p50 / p95 | first turns: TTFT p50 / p95 | |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %.0f %% | %.0f / %.0f ms | %.0f / %.0f ms | %s |\n",
			r.name, r.requests, r.errs, r.byUpstream, 100*r.hit, r.later.P50, r.later.P95, r.first.P50, r.first.P95, r.note)
	}
	t.Logf("agents %d x runs %d per scenario (calculator, tri_tool, planner):%s", agents, runs, b.String())
}

// sentByUpstream is "a / b": the requests the front door sent to the two
// engines serving the bench's model, so that a row whose engine was out
// all along shows it.
func sentByUpstream(t *testing.T, s *stack) string {
	return fmt.Sprintf("%.0f / %.0f", sentTo(t, s, "a"), sentTo(t, s, "b"))
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	var n int
	_, err := fmt.Sscan(v, &n)
	require.NoError(t, err, name)
	return n
}
