//go:build e2e && stack

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/dashrender"
)

// TestStackFleetSim is the fleet views (dashboards/fleet*.go) on a
// simulated fleet on the real push path: MLX_FLEET_NODES network
// namespaces (5; make fleet-20 and make fleet-demo run 20), each a
// collector (the built binary) pushing through one gateway collector into
// VictoriaMetrics, vmalert evaluating the shipped rules on it; the engine
// nodes run the simulated engine behind the proxy with light traffic, and
// send their spans and logs through the same gateway to a Jaeger and a
// VictoriaLogs. Five incidents (simFleet): a wedged engine, a role down,
// a crash-looping collector, a dark node, a node on an older version.
// The three fleet dashboards' own queries, run against the store as
// Grafana would (testutil/dashrender), must show each incident in the
// right cell, row and count, and vmalert must raise nothing for a healthy
// node. It then measures what the fleet costs the gateway and the stores
// (logged as FLEETCOST). MLX_FLEET_HOLD (make fleet-demo) keeps the fleet
// running afterwards for a person to look at, until Ctrl-C or that long.
// The rules' windows are shortened (simRules). About 4 minutes for five
// nodes, 5 for twenty.
func TestStackFleetSim(t *testing.T) {
	began := time.Now()
	t.Cleanup(func() { t.Logf("TestStackFleetSim took %s", time.Since(began).Round(time.Second)) })
	n := 5
	if v := os.Getenv("MLX_FLEET_NODES"); v != "" {
		var err error
		n, err = strconv.Atoi(v)
		require.NoError(t, err, "MLX_FLEET_NODES")
		require.True(t, n >= 5 && n <= 64, "MLX_FLEET_NODES: 5 to 64 nodes, got %d", n)
	}
	var hold time.Duration
	if v := os.Getenv("MLX_FLEET_HOLD"); v != "" {
		var err error
		hold, err = time.ParseDuration(v)
		require.NoError(t, err, "MLX_FLEET_HOLD")
		require.LessOrEqual(t, hold, time.Hour, "MLX_FLEET_HOLD is bounded: an hour at most (the engines' prompt caches)")
	}
	fleet := simFleet(n)
	interrupted, holding := makeSimFleet(t, fleet)
	collector := binary(t, "MLX_OTELCOL")
	oldCollector := binary(t, "MLX_OTELCOL_OLD")
	mlxsim := binary(t, "MLXSIM")

	// The observability host, in the root namespace.
	vmPort, vmalertPort := freePort(t), freePort(t)
	gwGRPC, gwHTTP, gwTelemetry, gwHealth := freePort(t), freePort(t), freePort(t), freePort(t)
	vm := startVM(t, "victoria-metrics", vmPort, simScrapeConfig(t, fleet, gwTelemetry))
	vm.vmalert = fmt.Sprintf("http://127.0.0.1:%d", vmalertPort)
	vmalertProc := startProcess(t, "vmalert", exec.Command(storeBinary(t, "vmalert"),
		"-rule="+filepath.Join(simRules(t), "*.yml"), "-datasource.url="+vm.base, "-remoteWrite.url="+vm.base,
		"-notifier.blackhole", fmt.Sprintf("-httpListenAddr=127.0.0.1:%d", vmalertPort),
		"-evaluationInterval=15s", "-rule.evalDelay=1s", "-loggerLevel=WARN"))
	waitListening(t, fmt.Sprintf("127.0.0.1:%d", vmalertPort), "vmalert")
	j := startJaeger(t)
	vl := startVictoriaLogs(t)

	gwOverlay := gatewayPorts(t, gwGRPC, gwHTTP, gwHealth, gwTelemetry)
	gwCmd := exec.Command(collector, "--config", filepath.Join(repoRoot, "config/gateway.yaml"), "--config", gwOverlay)
	gwCmd.Dir = repoRoot
	gwCmd.Env = append(os.Environ(), "MLX_DATA_DIR="+t.TempDir(), "MLX_VM_WRITE_URL="+vm.base+"/api/v1/write",
		"MLX_JAEGER_OTLP="+j.otlp, "MLX_VLOGS_URL="+vl.url)
	gw := startProcess(t, "gateway", gwCmd)
	waitListening(t, fmt.Sprintf("127.0.0.1:%d", gwHTTP), "the gateway's OTLP receiver")

	// Each node reaches the gateway (and an engine node the judge's
	// Jaeger) through relays on its link's root address.
	relayTo := func(h simNode, target string) string {
		a := fmt.Sprintf("%s:%d", addr(h.rootIP), freePort(t))
		startRelay(t, a, target)
		return a
	}
	// The hardware-only nodes stand for ring members (config/node.yaml):
	// their hostfile lists every node's address, so each finds its rank.
	hostfile := filepath.Join(t.TempDir(), "hosts.json")
	var entries []string
	for _, h := range fleet {
		entries = append(entries, fmt.Sprintf(`{"ssh": %q, "ips": [%q]}`, addr(h.ip), addr(h.ip)))
	}
	require.NoError(t, os.WriteFile(hostfile, []byte("[\n  "+strings.Join(entries, "\n  ,")+"\n]\n"), 0o600))
	const apiKey = "f20-fleet-load-key-0001"
	dataDirs := map[string]string{}
	envs := map[string][]string{}
	for _, h := range fleet {
		dataDirs[h.node] = t.TempDir()
		env := []string{"MLX_NODE_NAME=" + h.node, "MLX_DATA_DIR=" + dataDirs[h.node], "MLX_RING_HOSTFILE=" + hostfile,
			"MLX_GATEWAY_URL=http://" + relayTo(h, fmt.Sprintf("127.0.0.1:%d", gwHTTP))}
		if h.hasEngine() {
			m := simModels[h.model]
			env = append(env, "MLX_GATEWAY_OTLP="+relayTo(h, fmt.Sprintf("127.0.0.1:%d", gwGRPC)),
				"MLX_JAEGER_QUERY=http://"+relayTo(h, j.query),
				"MLXSIM="+mlxsim, "MLXSIM_LOAD_DELAY=0s", "MLX_MODEL="+m.id, "MLX_MODEL_CONFIG="+m.config,
				"MLX_API_KEYS=load="+apiKey, "HF_HUB_CACHE="+t.TempDir(),
				// The simulated engine keeps a sequence per request (a hybrid
				// cache is not trimmed), the user's and the judge's: room for
				// an hour of this traffic under MLXKVCacheAtLimit's 95 %.
				"MLX_PROMPT_CACHE_SIZE=2048")
		}
		envs[h.node] = env
	}
	var mu sync.Mutex
	nodes := map[string]*nodeCollector{}
	startNode := func(h simNode) {
		bin := collector
		if h.old {
			bin = oldCollector
		}
		configs := []string{"config/node.yaml", "config/push.yaml", "config/push-node.yaml"}
		if h.hasEngine() {
			configs = []string{"config/mlx.yaml", "config/demo.yaml", "config/to-gateway.yaml", "config/push.yaml"}
		}
		if o := h.overlay(t, mlxsim); o != "" {
			configs = append(configs, o)
		}
		c := startBinaryInNamespace(t, bin, h.ns, envs[h.node], configs...)
		mu.Lock()
		nodes[h.node] = c
		mu.Unlock()
	}
	for _, h := range fleet {
		startNode(h)
	}

	// Light traffic on every engine: a short completion every 5 s each,
	// until the test ends.
	ctx, stopTraffic := context.WithCancel(context.Background())
	var traffic sync.WaitGroup
	t.Cleanup(func() { stopTraffic(); traffic.Wait() })
	var sent, answered simCounter
	for _, h := range fleet {
		if h.hasEngine() {
			traffic.Add(1)
			go func() {
				defer traffic.Done()
				simTraffic(ctx, "http://"+addr(h.ip)+":8080", apiKey, simModels[h.model].id, &sent, &answered)
			}()
		}
	}

	byIncident := map[string]simNode{}
	for _, h := range fleet {
		if h.incident != "" {
			byIncident[h.incident] = h
		}
		if h.old {
			byIncident[incOld] = h
		}
	}

	t.Run("EveryAgentReports", func(t *testing.T) {
		var missing []string
		ok := waitUntil(4*time.Minute, 2*time.Second, func() bool {
			missing = missingAgents(vm, fleet)
			return len(missing) == 0
		})
		require.True(t, ok, "every role of every node pushed mlx_agent_up within 4 minutes; missing: %v", missing)
		t.Logf("%d nodes, every role reporting after %s", n, time.Since(began).Round(time.Second))
	})

	// The dynamic incidents: the crash loop (three kill -9 and restarts,
	// each counted before the next) and the dark node.
	t.Run("Incidents", func(t *testing.T) {
		c := byIncident[incCrash]
		restarts := func() float64 {
			res, err := vm.query(fmt.Sprintf(`max(mlx_agent_restarts_total{node=%q})`, c.node))
			if err != nil || len(res) != 1 {
				return -1
			}
			v, _ := strconv.ParseFloat(res[0].value(), 64)
			return v
		}
		for i := 1; i <= 3; i++ {
			mu.Lock()
			nodes[c.node].kill(syscall.SIGKILL)
			mu.Unlock()
			startNode(c)
			require.True(t, waitUntil(2*time.Minute, time.Second, func() bool { return restarts() >= float64(i) }),
				"restart %d of %s's collector counted", i, c.node)
		}
		d := byIncident[incDark]
		ipCmd(t, "link", "set", d.rootIf, "down")
		t.Logf("%s crash-looped 3 times; %s dark since %s", c.node, d.node, time.Now().UTC().Format("15:04:05"))
	})

	var final simViews
	t.Run("DashboardsShowEachIncident", func(t *testing.T) {
		var problems []string
		ok := waitUntil(5*time.Minute, 10*time.Second, func() bool {
			v, err := evalFleetViews(vm)
			if err != nil {
				problems = []string{err.Error()}
				return false
			}
			final = v
			problems = checkSimViews(v, fleet, byIncident, distVersion(t))
			alerts, err := vm.alerts()
			if err != nil {
				problems = append(problems, err.Error())
				return false
			}
			problems = append(problems, checkSimAlerts(alerts, fleet, byIncident)...)
			return len(problems) == 0
		})
		if !ok {
			for _, p := range problems {
				t.Error(p)
			}
		}
		t.Logf("traffic: %d completions sent, %d answered", sent.load(), answered.load())
	})

	t.Run("Cost", func(t *testing.T) {
		measureFleetCost(t, vm, fleet, gw, vmalertProc, nodes, &mu)
	})

	if dir := os.Getenv("FLEET_SCREENSHOTS"); dir != "" && final.results != nil {
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(repoRoot, dir)
		}
		note := fmt.Sprintf("A simulated fleet of %d nodes on the push path (test/e2e TestStackFleetSim: %s dark, %s's kvcache down, %s's engine wedged, "+
			"%s crash-looping, %s on %s), queried from VictoriaMetrics with the dashboard's own queries; rendered by testutil/dashrender, not Grafana. Ending %s UTC.",
			n, byIncident[incDark].node, byIncident[incRoleDown].node, byIncident[incWedged].node, byIncident[incCrash].node,
			byIncident[incOld].node, oldVersion, final.end.Format("2006-01-02 15:04"))
		for uid, r := range final.results {
			require.NoError(t, dashrender.Screenshot(r, note, filepath.Join(dir, uid)), uid)
		}
	}

	if hold > 0 {
		holding.Store(true)
		holdFleet(t, hold, interrupted, vm, j, vl)
	}
}

// holdFleet keeps the fleet running for a person until Ctrl-C or d.
func holdFleet(t *testing.T, d time.Duration, interrupted <-chan os.Signal, vm liveVM, j *jaeger, vl *victoriaLogs) {
	t.Logf(`the fleet runs for %s more (Ctrl-C ends it and removes the namespaces):
  VictoriaMetrics  %s/vmui  (mlx:agent_status:node_role, the dashboards' queries: dashboards/fleet_queries.go)
  vmalert          %s/api/v1/alerts
  Jaeger           http://%s
  VictoriaLogs     %s/select/vmui`, d, vm.base, vm.vmalert, j.query, vl.url)
	select {
	case <-interrupted:
		t.Logf("interrupted: stopping the fleet")
	case <-time.After(d):
	}
}

// makeSimFleet builds the fleet's namespaces and links and removes them at
// cleanup (and first, when a killed run left them). Ctrl-C while the test
// sets up or asserts removes them and exits (the collectors die with the
// test process: Pdeathsig); once holding is set, it ends the hold instead
// (the returned channel) and the cleanups run.
func makeSimFleet(t *testing.T, fleet []simNode) (<-chan os.Signal, *atomic.Bool) {
	t.Helper()
	hosts := make([]fleetHost, len(fleet))
	for i, h := range fleet {
		hosts[i] = h.fleetHost
	}
	remove := removeHosts(t, hosts)
	t.Cleanup(remove)
	sig := make(chan os.Signal, 1)
	held := make(chan os.Signal, 1)
	holding := &atomic.Bool{}
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	t.Cleanup(func() { signal.Stop(sig); close(done) })
	go func() {
		select {
		case s := <-sig:
			if holding.Load() {
				held <- s
				return
			}
			remove()
			os.Exit(130)
		case <-done:
		}
	}()
	for _, h := range fleet {
		addNamespace(t, h.ns, h.rootIf, h.rootIP, h.ip)
	}
	return held, holding
}

// simScrapeConfig is the store's scrape config (config/scrape/push.yml's
// jobs for this fleet): each node's heartbeat and the gateway's telemetry.
func simScrapeConfig(t *testing.T, fleet []simNode, gwTelemetry int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("global: {scrape_interval: 10s, scrape_timeout: 5s}\nscrape_configs:\n  - job_name: mlx-heartbeat\n    static_configs:\n")
	for _, h := range fleet {
		fmt.Fprintf(&b, "      - targets: [\"%s:8888\"]\n        labels: {service: mlx-heartbeat, node: %s}\n", addr(h.ip), h.node)
	}
	b.WriteString("    metric_relabel_configs:\n      - {source_labels: [__name__], regex: .+, action: drop}\n")
	fmt.Fprintf(&b, "  - job_name: mlx-gateway\n    static_configs:\n      - targets: [\"127.0.0.1:%d\"]\n        labels: {service: mlx-gateway}\n", gwTelemetry)
	p := filepath.Join(t.TempDir(), "push.yml")
	require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o600))
	return p
}

// simRules copies rules/*.yml with the fleet files' windows shortened, so
// that the incidents show within minutes: 3 minutes of silence become 1
// (four of a node's 10 s pushes, room for a loaded machine), `for: 1m`
// 20 s, both groups evaluated every 5 s. Everything else is as shipped.
func simRules(t *testing.T) string {
	t.Helper()
	return copyRules(t, func(name, text string) string {
		if name != "mlx-fleet.yml" && name != "mlx-fleet-status.yml" {
			return text
		}
		return strings.NewReplacer("interval: 30s", "interval: 5s", "[3m]", "[1m]", "for: 1m", "for: 20s").Replace(text)
	})
}

// missingAgents lists node/role pairs whose mlx_agent_up (1, or 0 for a
// role that says it does not work) has not arrived.
func missingAgents(vm liveVM, fleet []simNode) []string {
	res, err := vm.query(`mlx_agent_up`)
	if err != nil {
		return []string{err.Error()}
	}
	have := map[string]bool{}
	for _, r := range res {
		have[r.Metric["node"]+"/"+r.Metric["role"]] = true
	}
	var out []string
	for _, h := range fleet {
		for _, role := range h.roles() {
			if !have[h.node+"/"+role] {
				out = append(out, h.node+"/"+role)
			}
		}
	}
	return out
}

// waitUntil polls cond every step until it holds or timeout passes.
func waitUntil(timeout, step time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().Add(step).After(deadline) {
			return false
		}
		time.Sleep(step)
	}
}

type simCounter struct {
	mu sync.Mutex
	n  int
}

func (c *simCounter) add() { c.mu.Lock(); c.n++; c.mu.Unlock() }
func (c *simCounter) load() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// simTraffic sends a short chat completion to the proxy at base every 5 s
// until ctx ends, one at a time; each waits at most 20 s (a wedged engine
// never answers).
func simTraffic(ctx context.Context, base, key, model string, sent, answered *simCounter) {
	client := &http.Client{Timeout: 20 * time.Second}
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		// Two prompts in turn: the engine's prompt cache keeps two entries,
		// far from its limit; room for the whole answer (no truncation).
		body := fmt.Sprintf(`{"model": %q, "max_tokens": 256, "messages": [{"role": "user", "content": "Fleet check %d: say hello."}]}`, model, i%2)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions", strings.NewReader(body))
		if err != nil {
			return
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		sent.add()
		resp, err := client.Do(req)
		if err != nil {
			continue
		}
		if resp.StatusCode == http.StatusOK {
			answered.add()
		}
		resp.Body.Close()
	}
}
