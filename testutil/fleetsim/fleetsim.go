// Package fleetsim writes a synthetic fleet's history of the fleet contract
// (docs/fleet.md) as VictoriaMetrics' /api/v1/import lines: five nodes,
// each role's series as the shipped scrape config stores them (the
// exporter's labels, as a scrape of the built collector shows them, plus
// job and instance), one sample every 15 s, with the scripted incidents of
// the fleet views:
//
//	node01, node02  healthy (node01 runs the judge as well)
//	node03          dark: every series stops DarkAgo before the end
//	node04          its kvcache role down since DownAgo; its engine wedged
//	                (supervisor up, mlx_server_ready 0) since WedgedAgo;
//	                the node rebooted RebootAgo before the end
//	node05          its collector crash-looping: every role restarts (and
//	                crashes) every CrashEvery over the last half hour,
//	                on an older version (OldVersion)
//
// The data is synthetic: values are scripted, not measured, and no
// collector, network or push path is involved.
package fleetsim

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// The scripted incidents' times, before the end of the history.
const (
	History    = 75 * time.Minute // longer than the 1-hour windows: a counter has a sample before them
	Step       = 15 * time.Second
	DarkAgo    = 12 * time.Minute
	DownAgo    = 15 * time.Minute
	WedgedAgo  = 8 * time.Minute
	RebootAgo  = 3 * time.Hour
	CrashEvery = 3 * time.Minute
	CrashSince = 31 * time.Minute // the last restart a minute before the end

	Version    = "0.1.0"
	OldVersion = "0.0.9"
)

// Nodes are the fleet's nodes, in order.
var Nodes = []string{"node01", "node02", "node03", "node04", "node05"}

// Role is one role of a node's collector: its name, scrape job and port.
type Role struct{ Name, Job, Port string }

// Roles every node runs (docs/fleet.md: the role's port, and the job of
// config/scrape/scrape.yml that scrapes it); node01 runs Judge as well.
var (
	Roles = []Role{
		{"proxy", "mlx-proxy", "8080"},
		{"hardware", "mlx-hw", "9102"},
		{"kvcache", "mlx-kv", "9104"},
		{"supervisor", "mlx-supervisor", "9105"},
		{"logpipeline", "mlx-logtailer", "9106"},
	}
	Judge = Role{"judge", "mlx-supervisor", "9105"}
)

// Models each node serves, and which roles name the model (the contract:
// the roles that serve or read the engine's).
var (
	Models = map[string]string{
		"node01": "mlx-community/Qwen3-4B-4bit", "node02": "mlx-community/Llama-3.2-3B-Instruct-4bit",
		"node03": "mlx-community/gemma-3-4b-it-4bit", "node04": "mlx-community/Qwen3-4B-4bit",
		"node05": "mlx-community/Llama-3.2-3B-Instruct-4bit",
	}
	withModel = map[string]bool{"proxy": true, "kvcache": true, "supervisor": true}
)

// RolesOf is the roles node runs.
func RolesOf(node string) []Role {
	if node == "node01" {
		return append(append([]Role{}, Roles...), Judge)
	}
	return Roles
}

// Line is one series of /api/v1/import.
type Line struct {
	Metric     map[string]string `json:"metric"`
	Values     []float64         `json:"values"`
	Timestamps []int64           `json:"timestamps"`
}

// Write writes the history ending at end to w, one JSON line per series;
// without incidents, every node is healthy (node04 not rebooted, node05 on
// the current version and not restarting, all roles up to the end).
func Write(w io.Writer, end time.Time, incidents bool) error {
	enc := json.NewEncoder(w)
	lines := Series(end)
	if !incidents {
		lines = Healthy(end)
	}
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	return nil
}

// Series is the whole history ending at end, with the incidents.
func Series(end time.Time) []Line { return history(end, true) }

// Healthy is the same fleet's history without an incident.
func Healthy(end time.Time) []Line { return history(end, false) }

func history(end time.Time, incidents bool) []Line {
	end = end.Truncate(Step)
	start := end.Add(-History)
	var out []Line
	for _, node := range Nodes {
		for _, r := range RolesOf(node) {
			out = append(out, roleSeries(node, r, start, end, incidents)...)
		}
	}
	return out
}

// at is the value of a series at t, and whether it has a sample then.
type at func(t time.Time) (float64, bool)

func roleSeries(node string, r Role, start, end time.Time, incidents bool) []Line {
	// is says whether node is n and plays its incident.
	is := func(n string) bool { return incidents && node == n }
	base := map[string]string{"job": r.Job, "instance": node + ".local:" + r.Port, "node": node}
	with := func(name string, kv ...string) map[string]string {
		m := map[string]string{"__name__": name}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	live := func(t time.Time) bool { return !is("node03") || t.Before(end.Add(-DarkAgo)) }
	since := func(ago time.Duration, t time.Time) bool { return !t.Before(end.Add(-ago)) }
	// restarts is how many restarts of node05's crash loop happened by t.
	restarts := func(t time.Time) float64 {
		if !is("node05") || !since(CrashSince, t) {
			return 0
		}
		return float64(t.Sub(end.Add(-CrashSince)) / CrashEvery)
	}
	const earlierRestarts = 2 // before the history: clean upgrades
	version, model, path := Version, "", ""
	if is("node05") {
		version = OldVersion
	}
	if withModel[r.Name] {
		model = Models[node]
		path = "/Users/mlx/.cache/huggingface/hub/models--" + hubName(model)
	}
	agentStart := end.Add(-72 * time.Hour)
	series := []struct {
		labels map[string]string
		value  at
	}{
		{with("mlx_agent_up", "role", r.Name), func(t time.Time) (float64, bool) {
			if is("node04") && r.Name == "kvcache" && since(DownAgo, t) {
				return 0, true
			}
			return 1, true
		}},
		{with("mlx_agent_info", "role", r.Name, "version", version, "commit", commitOf(version), "model", model, "model_path", path),
			func(time.Time) (float64, bool) { return 1, true }},
		{with("mlx_agent_uptime_seconds", "role", r.Name), func(t time.Time) (float64, bool) {
			if n := restarts(t); n > 0 {
				last := end.Add(-CrashSince).Add(time.Duration(n) * CrashEvery)
				return t.Sub(last).Seconds(), true
			}
			return t.Sub(agentStart).Seconds(), true
		}},
		{with("mlx_agent_restarts_total", "role", r.Name), func(t time.Time) (float64, bool) { return earlierRestarts + restarts(t), true }},
		{with("mlx_agent_crashes_total", "role", r.Name), func(t time.Time) (float64, bool) { return restarts(t), true }},
	}
	add := func(labels map[string]string, v at) {
		series = append(series, struct {
			labels map[string]string
			value  at
		}{labels, v})
	}
	one := func(time.Time) (float64, bool) { return 1, true }
	switch r.Name {
	case "proxy":
		add(with("mlx_up"), one)
	case "hardware":
		for _, s := range []string{"load", "cpu_count", "disk", "meminfo", "uptime"} {
			add(with("mlx_hw_source_up", "source", s), one)
		}
		boot := end.Add(-5 * 24 * time.Hour)
		if is("node04") {
			boot = end.Add(-RebootAgo)
		}
		add(with("mlx_hw_uptime_seconds"), func(t time.Time) (float64, bool) { return t.Sub(boot).Truncate(time.Second).Seconds(), true })
	case "supervisor":
		add(with("mlx_server_ready"), func(t time.Time) (float64, bool) {
			if is("node04") && since(WedgedAgo, t) {
				return 0, true
			}
			return 1, true
		})
	case "logpipeline":
		add(with("mlx_log_tailer_dropped_total", "reason", "rate_limit", "sink", ""), func(t time.Time) (float64, bool) {
			return float64(t.Sub(start) / time.Minute), true
		})
	case "judge":
		add(with("mlx_judge_passes_total", "result", "ok"), func(t time.Time) (float64, bool) {
			return float64(t.Sub(start) / time.Minute), true
		})
	}
	var out []Line
	for _, s := range series {
		l := Line{Metric: s.labels}
		for t := start; !t.After(end); t = t.Add(Step) {
			if !live(t) {
				continue
			}
			if v, ok := s.value(t); ok {
				l.Values = append(l.Values, v)
				l.Timestamps = append(l.Timestamps, t.UnixMilli())
			}
		}
		out = append(out, l)
	}
	return out
}

// hubName is the hub cache's folder name of a repo id (models--org--name).
func hubName(model string) string { return strings.ReplaceAll(model, "/", "--") }

// commitOf is a made-up commit per version: the build the version was cut
// from.
func commitOf(version string) string {
	if version == OldVersion {
		return "5f2c9a1d03be"
	}
	return fmt.Sprintf("%012x", 0x0d18517424fa)
}
