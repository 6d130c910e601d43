package dashboards

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/dashrender"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/fleetsim"
)

// fleetShots, when set (make fleet-screenshots), is where
// TestFleetViewsOnASimulatedFleet writes each fleet dashboard's page and
// its screenshot in headless Chromium.
var fleetShots = os.Getenv("FLEET_SCREENSHOTS")

// store finds a pinned store binary: $ENV, else on PATH (make unit puts
// bin/ first), else ../bin.
func store(t *testing.T, name, env string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if p, _ := filepath.Abs(filepath.Join("..", "bin", name)); fileExists(p) {
		return p
	}
	t.Skipf("%s not found ($%s, PATH or bin/): make stores builds it", name, env)
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func loopbackPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
}

// TestFleetViewsOnASimulatedFleet loads a synthetic five-node fleet's
// last 75 minutes (testutil/fleetsim: the contract's series as the
// scrape config stores them, with one node dark, one role down, one
// engine wedged, one collector crash-looping on an older version) into a
// real VictoriaMetrics, records mlx:agent_status:node_role over that
// history with a real vmalert (its replay mode, the shipped rule file),
// then runs every panel query of the three fleet dashboards as Grafana
// would (from their JSON, $__range and $__interval substituted) and checks
// what each shows: the right cell, row and count for each incident, and
// nothing raised for the healthy nodes.
func TestFleetViewsOnASimulatedFleet(t *testing.T) {
	results := fleetViews(t, true)
	for uid, r := range results {
		// Every panel query has data on the incident fleet.
		for _, p := range r.Panels {
			for _, q := range p.Queries {
				assert.NotEmpty(t, q.Series, "%s/%s/%s: no data: %s", uid, p.Panel.Title, q.RefID, q.Expr)
			}
		}
		if fleetShots != "" {
			screenshot(t, r, filepath.Join(fleetShots, uid))
		}
	}
	checkFleetStatus(t, results["mlx-fleet-status"])
	checkFleetInventory(t, results["mlx-fleet-inventory"])
	checkFleetAttention(t, results["mlx-fleet-attention"])
}

// The same fleet without an incident: every agent up, and Attention
// required empty, every query of it.
func TestFleetViewsOnAHealthyFleet(t *testing.T) {
	results := fleetViews(t, false)
	r := results["mlx-fleet-status"]
	assert.Equal(t, map[string]string{"up": "26", "expected": "26"}, statItems(t, r, "Agents up"))
	for _, title := range []string{"Degraded", "Down", "No data"} {
		for _, v := range statItems(t, r, title) {
			assert.Equal(t, "0", v, title)
		}
	}
	for _, row := range panel(t, r, "Node status by minute").Timeline {
		for _, c := range row.Cells {
			assert.Equal(t, "up", c.Text, "%s at %s", row.Name, c.Name)
		}
	}
	for _, row := range panel(t, results["mlx-fleet-inventory"], "Agents").Table.Rows {
		assert.Equal(t, "up", row[3].Text)
		assert.Equal(t, "current", row[7].Text)
	}
	a := results["mlx-fleet-attention"]
	require.NotEmpty(t, a.Panels)
	for _, p := range a.Panels {
		for _, q := range p.Queries {
			assert.Empty(t, q.Series, "%s/%s on a healthy fleet: %s", p.Panel.Title, q.RefID, q.Expr)
		}
	}
}

// fleetViews loads the synthetic fleet's history (with its incidents or
// without) into a real VictoriaMetrics, records mlx:agent_status:node_role
// over it with a real vmalert (its replay mode, the shipped rule file),
// and evaluates the three fleet dashboards at its end, by uid.
func fleetViews(t *testing.T, incidents bool) map[string]dashrender.Result {
	vmBin := store(t, "victoria-metrics", "VICTORIA_METRICS")
	vmalertBin := store(t, "vmalert", "VMALERT")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	port := loopbackPort(t)
	vmURL := "http://127.0.0.1:" + port
	var vmLog bytes.Buffer
	vm := exec.Command(vmBin, "-storageDataPath="+t.TempDir(), "-httpListenAddr=127.0.0.1:"+port,
		"-search.disableCache", "-search.latencyOffset=0s", "-loggerLevel=ERROR", "-retentionPeriod=10y")
	vm.Stdout, vm.Stderr = &vmLog, &vmLog
	require.NoError(t, vm.Start())
	t.Cleanup(func() { _ = vm.Process.Kill(); _ = vm.Wait() })
	client := &http.Client{Timeout: 10 * time.Second}
	require.Eventually(t, func() bool {
		resp, err := client.Get(vmURL + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 30*time.Second, 200*time.Millisecond, "VictoriaMetrics up: %s", &vmLog)

	// The history ends at a whole minute two minutes ago: vmalert's replay
	// evaluates on its group's 30 s grid, and the dashboards are read at end.
	end := time.Now().UTC().Truncate(time.Minute).Add(-2 * time.Minute)
	var body bytes.Buffer
	require.NoError(t, fleetsim.Write(&body, end, incidents))
	resp, err := client.Post(vmURL+"/api/v1/import", "application/json", &body)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode, "import")
	flush := func() {
		r, err := client.Get(vmURL + "/internal/force_flush")
		require.NoError(t, err)
		r.Body.Close()
	}
	flush()

	// vmalert replays the shipped rule over the history and writes the
	// recorded status back, as it does live every 30 s.
	replay := exec.CommandContext(ctx, vmalertBin, "-rule="+filepath.Join("..", "rules", "mlx-fleet-status.yml"),
		"-datasource.url="+vmURL, "-remoteWrite.url="+vmURL, "-replay.disableProgressBar", "-loggerLevel=ERROR",
		"-replay.timeFrom="+end.Add(-fleetsim.History).Format(time.RFC3339), "-replay.timeTo="+end.Format(time.RFC3339))
	out, err := replay.CombinedOutput()
	require.NoError(t, err, "vmalert replay: %s", out)
	flush()

	api := dashrender.API{URL: vmURL, Client: client}
	results := map[string]dashrender.Result{}
	for _, uid := range []string{"mlx-fleet-status", "mlx-fleet-inventory", "mlx-fleet-attention"} {
		d, err := dashrender.Load(uid + ".json")
		require.NoError(t, err)
		r, err := dashrender.Evaluate(d, api, end)
		require.NoError(t, err)
		results[uid] = r
	}
	return results
}

func panel(t *testing.T, r dashrender.Result, title string) dashrender.PanelResult {
	t.Helper()
	p, ok := r.Panel(title)
	require.True(t, ok, "%s: no panel %q", r.Dashboard.UID, title)
	return p
}

// statItems is a stat's shown values by name.
func statItems(t *testing.T, r dashrender.Result, title string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, it := range panel(t, r, title).Items {
		out[it.Name] = it.Text
	}
	return out
}

// healthy are the nodes with no incident.
var healthy = []string{"node01", "node02"}

func checkFleetStatus(t *testing.T, r dashrender.Result) {
	// 26 agents: five roles on five nodes, and node01's judge. node03's five
	// send nothing; node04's kvcache is down and its supervisor degraded.
	assert.Equal(t, map[string]string{"up": "19", "expected": "26"}, statItems(t, r, "Agents up"))
	assert.Equal(t, map[string]string{"degraded": "1"}, statItems(t, r, "Degraded"))
	assert.Equal(t, map[string]string{"down": "1"}, statItems(t, r, "Down"))
	assert.Equal(t, map[string]string{"no data": "5"}, statItems(t, r, "No data"))
	assert.Equal(t, map[string]string{"online": "4", "expected": "5"}, statItems(t, r, "Nodes online"))
	// Qwen (node01, node04) and Llama (node02, node05); node03's Gemma is dark.
	assert.Equal(t, map[string]string{"models": "2"}, statItems(t, r, "Models serving"))

	// The heat map: node by minute over 30 minutes, each cell its word.
	tl := panel(t, r, "Node status by minute")
	require.Len(t, tl.Times, 31, "one cell a minute for 30 minutes")
	rows := map[string][]dashrender.Cell{}
	for _, row := range tl.Timeline {
		rows[row.Name] = row.Cells
	}
	require.Len(t, rows, 5, "one row per node")
	end := r.End
	for i, ts := range tl.Times {
		ago := end.Sub(ts)
		want := map[string]string{"node01": "up", "node02": "up", "node05": "up", "node03": "up", "node04": "up"}
		// Silent from DarkAgo: no data once 3 minutes have passed with nothing.
		switch {
		case ago <= fleetsim.DarkAgo-3*time.Minute:
			want["node03"] = "no data"
		case ago < fleetsim.DarkAgo-2*time.Minute:
			want["node03"] = "" // the minute the 3-minute window runs out
		}
		switch {
		case ago < fleetsim.DownAgo:
			want["node04"] = "down" // the worst of its roles: kvcache
		case ago == fleetsim.DownAgo:
			want["node04"] = ""
		}
		for node, w := range want {
			if w == "" {
				continue
			}
			assert.Equal(t, w, rows[node][i].Text, "%s at %s (%s ago)", node, ts.Format("15:04"), ago)
		}
	}
	for _, c := range rows["node03"][len(tl.Times)-5:] {
		assert.Equal(t, "#8e8e8e", c.Colour, "no data is grey, not down's red")
	}

	// The matrix: a role per column, a node per row.
	m := panel(t, r, "Roles by node").Table
	require.NotNil(t, m)
	assert.Equal(t, []string{`node\role`, "hardware", "judge", "kvcache", "logpipeline", "proxy", "supervisor"}, m.Columns)
	cell := func(node, role string) string {
		row, i := m.Row(`node\role`, node)
		require.GreaterOrEqual(t, i, 0, "row %s", node)
		return row[m.Col(role)].Text
	}
	for _, role := range []string{"hardware", "kvcache", "logpipeline", "proxy", "supervisor"} {
		assert.Equal(t, "no data", cell("node03", role))
		for _, n := range append(healthy, "node05") {
			assert.Equal(t, "up", cell(n, role), "%s %s", n, role)
		}
	}
	assert.Equal(t, "up", cell("node01", "judge"))
	assert.Equal(t, "", cell("node02", "judge"), "node02 runs no judge")
	assert.Equal(t, "down", cell("node04", "kvcache"))
	assert.Equal(t, "degraded", cell("node04", "supervisor"))
	assert.Equal(t, "up", cell("node04", "proxy"))
}

func checkFleetInventory(t *testing.T, r dashrender.Result) {
	tb := panel(t, r, "Agents").Table
	require.NotNil(t, tb)
	assert.Equal(t, []string{"node", "role", "port", "status", "agent uptime", "node uptime", "version", "old", "commit", "model", "model_path", "last report"}, tb.Columns)
	require.Len(t, tb.Rows, 26, "one row per agent")
	col := func(row []dashrender.Cell, name string) string { return row[tb.Col(name)].Text }
	// Worst first: node03's five (no data), node04's kvcache (down), its
	// supervisor (degraded), then the rest, up.
	for i, row := range tb.Rows {
		switch {
		case i < 5:
			assert.Equal(t, "node03", col(row, "node"), "row %d", i)
			assert.Equal(t, "no data", col(row, "status"), "row %d", i)
			assert.Equal(t, "12 min ago", col(row, "last report"), "row %d: its last report", i)
		case i == 5:
			assert.Equal(t, []string{"node04", "kvcache", "down"}, []string{col(row, "node"), col(row, "role"), col(row, "status")})
		case i == 6:
			assert.Equal(t, []string{"node04", "supervisor", "degraded"}, []string{col(row, "node"), col(row, "role"), col(row, "status")})
		default:
			assert.Equal(t, "up", col(row, "status"), "row %d %s %s", i, col(row, "node"), col(row, "role"))
		}
		// The older version is marked, on node05's rows only.
		if col(row, "node") == "node05" {
			assert.Equal(t, []string{fleetsim.OldVersion, "OLD"}, []string{col(row, "version"), col(row, "old")})
		} else if col(row, "node") != "node03" {
			assert.Equal(t, []string{fleetsim.Version, "current"}, []string{col(row, "version"), col(row, "old")}, "%s", col(row, "node"))
		}
	}
	row, i := tb.Row("model", fleetsim.Models["node02"])
	require.GreaterOrEqual(t, i, 0)
	assert.Equal(t, "/Users/mlx/.cache/huggingface/hub/models--mlx-community--Llama-3.2-3B-Instruct-4bit", col(row, "model_path"))
	for _, row := range tb.Rows {
		if col(row, "node") == "node04" && col(row, "role") == "proxy" {
			assert.Equal(t, "8080", col(row, "port"))
			assert.Equal(t, "3.0 hour", col(row, "node uptime"), "node04 rebooted 3 h ago")
		}
		if col(row, "node") == "node01" && col(row, "role") == "hardware" {
			assert.Equal(t, "5.0 day", col(row, "node uptime"))
			assert.Equal(t, "3.0 day", col(row, "agent uptime"))
		}
	}
}

func checkFleetAttention(t *testing.T, r dashrender.Result) {
	assert.Equal(t, map[string]string{"agents": "7"}, statItems(t, r, "Agents not up"))
	oldest := panel(t, r, "Oldest outage").Items
	require.Len(t, oldest, 1)
	assert.Equal(t, "node04 kvcache", oldest[0].Name, "down 15 min, longer than node03's silence")
	require.NotNil(t, oldest[0].Value)
	assert.InDelta(t, fleetsim.DownAgo.Seconds(), *oldest[0].Value, 60)
	restarts := statItems(t, r, "Collector restarts (1 h)")
	assert.Equal(t, "1", restarts["nodes"], "one crash-looping node")
	assert.Contains(t, []string{"9", "10", "11"}, restarts["restarts"], "one restart every 3 min for 30 min")
	assert.Equal(t, map[string]string{"nodes": "1"}, statItems(t, r, "Nodes behind the newest version"))

	down := panel(t, r, "Agents down, degraded or silent").Table
	require.Len(t, down.Rows, 7)
	for i, row := range down.Rows {
		node := row[down.Col("node")].Text
		if i < 5 {
			assert.Equal(t, "node03", node)
			assert.Equal(t, "no data", row[down.Col("status")].Text)
			require.NotNil(t, row[down.Col("since")].Value)
			assert.InDelta(t, (fleetsim.DarkAgo - 3*time.Minute).Seconds(), *row[down.Col("since")].Value, 60, "up until the 3-minute window ran out")
		}
		assert.NotContains(t, healthy, node)
	}
	byNode := panel(t, r, "Restarts by node (1 h)").Table
	require.Len(t, byNode.Rows, 1)
	assert.Equal(t, "node05", byNode.Rows[0][byNode.Col("node")].Text)
	assert.NotEmpty(t, byNode.Rows[0][byNode.Col("crashes")].Text, "crashes, not clean restarts")

	old := panel(t, r, "Nodes on an older version").Table
	require.Len(t, old.Rows, 1)
	assert.Equal(t, []string{"node", "version"}, old.Columns)
	assert.Equal(t, []string{"node05", fleetsim.OldVersion}, []string{old.Rows[0][0].Text, old.Rows[0][1].Text})

	up := panel(t, r, "Lowest node uptimes (under a day)").Table
	require.Len(t, up.Rows, 1)
	assert.Equal(t, "node04", up.Rows[0][up.Col("node")].Text)

	// Nothing on this board names a healthy node.
	for _, p := range r.Panels {
		for _, q := range p.Queries {
			for _, s := range q.Series {
				assert.NotContains(t, healthy, s.Labels["node"], "%s/%s raises %s", p.Panel.Title, q.RefID, s.Labels["node"])
			}
		}
	}
}

// screenshot writes the evaluated dashboard's page (base.html) and, with
// Chromium, its screenshot (base.png).
func screenshot(t *testing.T, r dashrender.Result, base string) {
	t.Helper()
	require.NoError(t, dashrender.Screenshot(r, "A synthetic five-node fleet (testutil/fleetsim: node03 dark, node04's kvcache down and engine wedged, "+
		"node05 crash-looping on an older version), queried from VictoriaMetrics with the dashboard's own queries; rendered by testutil/dashrender, not Grafana. "+
		"Ending "+r.End.Format("2006-01-02 15:04")+" UTC.", base))
}
