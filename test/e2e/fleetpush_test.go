//go:build e2e && stack

package e2e

import (
	"fmt"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pushInterval is how often each node reads its ports in this test
// (MLX_PUSH_INTERVAL; the central scrape's is 2 s here too).
const pushInterval = 2 * time.Second

// TestStackFleetPush is docs/scaling.md's push path, run: three simulated
// Macs in network namespaces (fp0: the whole distribution with the
// simulated engine; fp1, fp2: hardware only, config/node.yaml) push their
// metrics (config/push.yaml) to a gateway collector (config/gateway.yaml)
// in the root namespace, which writes them into VictoriaMetrics ("push");
// vmalert evaluates the shipped rules on it, mlx-fleet.yml's windows
// shortened. A second VictoriaMetrics ("pull") scrapes rank0 and rank1 with
// the shipped scrape config at the same time, for the cut-over's gate: the
// label sets of every mlx_* series are the same in both, and so are the
// values. Then the gateway is stopped (MLX_FLEET_OUTAGE, 100 s; make
// fleet-outage runs 10 minutes) and no sample is missing once it is back;
// rank1's collector is killed in a loop (MLXAgentCrashLoop) and rank2 is
// powered off (MLXNodeSilent), and nothing else fires for the healthy
// nodes. It logs what the gateway costs per node. About 6 minutes.
func TestStackFleetPush(t *testing.T) {
	began := time.Now()
	t.Cleanup(func() { t.Logf("TestStackFleetPush took %s", time.Since(began).Round(time.Second)) })
	outage := 100 * time.Second
	if v := os.Getenv("MLX_FLEET_OUTAGE"); v != "" {
		d, err := time.ParseDuration(v)
		require.NoError(t, err, "MLX_FLEET_OUTAGE")
		outage = d
	}
	makeFleet(t)
	collector := binary(t, "MLX_OTELCOL")
	rank0, rank1 := addr(fleetHosts[0].ip), addr(fleetHosts[1].ip)

	// The observability host: the two stores' configs rendered from one env
	// file, as obs-stack.sh does.
	pullPort, pushPort, vmalertPort := freePort(t), freePort(t), freePort(t)
	gwGRPC, gwHTTP, gwTelemetry, gwHealth := freePort(t), freePort(t), freePort(t), freePort(t)
	render := func(vmPort int) string {
		dir := t.TempDir()
		env := filepath.Join(dir, "fleet.env")
		require.NoError(t, os.WriteFile(env, []byte(strings.Join([]string{
			"RANK0_ADDR=" + rank0, "RANK1_ADDR=" + rank1, "OBS_ADDR=127.0.0.1",
			"VM_PORT=" + strconv.Itoa(vmPort), "VMALERT_PORT=" + strconv.Itoa(vmalertPort),
			"GATEWAY_OTELCOL_PORT=" + strconv.Itoa(gwTelemetry),
			"SCRAPE_INTERVAL=2s", "SCRAPE_TIMEOUT=2s", "",
		}, "\n")), 0o600))
		out, err := exec.Command(filepath.Join(repoRoot, "scripts", "render-config.sh"), "-e", env, "-o", dir).CombinedOutput()
		require.NoError(t, err, "%s", out)
		return dir
	}
	pull := startVM(t, "victoria-metrics (pull)", pullPort, filepath.Join(render(pullPort), "scrape.yml"))
	push := startVM(t, "victoria-metrics (push)", pushPort, filepath.Join(render(pushPort), "push.yml"))
	push.vmalert = fmt.Sprintf("http://127.0.0.1:%d", vmalertPort)
	startProcess(t, "vmalert", exec.Command(storeBinary(t, "vmalert"),
		"-rule="+filepath.Join(fleetRules(t), "*.yml"), "-datasource.url="+push.base, "-remoteWrite.url="+push.base,
		"-notifier.blackhole", fmt.Sprintf("-httpListenAddr=127.0.0.1:%d", vmalertPort),
		"-evaluationInterval=15s", "-rule.evalDelay=1s", "-loggerLevel=WARN"))
	waitListening(t, fmt.Sprintf("127.0.0.1:%d", vmalertPort), "vmalert")

	// The gateway, on ports of its own; each node reaches it through a
	// relay on its link's root address, which counts what the node sends.
	gwOverlay := gatewayPorts(t, gwGRPC, gwHTTP, gwHealth, gwTelemetry)
	gwData := t.TempDir()
	startGateway := func() *nodeCollector {
		cmd := exec.Command(collector, "--config", filepath.Join(repoRoot, "config/gateway.yaml"), "--config", gwOverlay)
		cmd.Dir = repoRoot
		cmd.Env = append(os.Environ(), "MLX_DATA_DIR="+gwData, "MLX_VM_WRITE_URL="+push.base+"/api/v1/write")
		gw := startProcess(t, "gateway", cmd)
		waitListening(t, fmt.Sprintf("127.0.0.1:%d", gwHTTP), "the gateway's OTLP receiver")
		return gw
	}
	gw := startGateway()
	relays := map[string]*relay{}
	relayAddrs := map[string]string{}
	for _, h := range fleetHosts {
		relayAddrs[h.node] = fmt.Sprintf("%s:%d", addr(h.rootIP), freePort(t))
		relays[h.node] = startRelay(t, relayAddrs[h.node], fmt.Sprintf("127.0.0.1:%d", gwHTTP))
	}
	// The engine node's own log and trace stores, on the observability
	// host: a node whose log sink or judge has nowhere to go is not
	// healthy (MLXLogTailerNotSending fires after its 5 minutes, the
	// judge counts read_failed), and this test's healthy nodes must raise
	// nothing. They are reached directly, not through the gateway, so its
	// outage is the metrics' alone.
	j, vl := startJaeger(t), startVictoriaLogs(t)
	storesEnv := func(h fleetHost) []string {
		relayTo := func(target string) string {
			a := fmt.Sprintf("%s:%d", addr(h.rootIP), freePort(t))
			startRelay(t, a, target)
			return a
		}
		return []string{"MLX_VLOGS_URL=http://" + relayTo(strings.TrimPrefix(vl.url, "http://")),
			"MLX_JAEGER_OTLP=" + relayTo(j.otlp), "MLX_JAEGER_QUERY=http://" + relayTo(j.query)}
	}
	engineStores := map[string][]string{}
	for _, h := range fleetHosts {
		if h.engine {
			engineStores[h.node] = storesEnv(h)
		}
	}

	// The nodes: each its own name, data directory (the push queue) and
	// the gateway at its link's root address.
	dataDirs := map[string]string{}
	startNode := func(h fleetHost) *nodeCollector {
		if dataDirs[h.node] == "" {
			dataDirs[h.node] = t.TempDir()
		}
		env := []string{
			"MLX_NODE_NAME=" + h.node, "MLX_DATA_DIR=" + dataDirs[h.node],
			"MLX_GATEWAY_URL=http://" + relayAddrs[h.node], "MLX_PUSH_INTERVAL=" + pushInterval.String(),
		}
		if h.engine {
			env = append(env, "MLXSIM="+binary(t, "MLXSIM"), "MLXSIM_LOAD_DELAY=0s")
			env = append(env, engineStores[h.node]...)
			return startInNamespace(t, h.ns, env, "config/mlx.yaml", "config/demo.yaml", "config/push.yaml")
		}
		return startInNamespace(t, h.ns, env, "config/node.yaml", "config/push.yaml", "config/push-node.yaml")
	}
	nodes := map[string]*nodeCollector{}
	for _, h := range fleetHosts {
		nodes[h.node] = startNode(h)
	}

	// agents is the pushed mlx_agent_up, as node -> roles.
	agents := func() map[string][]string {
		res, err := push.query(`mlx_agent_up`)
		if err != nil {
			return nil
		}
		out := map[string][]string{}
		for _, r := range res {
			out[r.Metric["node"]] = append(out[r.Metric["node"]], r.Metric["role"])
		}
		return out
	}
	t.Run("EveryAgentArrivesWithItsNode", func(t *testing.T) {
		var got map[string][]string
		require.Eventually(t, func() bool {
			got = agents()
			return len(got) == 3 && len(got["rank0"]) > len(got["rank1"]) && len(got["rank1"]) > 0 && len(got["rank2"]) > 0
		}, 90*time.Second, time.Second, "mlx_agent_up of every node: %v", got)
		t.Logf("pushed agents: %v", got)
		for node, roles := range got {
			sort.Strings(roles)
			for _, name := range []string{"mlx_agent_info", "mlx_agent_uptime_seconds", "mlx_agent_restarts_total"} {
				res, err := push.query(fmt.Sprintf(`count by (role) (%s{node=%q})`, name, node))
				require.NoError(t, err)
				var with []string
				for _, r := range res {
					with = append(with, r.Metric["role"])
				}
				sort.Strings(with)
				assert.Equal(t, roles, with, "%s of %s: every role that says it is up", name, node)
			}
		}
		// The engine node's engine series came through too.
		require.Eventually(t, func() bool {
			res, err := push.query(`mlx_server_ready{node="rank0"}`)
			return err == nil && len(res) == 1 && res[0].value() == "1"
		}, 60*time.Second, time.Second, "rank0's engine ready, pushed")
	})

	// What the gateway costs, over a minute of the three nodes' pushes.
	t.Run("GatewayCost", func(t *testing.T) {
		cpu0, _ := procUsage(t, gw.cmd.Process.Pid)
		sent0 := map[string]int64{}
		for n, r := range relays {
			sent0[n] = r.sent.Load()
		}
		start := time.Now()
		time.Sleep(time.Minute)
		elapsed := time.Since(start)
		cpu1, rss := procUsage(t, gw.cmd.Process.Pid)
		perNode := float64(cpu1-cpu0) / float64(elapsed) / float64(len(fleetHosts))
		t.Logf("gateway: %.2f%% of a core per node (%.2f%% for %d nodes), %d MiB resident", 100*perNode,
			100*float64(cpu1-cpu0)/float64(elapsed), len(fleetHosts), rss/1024)
		for _, h := range fleetHosts {
			b := relays[h.node].sent.Load() - sent0[h.node]
			series, _ := push.query(fmt.Sprintf(`count({node=%q, job!="mlx-heartbeat", __name__!~"ALERTS.*"})`, h.node))
			n := ""
			if len(series) == 1 {
				n = series[0].value()
			}
			t.Logf("%s pushes %.0f KiB a minute (gzip, every %s), %s series", h.node,
				float64(b)/1024/elapsed.Minutes(), pushInterval, n)
			assert.Positive(t, b, "%s sent nothing through its relay", h.node)
		}
	})

	// The cut-over's gate: the same series, scraped and pushed.
	t.Run("PullAndPushAgree", func(t *testing.T) {
		for _, node := range []string{"rank0", "rank1"} {
			checkPullPushLabels(t, pull, push, node, began)
			checkPullPushValues(t, pull, push, node)
		}
	})

	baseline := firingByNode(t, push)
	t.Logf("alerts firing before the faults: %v", baseline)

	t.Run("GatewayOutageLeavesNoGap", func(t *testing.T) {
		stopped := time.Now()
		gw.kill(syscall.SIGTERM)
		t.Logf("gateway stopped for %s", outage)
		// The whole fleet is silent: one alert, none per node.
		if outage > time.Minute {
			active := waitAlert(t, push, outage, "MLXFleetSilent", nil)
			for _, a := range active {
				if a.State == "firing" {
					assert.NotEqual(t, "MLXNodeSilent", a.Name, "a gateway outage is not a node's: %v", a)
					assert.NotEqual(t, "MLXAgentSilent", a.Name, "a gateway outage is not an agent's: %v", a)
				}
			}
		}
		if rest := outage - time.Since(stopped); rest > 0 {
			time.Sleep(rest)
		}
		gw = startGateway()
		back := time.Now()
		// The queues drain: each node's counter has a sample every push
		// interval through the outage, up to now. The node retries each
		// queued batch on its own timer (up to 15 s apart), so the backlog
		// arrives over some seconds.
		var widest map[string]time.Duration
		var count map[string]int
		noGap := func() bool {
			got, err := push.samples(`otelcol_process_uptime{job="mlx-otelcol"}`, stopped.Add(-20*time.Second), back)
			if err != nil || len(got) != len(fleetHosts) {
				return false
			}
			widest, count = map[string]time.Duration{}, map[string]int{}
			ok := true
			for series, ts := range got {
				sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
				var w int64
				for i := 1; i < len(ts); i++ {
					w = max(w, ts[i]-ts[i-1])
				}
				widest[series], count[series] = time.Duration(w)*time.Millisecond, len(ts)
				ok = ok && widest[series] <= 2*pushInterval+time.Second && len(ts) >= int((outage+20*time.Second)/pushInterval)-2
			}
			return ok
		}
		assert.Eventually(t, noGap, 2*time.Minute, 2*time.Second,
			"a sample every %s through the outage, per node", pushInterval)
		t.Logf("backlog of %s written within %s after the gateway came back", outage.Round(time.Second), time.Since(back).Round(time.Second))
		for series := range widest {
			t.Logf("%s: %d samples over the outage, widest step %s", series, count[series], widest[series])
		}
	})

	t.Run("CrashLoopFires", func(t *testing.T) {
		h := fleetHosts[1]
		restarts := func() float64 {
			res, err := push.query(fmt.Sprintf(`max(mlx_agent_restarts_total{node=%q, role="hardware"})`, h.node))
			if err != nil || len(res) != 1 {
				return -1
			}
			v, _ := strconv.ParseFloat(res[0].value(), 64)
			return v
		}
		var before float64
		require.Eventually(t, func() bool { before = restarts(); return before >= 0 }, 30*time.Second, time.Second,
			"mlx_agent_restarts_total{role=\"hardware\"} of %s", h.node)
		for i := 1; i <= 3; i++ {
			nodes[h.node].kill(syscall.SIGKILL)
			nodes[h.node] = startNode(h)
			require.Eventually(t, func() bool { return restarts() >= before+float64(i) }, 60*time.Second, time.Second,
				"restart %d of %s's collector counted", i, h.node)
		}
		t.Logf("mlx_agent_restarts_total of %s: %v -> %v", h.node, before, restarts())
		waitAlert(t, push, 2*time.Minute, "MLXAgentCrashLoop", map[string]string{"node": h.node, "role": "hardware"})
	})

	t.Run("PoweredOffNodeFires", func(t *testing.T) {
		h := fleetHosts[2]
		nodes[h.node].kill(syscall.SIGKILL)
		ipCmd(t, "link", "set", h.rootIf, "down")
		off := time.Now()
		active := waitAlert(t, push, 3*time.Minute, "MLXNodeSilent", map[string]string{"node": h.node})
		t.Logf("MLXNodeSilent{node=%q} fired %s after the power-off", h.node, time.Since(off).Round(time.Second))
		// Nothing else fired for the healthy nodes than before the faults
		// (rank1's crash loop aside), and nothing but the silence for rank2.
		for _, a := range active {
			if a.State != "firing" {
				continue
			}
			switch node := a.Labels["node"]; {
			case node == h.node:
				assert.Contains(t, []string{"MLXNodeSilent"}, a.Name, "%s: only its silence", a)
			case node == "rank1" && a.Name == "MLXAgentCrashLoop":
			case node != "":
				assert.True(t, baseline[node+"/"+a.Name], "%s fired for a healthy node", a)
			}
		}
	})
}

// checkPullPushLabels: the label sets of node's mlx_* series are the same
// in the pull store and in the push store, instance aside (the pull
// scrape's is the node's address, the push's its loopback).
func checkPullPushLabels(t *testing.T, pull, push liveVM, node string, since time.Time) {
	t.Helper()
	drop := map[string]bool{"instance": true}
	match := fmt.Sprintf(`{__name__=~"mlx_.+", node=%q}`, node)
	var onlyPull, onlyPush []string
	var n int
	ok := assert.Eventually(t, func() bool {
		a, errA := pull.series(match, since)
		b, errB := push.series(match, since)
		if errA != nil || errB != nil || len(a) == 0 {
			return false
		}
		setA, setB := map[string]bool{}, map[string]bool{}
		for _, s := range a {
			setA[labelKey(s, drop)] = true
		}
		for _, s := range b {
			setB[labelKey(s, drop)] = true
		}
		onlyPull, onlyPush = diff(setA, setB), diff(setB, setA)
		n = len(setA)
		return len(onlyPull) == 0 && len(onlyPush) == 0
	}, 90*time.Second, 2*time.Second)
	if !ok {
		t.Errorf("%s: series only pulled:\n  %s\nseries only pushed:\n  %s", node,
			strings.Join(onlyPull, "\n  "), strings.Join(onlyPush, "\n  "))
		return
	}
	t.Logf("%s: the %d mlx_* label sets pulled and pushed are the same", node, n)
}

// checkPullPushValues: at one instant, every mlx_* series of node has the
// same value in both stores: exactly, for a series that did not change in
// the last minute; for a counter that did, within what it rose in either
// store over the span their latest samples can be apart.
func checkPullPushValues(t *testing.T, pull, push liveVM, node string) {
	t.Helper()
	// Far enough back that the pushes of that moment have arrived (the
	// node sends every 10 s).
	at := strconv.FormatInt(time.Now().Add(-20*time.Second).Unix(), 10)
	type point struct {
		name string
		v    float64
	}
	get := func(vm liveVM, expr string) map[string]point {
		var d struct {
			Result []liveSample `json:"result"`
		}
		require.NoError(t, vm.get("/api/v1/query", url.Values{"query": {expr}, "time": {at}}, &d))
		out := map[string]point{}
		for _, r := range d.Result {
			v, err := strconv.ParseFloat(r.value(), 64)
			require.NoError(t, err)
			out[labelKey(r.Metric, map[string]bool{"instance": true})] = point{r.Metric["__name__"], v}
		}
		return out
	}
	sel := fmt.Sprintf(`{__name__=~"mlx_.+", node=%q}`, node)
	a, b := get(pull, sel), get(push, sel)
	hi := get(pull, fmt.Sprintf(`max_over_time(%s[1m]) keep_metric_names`, sel))
	lo := get(pull, fmt.Sprintf(`min_over_time(%s[1m]) keep_metric_names`, sel))
	// The two stores' latest samples before the instant can be a push
	// batch (config/push.yaml's batch/push: up to 10 s) and a few
	// intervals apart, either way round: a moving counter may differ by
	// what it rose over that span in either store.
	window := fmt.Sprintf("%ds", int((3*pushInterval+20*time.Second)/time.Second))
	rose := get(pull, fmt.Sprintf(`increase(%s[%s]) keep_metric_names`, sel, window))
	for k, p := range get(push, fmt.Sprintf(`increase(%s[%s]) keep_metric_names`, sel, window)) {
		if p.v > rose[k].v {
			rose[k] = p
		}
	}
	require.NotEmpty(t, a)
	var wrong []string
	exact, near := 0, 0
	for k, pa := range a {
		pb, ok := b[k]
		switch {
		case !ok:
			wrong = append(wrong, k+": not pushed at that instant")
		case hi[k].v == lo[k].v:
			exact++
			if pa.v != pb.v && !(math.IsNaN(pa.v) && math.IsNaN(pb.v)) {
				wrong = append(wrong, fmt.Sprintf("%s: pulled %v, pushed %v (unchanged for a minute)", k, pa.v, pb.v))
			}
		default:
			near++
			if isCounter(pa.name) && math.Abs(pa.v-pb.v) > rose[k].v+1e-9 {
				wrong = append(wrong, fmt.Sprintf("%s: pulled %v, pushed %v, rose %v in %s", k, pa.v, pb.v, rose[k].v, window))
			}
		}
	}
	assert.Empty(t, wrong, "%s: values pulled and pushed differ", node)
	t.Logf("%s: %d series equal (unchanged for a minute), %d moving (counters within their increase over %s)", node, exact, near, window)
}

// isCounter: a cumulative series by its name (client_golang's and the
// prometheus exporters' conventions).
func isCounter(name string) bool {
	for _, s := range []string{"_total", "_count", "_sum", "_bucket"} {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

func diff(a, b map[string]bool) []string {
	var out []string
	for k := range a {
		if !b[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// firingByNode is the set of "node/alert" firing now.
func firingByNode(t *testing.T, vm liveVM) map[string]bool {
	t.Helper()
	alerts, err := vm.alerts()
	require.NoError(t, err)
	out := map[string]bool{}
	for _, a := range alerts {
		if a.State == "firing" {
			out[a.Labels["node"]+"/"+a.Name] = true
		}
	}
	return out
}
