//go:build e2e && stack

package e2e

import (
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/dashrender"
)

// What the three fleet dashboards show of the simulated fleet, and what
// they must show: checkSimViews returns every difference, so that the test
// can wait for the fleet to settle and report all of them if it does not.

var fleetDashboards = []string{"mlx-fleet-status", "mlx-fleet-inventory", "mlx-fleet-attention"}

type simViews struct {
	end     time.Time
	results map[string]dashrender.Result
	took    map[string]time.Duration // each dashboard's queries, run one after another
}

// timedQuerier adds up the time its queries take.
type timedQuerier struct {
	q    dashrender.Querier
	took time.Duration
}

func (t *timedQuerier) Query(expr string, at time.Time) ([]dashrender.Series, error) {
	start := time.Now()
	defer func() { t.took += time.Since(start) }()
	return t.q.Query(expr, at)
}

func (t *timedQuerier) QueryRange(expr string, start, end time.Time, step time.Duration) ([]dashrender.Series, error) {
	began := time.Now()
	defer func() { t.took += time.Since(began) }()
	return t.q.QueryRange(expr, start, end, step)
}

// evalFleetViews runs every panel query of the three dashboards (their
// JSON, as provisioned) against the store now, as Grafana would.
func evalFleetViews(vm liveVM) (simViews, error) {
	v := simViews{end: time.Now(), results: map[string]dashrender.Result{}, took: map[string]time.Duration{}}
	api := dashrender.API{URL: vm.base, Client: &http.Client{Timeout: 30 * time.Second}}
	for _, uid := range fleetDashboards {
		d, err := dashrender.Load(filepath.Join(repoRoot, "dashboards", uid+".json"))
		if err != nil {
			return v, err
		}
		q := &timedQuerier{q: api}
		r, err := dashrender.Evaluate(d, q, v.end)
		if err != nil {
			return v, err
		}
		v.results[uid], v.took[uid] = r, q.took
	}
	return v, nil
}

// simCheck collects differences.
type simCheck struct{ problems []string }

func (c *simCheck) eq(what string, want, got any) {
	if fmt.Sprint(want) != fmt.Sprint(got) {
		c.problems = append(c.problems, fmt.Sprintf("%s: want %v, got %v", what, want, got))
	}
}

func (c *simCheck) fail(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

func (c *simCheck) panel(r dashrender.Result, title string) (dashrender.PanelResult, bool) {
	p, ok := r.Panel(title)
	if !ok {
		c.fail("%s: no panel %q", r.Dashboard.UID, title)
	}
	return p, ok
}

func (c *simCheck) items(r dashrender.Result, title string) map[string]string {
	out := map[string]string{}
	if p, ok := c.panel(r, title); ok {
		for _, it := range p.Items {
			out[it.Name] = it.Text
		}
	}
	return out
}

func (c *simCheck) table(r dashrender.Result, title string) *dashrender.Table {
	p, ok := c.panel(r, title)
	if !ok || p.Table == nil {
		c.fail("%s: %q is no table", r.Dashboard.UID, title)
		return &dashrender.Table{}
	}
	return p.Table
}

// simStatus is what each agent's status must be: the incidents', and up
// for the rest. The wedged node's proxy may read degraded as well: its
// mlx_up follows its requests' fate (a timed-out completion) between
// /health probes, which answer.
func simStatus(fleet []simNode, inc map[string]simNode) map[string]string {
	want := map[string]string{}
	for _, h := range fleet {
		for _, role := range h.roles() {
			want[h.node+"/"+role] = "up"
		}
	}
	want[inc[incDark].node+"/hardware"] = "no data"
	want[inc[incRoleDown].node+"/kvcache"] = "down"
	want[inc[incWedged].node+"/supervisor"] = "degraded"
	return want
}

// checkSimViews compares what the dashboards show with the incidents.
func checkSimViews(v simViews, fleet []simNode, inc map[string]simNode, version string) []string {
	c := &simCheck{}
	want := simStatus(fleet, inc)
	wedgedProxy := inc[incWedged].node + "/proxy"
	st, invent, att := v.results["mlx-fleet-status"], v.results["mlx-fleet-inventory"], v.results["mlx-fleet-attention"]

	// Every panel query has data: each incident shows somewhere on each board.
	for _, uid := range fleetDashboards {
		for _, p := range v.results[uid].Panels {
			for _, q := range p.Queries {
				if len(q.Series) == 0 {
					c.fail("%s/%s/%s: no data: %s", uid, p.Panel.Title, q.RefID, q.Expr)
				}
			}
		}
	}

	// Fleet status: the roles by node, cell by cell (the wedged proxy
	// read from it, up or degraded), then the counts that follow.
	m := c.table(st, "Roles by node")
	got := map[string]string{}
	for _, row := range m.Rows {
		for i, col := range m.Columns[1:] {
			if t := row[i+1].Text; t != "" {
				got[row[0].Text+"/"+col] = t
			}
		}
	}
	if s := got[wedgedProxy]; s == "degraded" {
		want[wedgedProxy] = s
	}
	count := map[string]int{}
	for _, s := range want {
		count[s]++
	}
	c.eq("Roles by node", want, got)
	c.eq("Agents up", map[string]string{"up": strconv.Itoa(count["up"]), "expected": strconv.Itoa(len(want))}, c.items(st, "Agents up"))
	c.eq("Degraded", map[string]string{"degraded": strconv.Itoa(count["degraded"])}, c.items(st, "Degraded"))
	c.eq("Down", map[string]string{"down": "1"}, c.items(st, "Down"))
	c.eq("No data", map[string]string{"no data": "1"}, c.items(st, "No data"))
	c.eq("Nodes online", map[string]string{"online": strconv.Itoa(len(fleet) - 1), "expected": strconv.Itoa(len(fleet))}, c.items(st, "Nodes online"))
	// The models whose proxy is up.
	serving := map[int]bool{}
	for _, h := range fleet {
		if h.hasEngine() && want[h.node+"/proxy"] == "up" {
			serving[h.model] = true
		}
	}
	c.eq("Models serving", map[string]string{"models": strconv.Itoa(len(serving))}, c.items(st, "Models serving"))
	// The heat map's last minute: each node's worst role.
	if tl, ok := c.panel(st, "Node status by minute"); ok {
		worst := map[string]string{}
		for _, h := range fleet {
			worst[h.node] = "up"
		}
		rank := map[string]int{"no data": 0, "down": 1, "degraded": 2, "up": 3}
		for k, s := range want {
			node, _, _ := strings.Cut(k, "/")
			if rank[s] < rank[worst[node]] {
				worst[node] = s
			}
		}
		last := map[string]string{}
		for _, row := range tl.Timeline {
			if len(row.Cells) > 0 {
				last[row.Name] = row.Cells[len(row.Cells)-1].Text
			}
		}
		c.eq("Node status by minute, last minute", worst, last)
	}

	// Fleet inventory: one row per agent, worst first; the old version
	// marked on its node's rows only; each engine's model.
	tb := c.table(invent, "Agents")
	col := func(row []dashrender.Cell, name string) string {
		if i := tb.Col(name); i >= 0 {
			return row[i].Text
		}
		return "(no column " + name + ")"
	}
	c.eq("Agents: rows", len(want), len(tb.Rows))
	order := []string{inc[incDark].node + "/hardware", inc[incRoleDown].node + "/kvcache", inc[incWedged].node + "/supervisor"}
	if want[wedgedProxy] == "degraded" {
		order = append(order, wedgedProxy)
	}
	rank := map[string]int{"no data": 0, "down": 1, "degraded": 2, "up": 3}
	prev := -1
	models := map[string]string{}
	for i, row := range tb.Rows {
		key := col(row, "node") + "/" + col(row, "role")
		c.eq("Agents: status of "+key, want[key], col(row, "status"))
		if r := rank[col(row, "status")]; r < prev {
			c.fail("Agents: row %d (%s, %s) after a better status: not worst first", i, key, col(row, "status"))
		} else {
			prev = r
		}
		if i < len(order) && want[order[i]] != "up" {
			c.eq(fmt.Sprintf("Agents: row %d", i), order[i], key)
		}
		node := col(row, "node")
		switch {
		case node == inc[incOld].node:
			c.eq("Agents: version of "+key, oldVersion+" OLD", col(row, "version")+" "+col(row, "old"))
		case node != inc[incDark].node:
			c.eq("Agents: version of "+key, version+" current", col(row, "version")+" "+col(row, "old"))
		}
		if col(row, "role") == "proxy" {
			models[node] = col(row, "model")
		}
	}
	for _, h := range fleet {
		if h.hasEngine() {
			c.eq("Agents: model of "+h.node, simModels[h.model].id, models[h.node])
		}
	}

	// Attention required: only the incidents.
	notUp := 0
	for _, s := range want {
		if s != "up" {
			notUp++
		}
	}
	c.eq("Agents not up", map[string]string{"agents": strconv.Itoa(notUp)}, c.items(att, "Agents not up"))
	if p, ok := c.panel(att, "Oldest outage"); ok {
		if len(p.Items) != 1 || !slices.Contains([]string{"hardware", "kvcache", "supervisor", "proxy"}, lastWord(p.Items[0].Name)) ||
			want[firstWord(p.Items[0].Name)+"/"+lastWord(p.Items[0].Name)] == "up" {
			c.fail("Oldest outage: want one of the incidents' agents, got %v", p.Items)
		}
	}
	rs := c.items(att, "Collector restarts (1 h)")
	c.eq("Collector restarts (1 h): nodes", "1", rs["nodes"])
	if n, _ := strconv.Atoi(rs["restarts"]); n < 3 {
		c.fail("Collector restarts (1 h): want 3 or more restarts, got %v", rs)
	}
	c.eq("Nodes behind the newest version", map[string]string{"nodes": "1"}, c.items(att, "Nodes behind the newest version"))
	down := c.table(att, "Agents down, degraded or silent")
	var downKeys []string
	for _, row := range down.Rows {
		downKeys = append(downKeys, row[down.Col("node")].Text+"/"+row[down.Col("role")].Text)
	}
	c.eq("Agents down, degraded or silent", order, downKeys)
	byNode := c.table(att, "Restarts by node (1 h)")
	if len(byNode.Rows) != 1 || byNode.Rows[0][byNode.Col("node")].Text != inc[incCrash].node || byNode.Rows[0][byNode.Col("crashes")].Text == "" {
		c.fail("Restarts by node (1 h): want one row, %s with its crashes; got %v", inc[incCrash].node, byNode.Rows)
	}
	old := c.table(att, "Nodes on an older version")
	var oldRows [][]string
	for _, row := range old.Rows {
		oldRows = append(oldRows, []string{row[0].Text, row[1].Text})
	}
	c.eq("Nodes on an older version", [][]string{{inc[incOld].node, oldVersion}}, oldRows)
	// Nothing else on the board names a healthy node. The lowest uptimes
	// are left out: the simulated nodes share this machine's kernel, whose
	// uptime (under a day here) every hardware receiver reports.
	healthy := healthyNodes(fleet)
	for _, p := range att.Panels {
		if p.Panel.Title == "Lowest node uptimes (under a day)" {
			continue
		}
		for _, q := range p.Queries {
			for _, s := range q.Series {
				if slices.Contains(healthy, s.Labels["node"]) {
					c.fail("Attention required/%s/%s names the healthy node %s", p.Panel.Title, q.RefID, s.Labels["node"])
				}
			}
		}
	}
	return c.problems
}

// hostAlerts are alerts on what the simulated nodes share: this machine's
// kernel. MLXLoadHigh reads its load average against its cores, which on
// this shared machine (other builds and tests beside the fleet) is true
// of every node at once, healthy or not.
var hostAlerts = []string{"MLXLoadHigh"}

// checkSimAlerts: the incidents' alerts fire, and no alert (pending or
// firing) names a healthy node, hostAlerts aside.
func checkSimAlerts(alerts []vmalertAlert, fleet []simNode, inc map[string]simNode) []string {
	c := &simCheck{}
	need := map[string]bool{"MLXNodeSilent/" + inc[incDark].node: false, "MLXAgentCrashLoop/" + inc[incCrash].node: false}
	healthy := healthyNodes(fleet)
	for _, a := range alerts {
		if a.State == "firing" {
			if _, ok := need[a.Name+"/"+a.Labels["node"]]; ok {
				need[a.Name+"/"+a.Labels["node"]] = true
			}
		}
		if slices.Contains(healthy, a.Labels["node"]) && !slices.Contains(hostAlerts, a.Name) {
			c.fail("vmalert: %s raised for a healthy node", a)
		}
	}
	for k, fired := range need {
		if !fired {
			c.fail("vmalert: %s not firing", k)
		}
	}
	return c.problems
}

// healthyNodes are the nodes with no incident and on the current version.
func healthyNodes(fleet []simNode) []string {
	var out []string
	for _, h := range fleet {
		if h.incident == "" && !h.old {
			out = append(out, h.node)
		}
	}
	return out
}

// firstWord and lastWord split a stat's legend "node role".
func firstWord(s string) string { f, _, _ := strings.Cut(s, " "); return f }

func lastWord(s string) string { return s[strings.LastIndexByte(s, ' ')+1:] }
