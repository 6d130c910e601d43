package promqlnames

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want []string
	}{
		{`up{job="mlx-hw"} == 0`, []string{"up"}},
		{`histogram_quantile(0.95, sum by (le, model) (rate(mlx_ttft_seconds_bucket{job="mlx-proxy"}[5m]))) > 5`, []string{"mlx_ttft_seconds_bucket"}},
		{`sum(rate(b[5m])) / sum(rate(a[5m])) or vector(0)`, []string{"a", "b"}},
		{`{__name__="mlx_up"}`, []string{"mlx_up"}},
		{`mlx:slo_availability_error_ratio:rate1h > (14.4 * 0.005)`, []string{"mlx:slo_availability_error_ratio:rate1h"}},
		{`label_replace(rate(otelcol_exporter_send_failed_spans[5m]), "signal", "traces", "", "") or x offset 2m`, []string{"otelcol_exporter_send_failed_spans", "x"}},
		{`max_over_time(mlx_in_flight[1h:1m])`, []string{"mlx_in_flight"}},
		{`vector(1)`, []string{}},
	} {
		got, err := Names(tc.expr)
		if err != nil {
			t.Errorf("Names(%q): %v", tc.expr, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Names(%q) = %q, want %q", tc.expr, got, tc.want)
		}
	}
}

func TestNamesRejects(t *testing.T) {
	for _, expr := range []string{
		`sum(rate(x[5m]`,                     // does not parse
		`{job="mlx-hw"}`,                     // no name
		`{__name__=~"mlx_hw_.*"}`,            // name by regexp
		`rate({__name__!="a", job="b"}[5m])`, // name by negation only
	} {
		if got, err := Names(expr); err == nil {
			t.Errorf("Names(%q) = %q, want an error", expr, got)
		}
	}
}

func TestExpandGrafana(t *testing.T) {
	in := `sum(rate(mlx_requests_total{model=~"$model", node=~"${node}"}[$__rate_interval])) by (model) / ${__range_s}`
	got := ExpandGrafana(in, map[string]string{"node": "rank0"})
	want := `sum(rate(mlx_requests_total{model=~".*", node=~"rank0"}[1m])) by (model) / 3600`
	if got != want {
		t.Fatalf("ExpandGrafana:\n got %s\nwant %s", got, want)
	}
	if _, err := Names(got); err != nil {
		t.Fatal(err)
	}
}

func TestVariableExpr(t *testing.T) {
	for q, want := range map[string]string{
		`label_values(mlx_requests_total{job="mlx-proxy"}, model)`:    `mlx_requests_total{job="mlx-proxy"}`,
		`label_values(mlx_hw_up, node)`:                               `mlx_hw_up`,
		`query_result(topk(5, sum by (tool) (mlx_tool_calls_total)))`: `topk(5, sum by (tool) (mlx_tool_calls_total))`,
	} {
		got, ok := VariableExpr(q)
		if !ok || got != want {
			t.Errorf("VariableExpr(%q) = %q, %v; want %q", q, got, ok, want)
		}
	}
	for _, q := range []string{`label_names()`, `label_values(model)`, `metrics(mlx_.*)`} {
		if got, ok := VariableExpr(q); ok {
			t.Errorf("VariableExpr(%q) = %q, want no expression", q, got)
		}
	}
}

func TestLoadRules(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("a.yml", `groups:
  - name: g
    interval: 30s
    rules:
      - record: r:x:rate5m
        expr: sum(rate(x[5m]))
      - alert: A
        expr: r:x:rate5m > 1
        for: 5m
        labels: {severity: warning}
        annotations: {summary: s}
`)
	rules, err := LoadRules(filepath.Join(dir, "*.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 2 || rules[1].Alert != "A" || rules[1].For != "5m" || rules[1].Labels["severity"] != "warning" || rules[0].Interval != "30s" {
		t.Fatalf("LoadRules = %+v", rules)
	}
	if got := RecordedNames(rules); !reflect.DeepEqual(got, []string{"r:x:rate5m"}) {
		t.Fatalf("RecordedNames = %q", got)
	}

	bad := write("b.yaml", "groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: up\n        annotation: {summary: s}\n")
	if _, err := LoadRules(bad); err == nil || !strings.Contains(err.Error(), "annotation") {
		t.Fatalf("LoadRules accepted an unknown key: %v", err)
	}
	if _, err := LoadRules(filepath.Join(dir, "none-*.yml")); err == nil {
		t.Fatal("LoadRules accepted a pattern matching nothing")
	}
}

func TestLoadDashboardQueries(t *testing.T) {
	dir := t.TempDir()
	dash := `{
  "uid": "d1", "title": "D1",
  "annotations": {"list": [{"name": "Alerts", "expr": "ALERTS{alertstate=\"firing\"}"}]},
  "templating": {"list": [
    {"name": "model", "type": "query", "query": {"query": "label_values(mlx_requests_total, model)", "refId": "V"}},
    {"name": "node", "type": "query", "query": "label_values(mlx_hw_up, node)"},
    {"name": "interval", "type": "interval", "query": "1m,5m"}
  ]},
  "panels": [
    {"id": 1, "type": "row", "title": "R", "collapsed": true, "panels": [
      {"id": 2, "type": "timeseries", "title": "P2", "targets": [{"refId": "A", "expr": "sum(rate(mlx_requests_total{model=~\"$model\"}[$__rate_interval]))"}]}
    ]},
    {"id": 3, "type": "text", "title": "T"}
  ]
}`
	if err := os.WriteFile(filepath.Join(dir, "d1.json"), []byte(dash), 0o644); err != nil {
		t.Fatal(err)
	}
	qs, err := LoadDashboardQueries(dir)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, q := range qs {
		keys = append(keys, q.Key())
		e, ok := q.MetricsQL(nil)
		if !ok {
			t.Errorf("%s: no expression", q.Key())
			continue
		}
		if _, err := Names(e); err != nil {
			t.Errorf("%s: %v", q.Key(), err)
		}
	}
	want := []string{"d1/P2/A", "d1/annotation:Alerts", "d1/variable:model", "d1/variable:node"}
	if !reflect.DeepEqual(keys, want) {
		t.Fatalf("keys = %q, want %q", keys, want)
	}
}

func TestMayBeAbsentAreKnown(t *testing.T) {
	known, err := KnownNames("../..")
	if err != nil {
		t.Fatal(err)
	}
	for n, why := range MayBeAbsent {
		if !known[n] {
			t.Errorf("MayBeAbsent lists %s, which is no known series", n)
		}
		if !strings.Contains(why, ": ") {
			t.Errorf("MayBeAbsent[%s] = %q: want `<kind>: <why>`", n, why)
		}
	}
}

// Every component's metadata.yaml is read, the proxy's included; only
// histograms get the _bucket, _sum and _count series.
func TestDocumentedNamesReadTheMetadata(t *testing.T) {
	set := documentedSet(t)
	for _, n := range []string{"mlx_hw_up", "mlx_kv_agent_up", "mlx_server_up", "mlx_log_tailer_up", "mlx_judge_score_bucket",
		"mlx_live_records_dropped_total", "mlx_hallucination_risk_histogram_bucket", "mlx_ttft_seconds_count"} {
		if !set[n] {
			t.Errorf("%s is not documented", n)
		}
	}
	if set["mlx_up_bucket"] {
		t.Error("a gauge has no _bucket series")
	}
}

// The original's series are an interface its users' dashboards and rules
// read: each is in some component's metadata.yaml, so it is emitted and
// checked against a real scrape. A component that renamed or dropped one
// fails here.
func TestEveryOriginalSeriesIsDocumented(t *testing.T) {
	set := documentedSet(t)
	for _, n := range OriginalSeries {
		if !set[n] {
			t.Errorf("%s, a series of the original, is in no metadata.yaml", n)
		}
	}
}

// documentedSet is DocumentedNames of this repository, as a set.
func documentedSet(t *testing.T) map[string]bool {
	t.Helper()
	names, err := DocumentedNames("../..")
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	for _, n := range names {
		set[n] = true
	}
	return set
}
