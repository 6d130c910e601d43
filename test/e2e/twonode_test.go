//go:build e2e && stack

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/syncbuf"
)

// The test's hosts: two network namespaces, each linked to the root
// namespace (where the observability stack runs) by a veth pair, and linked
// to each other by a third pair, their ring.
var twoNodes = []struct {
	ns, rootIf, rootIP, ip, ringIP string
}{
	{ns: "rank0", rootIf: "mlxt-rank0", rootIP: "10.213.0.1/30", ip: "10.213.0.2/30", ringIP: "10.213.1.1/30"},
	{ns: "rank1", rootIf: "mlxt-rank1", rootIP: "10.213.0.5/30", ip: "10.213.0.6/30", ringIP: "10.213.1.2/30"},
}

func addr(cidr string) string { return strings.Split(cidr, "/")[0] }

// ipCmd runs ip(8) and fails the test with its output.
func ipCmd(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command("ip", args...).CombinedOutput()
	require.NoError(t, err, "ip %s: %s", strings.Join(args, " "), out)
}

// makeTwoNodes builds the namespaces and their links, and removes them at
// cleanup (and first, when a killed run left them).
func makeTwoNodes(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("ip"); err != nil {
		t.Fatalf("ip (iproute2) is needed for the two-node test: %v", err)
	}
	remove := func() {
		for _, n := range twoNodes {
			removeNamespace(n.ns, n.rootIf)
		}
	}
	remove()
	t.Cleanup(remove)
	for _, n := range twoNodes {
		addNamespace(t, n.ns, n.rootIf, n.rootIP, n.ip)
	}
	// The ring: rank0's ring0 to rank1's ring0.
	ipCmd(t, "link", "add", "ring0", "netns", twoNodes[0].ns, "type", "veth", "peer", "name", "ring0", "netns", twoNodes[1].ns)
	for _, n := range twoNodes {
		ipCmd(t, "-n", n.ns, "addr", "add", n.ringIP, "dev", "ring0")
		ipCmd(t, "-n", n.ns, "link", "set", "ring0", "up")
	}
}

// addNamespace makes the network namespace ns, linked to the root namespace
// by a veth pair: rootIf with rootIP here, eth0 with ip there.
func addNamespace(t *testing.T, ns, rootIf, rootIP, ip string) {
	t.Helper()
	ipCmd(t, "netns", "add", ns)
	ipCmd(t, "-n", ns, "link", "set", "lo", "up")
	ipCmd(t, "link", "add", rootIf, "type", "veth", "peer", "name", "eth0", "netns", ns)
	ipCmd(t, "addr", "add", rootIP, "dev", rootIf)
	ipCmd(t, "link", "set", rootIf, "up")
	ipCmd(t, "-n", ns, "addr", "add", ip, "dev", "eth0")
	ipCmd(t, "-n", ns, "link", "set", "eth0", "up")
}

// removeNamespace removes what addNamespace made, if it is there.
func removeNamespace(ns, rootIf string) {
	_ = exec.Command("ip", "netns", "del", ns).Run()
	_ = exec.Command("ip", "link", "del", rootIf).Run()
}

// nodeCollector is the built collector running in a namespace.
type nodeCollector struct {
	t      *testing.T
	cmd    *exec.Cmd
	out    *syncbuf.Buffer
	exited chan struct{}
}

func startInNamespace(t *testing.T, ns string, env []string, configs ...string) *nodeCollector {
	t.Helper()
	return startBinaryInNamespace(t, binary(t, "MLX_OTELCOL"), ns, env, configs...)
}

// startBinaryInNamespace runs the collector bin in ns with configs (paths
// under the repository, or absolute).
func startBinaryInNamespace(t *testing.T, bin, ns string, env []string, configs ...string) *nodeCollector {
	t.Helper()
	args := []string{"netns", "exec", ns, bin}
	for _, c := range configs {
		if !filepath.IsAbs(c) {
			c = filepath.Join(repoRoot, c)
		}
		args = append(args, "--config", c)
	}
	// ip netns exec execs the collector: the pid is the collector's.
	c := &nodeCollector{t: t, cmd: exec.Command("ip", args...), out: &syncbuf.Buffer{}, exited: make(chan struct{})}
	c.cmd.Dir = repoRoot
	// Dies with the test, even when a timeout skips the cleanups.
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	// The original ports on every address of the namespace, whatever the
	// developer's shell says.
	c.cmd.Env = append(os.Environ(), "MLX_LISTEN_HOST=0.0.0.0", "MLX_METRICS_TOKEN=", "MLX_PROXY_METRICS_ENDPOINT=")
	c.cmd.Env = append(c.cmd.Env, env...)
	c.cmd.Stdout, c.cmd.Stderr = c.out, c.out
	require.NoError(t, c.cmd.Start())
	go func() { _ = c.cmd.Wait(); close(c.exited) }()
	t.Cleanup(func() {
		c.kill(syscall.SIGTERM)
		if t.Failed() {
			t.Logf("collector in %s:\n%s", ns, tailOf([]byte(c.out.String()), 4000))
		}
	})
	return c
}

func (c *nodeCollector) kill(sig syscall.Signal) {
	select {
	case <-c.exited:
		return
	default:
	}
	_ = c.cmd.Process.Signal(sig)
	select {
	case <-c.exited:
	case <-time.After(30 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
}

// scrapeNode reads one of a node's metric endpoints from the root namespace.
func scrapeNode(ip string, port int) (*promtext.Scrape, error) {
	client := http.Client{Timeout: 3 * time.Second}
	resp, err := client.Get(fmt.Sprintf("http://%s:%d/metrics", ip, port))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(resp.Body); err != nil {
		return nil, err
	}
	return promtext.Parse(b.Bytes())
}

// TestStackTwoNodes is a two-Mac ring in two network namespaces: rank0 runs
// the whole distribution (config/mlx.yaml + config/ring.yaml, with the
// simulated engine of config/demo.yaml in place of mlx.launch), rank1 the
// ring member's (config/node.yaml), each on the original ports. The root
// namespace runs VictoriaMetrics, vmalert and Alertmanager with the shipped
// configs, rendered by obs-stack.sh from one env file that names the two
// nodes; the nodes read the hostfile rendered from the same file. About 3
// minutes: MLXHardwareExporterDown waits 2 minutes before it fires.
func TestStackTwoNodes(t *testing.T) {
	began := time.Now()
	t.Cleanup(func() { t.Logf("TestStackTwoNodes took %s", time.Since(began).Round(time.Second)) })
	makeTwoNodes(t)
	hook := newLiveWebhook(t)
	rank0, rank1 := addr(twoNodes[0].ip), addr(twoNodes[1].ip)

	obs := runObsStack(t, hook, map[string]string{
		"RANK0_ADDR":    rank0,
		"RANK1_ADDR":    rank1,
		"RANK0_RING_IP": addr(twoNodes[0].ringIP),
		"RANK1_RING_IP": addr(twoNodes[1].ringIP),
		"OBS_ADDR":      "127.0.0.1",
		// The resolution is notified within seconds, not 5 minutes.
		"ALERT_GROUP_INTERVAL": "5s",
	}, func() int { return freePort(t) })
	vm := obs.vm
	hostfile := filepath.Join(obs.dir, "hosts.json")
	b, err := os.ReadFile(hostfile)
	require.NoError(t, err)
	t.Logf("hosts.json rendered from the test's env file:\n%s", b)

	// No node name is given: each collector finds its rank in the hostfile.
	dataDir := t.TempDir()
	startInNamespace(t, "rank0", []string{
		"MLX_RING_HOSTFILE=" + hostfile, "MLXSIM=" + binary(t, "MLXSIM"), "MLX_DATA_DIR=" + dataDir,
		"MLXSIM_LOAD_DELAY=0s", "MLX_NODE_NAME=",
	}, "config/mlx.yaml", "config/ring.yaml", "config/demo.yaml")
	nodeEnv := []string{"MLX_RING_HOSTFILE=" + hostfile, "MLX_NODE_NAME="}
	node1 := startInNamespace(t, "rank1", nodeEnv, "config/node.yaml")

	t.Run("TargetsUp", func(t *testing.T) {
		// The first scrapes may have come before a collector listened.
		require.Eventually(t, func() bool {
			targets, err := vm.targets()
			if err != nil {
				return false
			}
			res, err := vm.query(`up == 1`)
			return err == nil && len(targets) > 0 && len(res) == len(targets)
		}, 60*time.Second, time.Second, "every target's last scrape up")
		liveCheckTargets(t, vm, obs.scrapeJobs)
	})

	t.Run("HardwareOfBothNodes", func(t *testing.T) {
		for _, rank := range []string{"rank0", "rank1"} {
			require.Eventually(t, func() bool {
				res, err := vm.query(fmt.Sprintf(`mlx_hw_up{job="mlx-hw", node=%q}`, rank))
				return err == nil && len(res) == 1
			}, 30*time.Second, time.Second, "mlx_hw_up of %s", rank)
		}
		// The README's metric query: a value per node.
		res, err := vm.query(readmeMetricQuery)
		require.NoError(t, err)
		var nodes []string
		for _, r := range res {
			nodes = append(nodes, r.Metric["node"])
			assert.NotEqual(t, "0", r.value())
		}
		assert.ElementsMatch(t, []string{"rank0", "rank1"}, nodes, "%s", readmeMetricQuery)
		// No series twice: every series, its scrape target's labels aside,
		// comes from one target.
		series, err := vm.series(`{__name__=~"mlx_.+|otelcol_.+"}`, began)
		require.NoError(t, err)
		targets := map[string]map[string]bool{}
		for _, s := range series {
			var key []string
			for k, v := range s {
				if k != "instance" && k != "job" && k != "service" {
					key = append(key, k+"="+v)
				}
			}
			sort.Strings(key)
			k := strings.Join(key, ",")
			if targets[k] == nil {
				targets[k] = map[string]bool{}
			}
			targets[k][s["instance"]] = true
		}
		var twice []string
		for k, ins := range targets {
			if len(ins) > 1 {
				twice = append(twice, k)
			}
		}
		assert.Empty(t, twice, "series served by more than one target")
		assert.Greater(t, len(targets), 100, "the check saw the series")

		// Each node names itself from the hostfile as the rules and
		// dashboards know it (the scrape keeps the series' own node,
		// honor_labels), and counts its ring interface only.
		for _, n := range []struct{ ip, rank string }{{rank0, "rank0"}, {rank1, "rank1"}} {
			sc, err := scrapeNode(n.ip, 9102)
			require.NoError(t, err)
			v, ok := sc.Value("mlx_hw_up", "node", n.rank)
			assert.True(t, ok && v == 1, "%s's receiver names itself %s: %v", n.ip, n.rank, sc.Series("mlx_hw_up"))
		}
		require.Eventually(t, func() bool {
			sc, err := scrapeNode(rank1, 9102)
			if err != nil {
				return false
			}
			_, ring := sc.Value("mlx_net_rx_bytes_total", "node", "rank1", "iface", "ring0")
			_, eth := sc.Value("mlx_net_rx_bytes_total", "node", "rank1", "iface", "eth0")
			return ring && !eth
		}, 30*time.Second, time.Second, "rank1 counts ring0, not eth0, in mlx_net_*")
	})

	t.Run("EngineSeriesOnlyFromRank0", func(t *testing.T) {
		require.Eventually(t, func() bool {
			res, err := vm.query(`mlx_server_ready`)
			return err == nil && len(res) == 1 && res[0].value() == "1"
		}, 60*time.Second, time.Second, "rank0's engine ready")
		for _, job := range []string{"mlx-proxy", "mlx-kv", "mlx-supervisor", "mlx-logtailer"} {
			res, err := vm.query(fmt.Sprintf(`count by (node) ({job=%q})`, job))
			require.NoError(t, err)
			var nodes []string
			for _, r := range res {
				nodes = append(nodes, r.Metric["node"])
			}
			assert.Equal(t, []string{"rank0"}, nodes, "job %s", job)
		}
		// Whatever VictoriaMetrics has from rank1's targets is hardware and
		// the collector's own health. vmalert's ALERTS series are left out:
		// they carry the instance of an alert's series (a target of rank1's
		// seen down while its collector was starting is a pending
		// MLXHardwareExporterDown), but rank1 does not serve them.
		res, err := vm.query(fmt.Sprintf(`count by (__name__) ({instance=~%q, __name__!~"ALERTS|ALERTS_FOR_STATE"})`, rank1+":.*"))
		require.NoError(t, err)
		require.NotEmpty(t, res)
		for _, r := range res {
			name := r.Metric["__name__"]
			ok := strings.HasPrefix(name, "mlx_hw_") || strings.HasPrefix(name, "mlx_net_") ||
				strings.HasPrefix(name, "mlx_proc_") || strings.HasPrefix(name, "mlx_worker_") ||
				strings.HasPrefix(name, "otelcol_") || strings.HasPrefix(name, "promhttp_") || strings.HasPrefix(name, "scrape_") ||
				strings.HasPrefix(name, "mlx_agent_") || name == "up" || name == "target_info"
			assert.True(t, ok, "rank1 serves %s", name)
		}
		// rank1's fleet contract: its one role, the hardware.
		res, err = vm.query(fmt.Sprintf(`count by (role) (mlx_agent_up{instance=~%q})`, rank1+":.*"))
		require.NoError(t, err)
		var roles []string
		for _, r := range res {
			roles = append(roles, r.Metric["role"])
		}
		assert.Equal(t, []string{"hardware"}, roles, "rank1 runs the hardware role only")
		// rank1 serves none of the engine's ports.
		for _, port := range []int{8080, 9104, 9105, 9106} {
			c, err := net.DialTimeout("tcp", fmt.Sprintf("%s:%d", rank1, port), 2*time.Second)
			if err == nil {
				c.Close()
			}
			assert.Error(t, err, "rank1 listens on %d", port)
		}
	})

	t.Run("Rank1DownPagesAndInhibits", func(t *testing.T) {
		node1.kill(syscall.SIGKILL)
		killed := time.Now()
		down := hook.waitFor(t, 4*time.Minute, "MLXHardwareExporterDown{node=rank1} at the on-call webhook", func(n liveNotification) bool {
			return n.Path == "/oncall" && hasAlert(n, "firing", "MLXHardwareExporterDown", "rank1")
		})
		t.Logf("paged %s after rank1's collector was killed", time.Since(killed).Round(100*time.Millisecond))
		for _, a := range down.Alerts {
			assert.Equal(t, "critical", a.Labels["severity"])
			assert.Contains(t, a.Annotations["summary"], "rank1")
		}
		assert.False(t, anyAlert(hook.all(), "MLXHardwareExporterDown", "rank0"), "rank0's exporter is up")

		// rank1's GPU and thermal alerts, and the same alert of rank0, sent
		// to the real Alertmanager as vmalert would: rank1's are inhibited by
		// its exporter being down, rank0's is not.
		postAlerts(t, obs.amURL, []map[string]string{
			{"alertname": "MLXThermalThrottling", "node": "rank1", "severity": "warning", "job": "mlx-hw"},
			{"alertname": "MLXGPUHighUtilization", "node": "rank1", "severity": "warning", "job": "mlx-hw"},
			{"alertname": "MLXThermalThrottling", "node": "rank0", "severity": "warning", "job": "mlx-hw"},
		})
		hook.waitFor(t, 30*time.Second, "rank0's MLXThermalThrottling at the alert webhook", func(n liveNotification) bool {
			return n.Path == "/alert" && hasAlert(n, "firing", "MLXThermalThrottling", "rank0")
		})
		var inhibited []string
		assert.Eventually(t, func() bool {
			inhibited = amInhibited(t, obs.amURL)
			return len(inhibited) >= 2
		}, 10*time.Second, 200*time.Millisecond)
		assert.Subset(t, inhibited, []string{"MLXGPUHighUtilization/rank1", "MLXThermalThrottling/rank1"},
			"Alertmanager holds rank1's GPU and thermal alerts as inhibited")
		assert.NotContains(t, inhibited, "MLXThermalThrottling/rank0")
		assert.False(t, anyAlert(hook.all(), "MLXThermalThrottling", "rank1"), "rank1's thermal alert reached no webhook")
		assert.False(t, anyAlert(hook.all(), "MLXGPUHighUtilization", "rank1"), "rank1's GPU alert reached no webhook")
	})

	t.Run("Rank1BackResolves", func(t *testing.T) {
		startInNamespace(t, "rank1", nodeEnv, "config/node.yaml")
		back := time.Now()
		hook.waitFor(t, 3*time.Minute, "MLXHardwareExporterDown{node=rank1} resolved at the on-call webhook", func(n liveNotification) bool {
			return n.Path == "/oncall" && hasAlert(n, "resolved", "MLXHardwareExporterDown", "rank1")
		})
		t.Logf("resolved %s after rank1's collector restarted", time.Since(back).Round(100*time.Millisecond))
		require.Eventually(t, func() bool {
			res, err := vm.query(`up{job="mlx-hw", node="rank1"}`)
			return err == nil && len(res) == 1 && res[0].value() == "1"
		}, 30*time.Second, time.Second)
	})
}

func hasAlert(n liveNotification, status, name, node string) bool {
	for _, a := range n.Alerts {
		if a.Status == status && a.Labels["alertname"] == name && a.Labels["node"] == node {
			return true
		}
	}
	return false
}

func anyAlert(ns []liveNotification, name, node string) bool {
	for _, n := range ns {
		for _, a := range n.Alerts {
			if a.Labels["alertname"] == name && a.Labels["node"] == node {
				return true
			}
		}
	}
	return false
}

// postAlerts sends firing alerts to Alertmanager's API, as vmalert does.
func postAlerts(t *testing.T, am string, labels []map[string]string) {
	t.Helper()
	var alerts []map[string]any
	for _, l := range labels {
		alerts = append(alerts, map[string]any{"labels": l, "annotations": map[string]string{"summary": "test alert on " + l["node"]},
			"startsAt": time.Now().UTC().Format(time.RFC3339), "endsAt": time.Now().Add(10 * time.Minute).UTC().Format(time.RFC3339)})
	}
	body, err := json.Marshal(alerts)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, am+"/api/v2/alerts", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// amInhibited lists Alertmanager's inhibited alerts, as name/node.
func amInhibited(t *testing.T, am string) []string {
	t.Helper()
	resp, err := http.Get(am + "/api/v2/alerts")
	require.NoError(t, err)
	defer resp.Body.Close()
	var alerts []struct {
		Labels map[string]string `json:"labels"`
		Status struct {
			State       string   `json:"state"`
			InhibitedBy []string `json:"inhibitedBy"`
		} `json:"status"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&alerts))
	var out []string
	for _, a := range alerts {
		if a.Status.State == "suppressed" && len(a.Status.InhibitedBy) > 0 {
			out = append(out, a.Labels["alertname"]+"/"+a.Labels["node"])
		}
	}
	return out
}
