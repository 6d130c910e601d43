package perf

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/syncbuf"
)

// The original stack (github.com/hellodk/mlx-oc, cluster/, fetched by
// scripts/bench-agents.sh at a pinned commit): the four agents the
// collector replaces, started with start_server.sh's arguments and
// cluster.env's settings (MLX_LOGPROBS=3, MLX_LOGPROBS_STREAM_SAMPLE=0.05),
// the supervisor running the simulated engine as it runs mlx_lm.server.
// What cannot run here:
//   - the proxy's OTLP traces and logs and its Opik spans: they need the
//     opentelemetry Python SDK, which Debian does not package; without
//     --otlp-endpoint the proxy runs without them, as it does when they
//     are not configured (mlx_metrics_proxy.py _setup_otel returns None).
//     The collector exports its spans and logs: it does more here.
//   - the hardware agent's macOS commands (sudo powermetrics, ioreg, pmset,
//     vm_stat, sysctl hw.*, podman): each call fails and the agent leaves
//     the gauge NaN, as its try/except does on a Mac without them; the
//     forks still happen every sample, but a failed exec costs less than
//     powermetrics' one-second sample on a Mac.
//   - the log tailer (mlx_server_log_tailer.py): it ships the engine's log
//     by OTLP (the same missing SDK), so it is left out.

// agentModel is the simulated engine's model (config/demo.yaml's default).
const agentModel = "mlx-community/Qwen3-4B-4bit"

// agentSpec is one agent: its script and arguments.
type agentSpec struct {
	name   string
	script string
	args   []string
}

// Agents are the original agents, running.
type Agents struct {
	procs map[string]*exec.Cmd
	out   *syncbuf.Buffer
	log   string // the engine's log, where the supervisor sends it
}

// StartAgents starts the four agents from dir (mlx-oc's cluster/) with
// python, the engine's log and a Hugging Face cache holding the simulated
// model's config.json in work, and waits until a chat is answered through
// their proxy.
func StartAgents(python, dir, mlxsim, repoDir, work string, client *http.Client) (*Agents, error) {
	hf := filepath.Join(work, "hf")
	snap := filepath.Join(hf, "hub", "models--"+strings.ReplaceAll(agentModel, "/", "--"), "snapshots", "bench")
	if err := os.MkdirAll(snap, 0o755); err != nil {
		return nil, err
	}
	cfg, err := os.ReadFile(filepath.Join(repoDir, "internal/modelconfig/testdata/qwen3-4b-4bit.json"))
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(snap, "config.json"), cfg, 0o644); err != nil {
		return nil, err
	}
	serverLog := filepath.Join(work, "server.log")
	engine := strings.Join([]string{mlxsim, "--model", agentModel, "--host", "127.0.0.1", "--port", "8081",
		"--prompt-cache-size", "10", "--chat-template-args", `'{"enable_thinking": false}'`,
		"--sim-load-delay", "0s", "--sim-decode-tokens-per-second", "40", "--sim-mlx-lm-version", "0.31.3"}, " ")
	specs := []agentSpec{
		{"supervisor", "mlx_server_supervisor.py", []string{"--model", agentModel, "--health", "http://127.0.0.1:8081/v1/models",
			"--server-log", serverLog, "--listen", "127.0.0.1:9105", "--command", engine}},
		{"proxy", "mlx_metrics_proxy.py", []string{"--listen", "127.0.0.1:8080", "--upstream", "127.0.0.1:8081",
			"--default-temp", "0.0", "--node-name", "rank0", "--model", agentModel,
			"--logprobs", "3", "--logprobs-stream-sample", "0.05", "--low-confidence-threshold", "0.5"}},
		{"hardware", "mlx_hw_telemetry.py", []string{"--node-name", "rank0", "--listen", "127.0.0.1:9102"}},
		{"kv-cache", "mlx_kv_cache_agent.py", []string{"--log-file", serverLog, "--model", agentModel, "--listen", "127.0.0.1:9104"}},
	}
	a := &Agents{procs: map[string]*exec.Cmd{}, out: &syncbuf.Buffer{}, log: serverLog}
	for _, s := range specs {
		cmd := exec.Command(python, append([]string{filepath.Join(dir, s.script)}, s.args...)...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "HF_HOME="+hf, "MLX_MODEL="+agentModel, "PYTHONUNBUFFERED=1")
		cmd.Stdout, cmd.Stderr = a.out, a.out
		// Each in a group of its own: Stop ends the supervisor's engine too.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			a.Stop()
			return nil, fmt.Errorf("starting the original %s agent: %w", s.name, err)
		}
		a.procs[s.name] = cmd
		track(cmd.Process.Pid, true)
	}
	deadline := time.Now().Add(time.Minute)
	for post(client, ProxyURL+"/v1/chat/completions", ChatBody(false), false) != nil {
		if time.Now().After(deadline) {
			out := a.Output()
			a.Stop()
			return nil, fmt.Errorf("the original agents' proxy did not answer within a minute:\n%s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return a, nil
}

// Output is what the agents have printed, their last 4 KiB.
func (a *Agents) Output() string { return lastKiB(a.out.Bytes(), 4) }

// Stop ends every agent's process group (the supervisor's holds the
// engine), with SIGTERM, then SIGKILL after 5 s.
func (a *Agents) Stop() {
	for _, cmd := range a.procs {
		defer untrack(cmd.Process.Pid)
	}
	for _, cmd := range a.procs {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	}
	for _, cmd := range a.procs {
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
}

// AgentUsage is the agents' cost over a window, each and together.
type AgentUsage struct {
	Total Usage
	Each  map[string]Usage
}

// Watch watches every agent for d. Each agent's CPU counts the commands it
// ran and waited for (the hardware agent's ps, sysctl, ...: cutime and
// cstime), not the engine the supervisor runs, which it does not wait for
// while it lives.
func (a *Agents) Watch(d time.Duration) (AgentUsage, error) {
	u := AgentUsage{Each: map[string]Usage{}}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs []error
	)
	for name, cmd := range a.procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pid := cmd.Process.Pid
			x, err := watch(func() (ProcSample, error) { return ReadProcWithChildren(pid) }, d, time.Second)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("the original %s agent: %w", name, err))
				return
			}
			u.Each[name] = x
			u.Total.Cores += x.Cores
			u.Total.RSSKiB += x.RSSKiB
			u.Total.MaxRSSKiB += x.MaxRSSKiB
		}()
	}
	wg.Wait()
	return u, errors.Join(errs...)
}

// Names are the agents' names, sorted.
func (u AgentUsage) Names() []string { return slices.Sorted(maps.Keys(u.Each)) }
