//go:build e2e && stack

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/syncbuf"
)

// The helpers of TestStackFleetPush (fleetpush_test.go): the namespaces,
// the stores run directly, a byte-counting relay in front of the gateway.

// fleetHost is one simulated Mac: a network namespace linked to the root
// namespace by a veth pair.
type fleetHost struct {
	ns, node, rootIf, rootIP, ip string
	engine                       bool // runs config/mlx.yaml with the simulated engine
}

var fleetHosts = []fleetHost{
	{ns: "fp0", node: "rank0", rootIf: "fp-r0", rootIP: "10.214.0.1/30", ip: "10.214.0.2/30", engine: true},
	{ns: "fp1", node: "rank1", rootIf: "fp-r1", rootIP: "10.214.0.5/30", ip: "10.214.0.6/30"},
	{ns: "fp2", node: "rank2", rootIf: "fp-r2", rootIP: "10.214.0.9/30", ip: "10.214.0.10/30"},
}

// makeFleet builds the namespaces and their links, and removes them at
// cleanup (and first, when a killed run left them).
func makeFleet(t *testing.T) {
	t.Helper()
	remove := removeHosts(t, fleetHosts)
	t.Cleanup(remove)
	for _, h := range fleetHosts {
		addNamespace(t, h.ns, h.rootIf, h.rootIP, h.ip)
	}
}

// removeHosts checks that ip(8) is there, removes what a killed run may
// have left of hosts' namespaces and links, and returns the same removal.
func removeHosts(t *testing.T, hosts []fleetHost) func() {
	t.Helper()
	if _, err := exec.LookPath("ip"); err != nil {
		t.Fatalf("ip (iproute2) is needed for the fleet tests: %v", err)
	}
	remove := func() {
		for _, h := range hosts {
			removeNamespace(h.ns, h.rootIf)
		}
	}
	remove()
	return remove
}

// gatewayPorts is the gateway's overlay for its ports of this test: OTLP
// gRPC and HTTP, the health check and its own telemetry, on loopback.
func gatewayPorts(t *testing.T, grpc, http, health, telemetry int) string {
	t.Helper()
	return writeOverlay(t, "gateway-ports.yaml", fmt.Sprintf(`receivers:
  otlp:
    protocols:
      grpc: {endpoint: "127.0.0.1:%d"}
      http: {endpoint: "127.0.0.1:%d"}
extensions:
  health_check: {endpoint: "127.0.0.1:%d"}
service:
  telemetry:
    metrics:
      readers:
        - pull: {exporter: {prometheus: {host: 127.0.0.1, port: %d}}}
`, grpc, http, health, telemetry))
}

// startProcess runs cmd until the test ends (SIGTERM, then SIGKILL after
// 30 s), its output kept and shown when the test fails.
func startProcess(t *testing.T, name string, cmd *exec.Cmd) *nodeCollector {
	t.Helper()
	c := &nodeCollector{t: t, cmd: cmd, out: &syncbuf.Buffer{}, exited: make(chan struct{})}
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	c.cmd.Stdout, c.cmd.Stderr = c.out, c.out
	require.NoError(t, c.cmd.Start(), "%s", name)
	go func() { _ = c.cmd.Wait(); close(c.exited) }()
	t.Cleanup(func() {
		c.kill(syscall.SIGTERM)
		if t.Failed() {
			t.Logf("%s:\n%s", name, tailOf([]byte(c.out.String()), 3000))
		}
	})
	return c
}

// storeBinary is one of the pinned stores in ./bin (make stores).
func storeBinary(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(repoRoot, "bin", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s: %v (make stores builds it)", p, err)
	}
	return p
}

// startVM runs a VictoriaMetrics on 127.0.0.1:port with scrapeConfig.
func startVM(t *testing.T, name string, port int, scrapeConfig string) liveVM {
	t.Helper()
	startProcess(t, name, exec.Command(storeBinary(t, "victoria-metrics"),
		"-storageDataPath="+filepath.Join(t.TempDir(), name), fmt.Sprintf("-httpListenAddr=127.0.0.1:%d", port),
		"-promscrape.config="+scrapeConfig, "-loggerLevel=WARN",
		// A sample is queryable a second after it arrives; a backfilled one
		// is not hidden behind a cached result.
		"-search.latencyOffset=1s", "-search.disableCache"))
	vm := liveVM{base: fmt.Sprintf("http://127.0.0.1:%d", port)}
	waitListening(t, fmt.Sprintf("127.0.0.1:%d", port), name)
	return vm
}

func waitListening(t *testing.T, addr, what string) {
	t.Helper()
	require.Eventually(t, func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 30*time.Second, 200*time.Millisecond, "%s listening on %s", what, addr)
}

// fleetRules copies rules/*.yml into a directory of the test's own, with
// mlx-fleet.yml's windows and `for` shortened (3m -> 40s, for 1m -> 20s,
// evaluated every 5 s) so that a silent node fires within a minute. 20 s
// stays above the 10 s by which the nodes' last pushes before a gateway
// outage can differ, as the real minute does.
func fleetRules(t *testing.T) string {
	t.Helper()
	return copyRules(t, func(name, text string) string {
		if name != "mlx-fleet.yml" {
			return text
		}
		return strings.NewReplacer("interval: 30s", "interval: 5s", "[3m]", "[40s]", "for: 1m", "for: 20s").Replace(text)
	})
}

// copyRules copies rules/*.yml into a directory of the test's own, each
// file's text through rewrite (by its base name), and returns it.
func copyRules(t *testing.T, rewrite func(name, text string) string) string {
	t.Helper()
	dir := t.TempDir()
	files, err := filepath.Glob(filepath.Join(repoRoot, "rules", "*.yml"))
	require.NoError(t, err)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		name := filepath.Base(f)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(rewrite(name, string(b))), 0o600))
	}
	return dir
}

// vmalertAlert is one alert as vmalert's /api/v1/alerts shows it.
type vmalertAlert struct {
	Name   string            `json:"name"`
	State  string            `json:"state"`
	Value  string            `json:"value"`
	Labels map[string]string `json:"labels"`
}

func (a vmalertAlert) String() string {
	return fmt.Sprintf("%s{node=%q,role=%q} %s", a.Name, a.Labels["node"], a.Labels["role"], a.State)
}

// alerts lists vmalert's active alerts (pending and firing).
func (v liveVM) alerts() ([]vmalertAlert, error) {
	var d struct {
		Alerts []vmalertAlert `json:"alerts"`
	}
	err := (liveVM{base: v.vmalert}).get("/api/v1/alerts", nil, &d)
	return d.Alerts, err
}

// waitAlert waits until an alert named name fires with the labels of want,
// and returns every active alert at that moment.
func waitAlert(t *testing.T, vm liveVM, timeout time.Duration, name string, want map[string]string) []vmalertAlert {
	t.Helper()
	var last []vmalertAlert
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		alerts, err := vm.alerts()
		if err == nil {
			last = alerts
			for _, a := range alerts {
				if a.Name == name && a.State == "firing" && hasLabels(a.Labels, want) {
					return alerts
				}
			}
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("%s%v did not fire within %s; active: %v", name, want, timeout, last)
	return nil
}

func hasLabels(got, want map[string]string) bool {
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// samples is the raw samples of the series matching match between start
// and end, by label set (VictoriaMetrics' /api/v1/export: no lookback, no
// interpolation, what was stored).
func (v liveVM) samples(match string, start, end time.Time) (map[string][]int64, error) {
	u := v.base + "/api/v1/export?" + url.Values{
		"match[]": {match},
		"start":   {strconv.FormatInt(start.Unix(), 10)},
		"end":     {strconv.FormatInt(end.Unix(), 10)},
	}.Encode()
	resp, err := liveHTTP.Get(u)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string][]int64{}
	dec := json.NewDecoder(resp.Body)
	for {
		var line struct {
			Metric     map[string]string `json:"metric"`
			Timestamps []int64           `json:"timestamps"`
		}
		if err := dec.Decode(&line); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		k := labelKey(line.Metric, nil)
		out[k] = append(out[k], line.Timestamps...)
	}
}

// labelKey is a label set as one sorted string, without the labels of drop.
func labelKey(m map[string]string, drop map[string]bool) string {
	var kv []string
	for k, v := range m {
		if !drop[k] {
			kv = append(kv, k+"="+strconv.Quote(v))
		}
	}
	sort.Strings(kv)
	return "{" + strings.Join(kv, ",") + "}"
}

// relay forwards TCP connections from a node to the gateway and counts the
// bytes the node sends: what one node's push costs on the wire.
type relay struct {
	ln     net.Listener
	target string
	sent   atomic.Int64
}

func startRelay(t *testing.T, listen, target string) *relay {
	t.Helper()
	ln, err := net.Listen("tcp", listen)
	require.NoError(t, err)
	r := &relay{ln: ln, target: target}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go r.pipe(c)
		}
	}()
	return r
}

func (r *relay) pipe(c net.Conn) {
	defer c.Close()
	g, err := net.DialTimeout("tcp", r.target, 2*time.Second)
	if err != nil {
		return // the gateway is down: the node sees the connection closed
	}
	defer g.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(countingWriter{g, &r.sent}, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, g); done <- struct{}{} }()
	<-done
}

type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// procUsage is a process's CPU time so far and its resident memory, from
// /proc.
func procUsage(t *testing.T, pid int) (cpu time.Duration, rssKiB int64) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(t, err)
	// Fields after the command's closing parenthesis: utime and stime are
	// the 12th and 13th (clock ticks, 100 a second on Linux).
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	cpu = time.Duration(ut+st) * 10 * time.Millisecond
	s, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(s), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			rssKiB, _ = strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return cpu, rssKiB
}
