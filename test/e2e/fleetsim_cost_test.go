//go:build e2e && stack

package e2e

import (
	"bufio"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// costWindow is how long measureFleetCost watches the fleet.
const costWindow = time.Minute

// measureFleetCost is what the fleet costs the observability host over
// costWindow: the gateway's CPU and memory, VictoriaMetrics' active series
// and ingestion rate (its own /metrics), vmalert's evaluation time (its
// own /metrics), each fleet dashboard's query time, and the nodes'
// collectors' CPU; with how loaded the machine was, since CPU-seconds
// suffer less from other work than wall-clock times do. One FLEETCOST line
// sums it up for docs/scaling.md.
func measureFleetCost(t *testing.T, vm liveVM, fleet []simNode, gw, vmalert *nodeCollector, nodes map[string]*nodeCollector, mu *sync.Mutex) {
	pidsOf := func() (eng, hw []int) {
		mu.Lock()
		defer mu.Unlock()
		for _, h := range fleet {
			if c := nodes[h.node]; c != nil && h.incident != incDark && h.incident != incCrash {
				if h.hasEngine() {
					eng = append(eng, c.cmd.Process.Pid)
				} else {
					hw = append(hw, c.cmd.Process.Pid)
				}
			}
		}
		return eng, hw
	}
	engPids, hwPids := pidsOf()
	cpuOf := func(pids []int) time.Duration {
		var s time.Duration
		for _, p := range pids {
			c, _ := procUsage(t, p)
			s += c
		}
		return s
	}
	vmMetrics := func() map[string]float64 {
		return scrapeSums(t, vm.base+"/metrics", "vm_rows_inserted_total", `vm_cache_entries{type="storage/hour_metric_ids"}`,
			"process_cpu_seconds_total", "process_resident_memory_bytes")
	}
	alertMetrics := func() map[string]float64 {
		return scrapeSums(t, vm.vmalert+"/metrics", "vmalert_iteration_duration_seconds_sum", "vmalert_iteration_duration_seconds_count")
	}
	busy0, total0 := machineCPU(t)
	gw0, _ := procUsage(t, gw.cmd.Process.Pid)
	al0, _ := procUsage(t, vmalert.cmd.Process.Pid)
	eng0, hw0 := cpuOf(engPids), cpuOf(hwPids)
	vm0, a0 := vmMetrics(), alertMetrics()
	start := time.Now()

	// The dashboards' query time: each evaluated three times in the window,
	// the median kept.
	took := map[string][]time.Duration{}
	for i := range 3 {
		time.Sleep(costWindow / 4)
		v, err := evalFleetViews(vm)
		require.NoError(t, err, "round %d", i)
		for uid, d := range v.took {
			took[uid] = append(took[uid], d)
		}
	}
	if rest := costWindow - time.Since(start); rest > 0 {
		time.Sleep(rest)
	}
	elapsed := time.Since(start)
	busy1, total1 := machineCPU(t)
	gw1, gwRSS := procUsage(t, gw.cmd.Process.Pid)
	al1, _ := procUsage(t, vmalert.cmd.Process.Pid)
	eng1, hw1 := cpuOf(engPids), cpuOf(hwPids)
	vm1, a1 := vmMetrics(), alertMetrics()
	load, _ := os.ReadFile("/proc/loadavg")

	n := float64(len(fleet))
	core := func(d time.Duration) float64 { return 100 * d.Seconds() / elapsed.Seconds() }
	perNode := func(d time.Duration, k int) float64 {
		if k == 0 {
			return 0
		}
		return core(d) / float64(k)
	}
	series := vm1[`vm_cache_entries{type="storage/hour_metric_ids"}`]
	rows := (vm1["vm_rows_inserted_total"] - vm0["vm_rows_inserted_total"]) / elapsed.Seconds()
	vmCPU := vm1["process_cpu_seconds_total"] - vm0["process_cpu_seconds_total"]
	evals := a1["vmalert_iteration_duration_seconds_count"] - a0["vmalert_iteration_duration_seconds_count"]
	evalSum := a1["vmalert_iteration_duration_seconds_sum"] - a0["vmalert_iteration_duration_seconds_sum"]
	var evalMean float64
	if evals > 0 {
		evalMean = evalSum / evals
	}
	median := func(ds []time.Duration) time.Duration {
		s := slices.Clone(ds)
		slices.Sort(s)
		return s[len(s)/2]
	}
	machine := 100 * float64(busy1-busy0) / float64(max(total1-total0, 1))
	t.Logf("over %s: gateway %.2f%% of a core (%.3f%% per node), %.0f MiB resident", elapsed.Round(time.Second), core(gw1-gw0), core(gw1-gw0)/n, float64(gwRSS)/1024)
	t.Logf("VictoriaMetrics: %.0f active series (%.0f per node), %.1f samples/s (%.2f per node), %.2f%% of a core, %.0f MiB",
		series, series/n, rows, rows/n, 100*vmCPU/elapsed.Seconds(), vm1["process_resident_memory_bytes"]/(1<<20))
	t.Logf("vmalert: %.0f group evaluations, %.1f ms each on average (%.1f s of evaluation a minute), %.2f%% of a core",
		evals, 1000*evalMean, evalSum*60/elapsed.Seconds(), core(al1-al0))
	t.Logf("dashboards (median of 3, every panel query one after another): status %s, inventory %s, attention %s",
		median(took["mlx-fleet-status"]), median(took["mlx-fleet-inventory"]), median(took["mlx-fleet-attention"]))
	// Series by node, as stored: an engine node's and a hardware-only one's.
	var engSeries, hwSeries, engN, hwN float64
	res, err := vm.query(`count by (node) ({node!="", __name__!~"ALERTS.*|mlx:.+"})`)
	require.NoError(t, err)
	kind := map[string]bool{}
	for _, h := range fleet {
		kind[h.node] = h.hasEngine()
	}
	for _, r := range res {
		v, _ := strconv.ParseFloat(r.value(), 64)
		if kind[r.Metric["node"]] {
			engSeries, engN = engSeries+v, engN+1
		} else {
			hwSeries, hwN = hwSeries+v, hwN+1
		}
	}
	t.Logf("series stored per node: %.0f per engine node (%.0f nodes), %.0f per hardware-only node (%.0f nodes)",
		engSeries/max(engN, 1), engN, hwSeries/max(hwN, 1), hwN)
	t.Logf("nodes' collectors: %.2f%% of a core per engine node (%d), %.2f%% per hardware-only node (%d)",
		perNode(eng1-eng0, len(engPids)), len(engPids), perNode(hw1-hw0, len(hwPids)), len(hwPids))
	t.Logf("machine: %.0f%% busy (all %d cores), load average %s", machine, machineCores(), strings.TrimSpace(string(load)))
	t.Logf("FLEETCOST | %d | %.2f | %.0f | %.0f | %.0f | %.0f / %.0f | %.1f | %.2f | %.1f | %d / %d / %d | %.2f / %.2f | %.0f%%, load %s |",
		len(fleet), core(gw1-gw0), float64(gwRSS)/1024, series, series/n, engSeries/max(engN, 1), hwSeries/max(hwN, 1), rows, 100*vmCPU/elapsed.Seconds(), 1000*evalMean,
		median(took["mlx-fleet-status"]).Milliseconds(), median(took["mlx-fleet-inventory"]).Milliseconds(), median(took["mlx-fleet-attention"]).Milliseconds(),
		perNode(eng1-eng0, len(engPids)), perNode(hw1-hw0, len(hwPids)), machine, strings.Fields(string(load))[0])
}

// scrapeSums reads a /metrics page and sums, for each of want, the values
// of the lines whose series is want (a bare name: every label set of it;
// name{...}: that label set's lines, by prefix).
func scrapeSums(t *testing.T, url string, want ...string) map[string]float64 {
	t.Helper()
	resp, err := liveHTTP.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 64<<20))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		if sp < 0 {
			continue
		}
		series, val := line[:sp], line[sp+1:]
		name, _, _ := strings.Cut(series, "{")
		for _, w := range want {
			if w == name || (strings.Contains(w, "{") && strings.HasPrefix(series, strings.TrimSuffix(w, "}"))) {
				v, err := strconv.ParseFloat(val, 64)
				require.NoError(t, err, "%s: %s", url, line)
				out[w] += v
			}
		}
	}
	require.NoError(t, sc.Err())
	for _, w := range want {
		_, ok := out[w]
		require.True(t, ok, "%s serves no %s", url, w)
	}
	return out
}

// machineCPU is the whole machine's busy and total jiffies (/proc/stat).
func machineCPU(t *testing.T) (busy, total int64) {
	t.Helper()
	b, err := os.ReadFile("/proc/stat")
	require.NoError(t, err)
	f := strings.Fields(strings.SplitN(string(b), "\n", 2)[0])[1:]
	for i, s := range f {
		v, _ := strconv.ParseInt(s, 10, 64)
		total += v
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return busy, total
}

func machineCores() int {
	b, _ := os.ReadFile("/proc/stat")
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "cpu") && !strings.HasPrefix(l, "cpu ") {
			n++
		}
	}
	return n
}
