package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mlxbench/bench"
	"github.com/mlx-otelcol/mlx-otelcol/cmd/mlxbench/bench/htmlreport"
	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
)

func TestLoadSweepReport(t *testing.T) {
	sim := startSim(t, mlxsim.Options{PrefillTPS: 4000, DecodeTPS: 400})
	metrics := metricsServer(t)
	dir := t.TempDir()
	res := runCmd(t, context.Background(), "load", "--base-url", sim.URL, "--sweep", "1,2", "--duration", "800ms", "--settle", "200ms",
		"--max-tokens", "24", "--out-dir", dir, "--html", "--progress", "plain",
		"--snapshot-interval", "200ms", "--proxy-metrics", metrics+"/metrics", "--hw-metrics", metrics+"/hw", "--kv-metrics", "", "--supervisor-metrics", "",
		"--version-url", metrics+"/telemetry", "--label", "sweep test")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	// A plain line per level off a terminal, then the table.
	if strings.Count(res.stderr, "\n") != 3 || !strings.Contains(res.stderr, "c=2 ") || strings.Contains(res.stderr, "\r") {
		t.Errorf("progress:\n%s", res.stderr)
	}
	if !strings.Contains(res.stdout, "ttft p50") || !strings.Contains(res.stdout, "report: ") {
		t.Errorf("stdout:\n%s", res.stdout)
	}
	path, r, samples := onlyReport(t, dir)
	if !strings.Contains(path, "sweep_test-") {
		t.Errorf("path %s", path)
	}
	if r.Kind != "load" || len(r.Levels) != 2 || r.Levels[1].Concurrency != 2 || r.Interrupted {
		t.Fatalf("report %+v", r)
	}
	if r.Flags["sweep"] != "1,2" || r.Flags["duration"] != "800ms" || r.Args[0] != "load" {
		t.Errorf("flags %v args %v", r.Flags, r.Args)
	}
	var models struct{ Data []struct{ ID string } }
	if err := json.Unmarshal(r.Target.Models, &models); err != nil || len(models.Data) != 1 || models.Data[0].ID != simModel || r.Target.Model != simModel {
		t.Errorf("models %s (%v), model %s", r.Target.Models, err, r.Target.Model)
	}
	if r.Versions.Distribution != "0.1.0" || r.Versions.Mlxbench == "" || !strings.HasPrefix(r.Target.Fingerprint, "0.31.3-") {
		t.Errorf("versions %+v target %+v", r.Versions, r.Target)
	}
	total := 0
	for _, l := range r.Levels {
		s := l.Summary
		total += s.Requests + s.Warmup
		if s.Requests == 0 || s.OK != s.Requests || s.TTFT.N != s.OK || s.TPS.P50 <= 0 || s.OutTokPerS <= 0 || l.WindowUS[1] <= l.WindowUS[0] {
			t.Errorf("level %s: %+v", l.Name, s)
		}
	}
	if len(samples) != total || r.Samples.Count != total {
		t.Errorf("%d samples, levels count %d", len(samples), total)
	}
	// Snapshots: the proxy's series, the hardware port's too, scraped at
	// the start, on the interval and at the end.
	sources := map[string]int{}
	for _, s := range r.Snapshots {
		if s.Err == "" && s.Series[`mlx_in_flight{model="m"}`] == 2 {
			sources[s.Source]++
		}
	}
	if sources["proxy"] < 3 || sources["hw"] < 3 {
		t.Errorf("snapshots %v", sources)
	}
	// Traced, no session on plain load requests.
	for _, h := range sim.completionHeaders() {
		if h.Get("X-Mlx-Trace") != "1" || h.Get("X-Session-Id") != "" {
			t.Fatalf("headers %v", h)
		}
	}
	html, err := os.ReadFile(htmlreport.PathFor(path))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"fig-ttft", "fig-latency", "fig-throughput", "fig-ttft-distribution", "fig-snapshot-mlx_in_flight"} {
		if !strings.Contains(string(html), `id="`+id+`" src="data:image/png;base64,`) {
			t.Errorf("the HTML report has no %s plot", id)
		}
	}
}

func TestNoTrace(t *testing.T) {
	sim := startSim(t, mlxsim.Options{PrefillTPS: 1e6, DecodeTPS: 1e5})
	res := runCmd(t, context.Background(), append([]string{"load", "--base-url", sim.URL, "--sustain", "1", "--max-requests", "2", "--settle", "0", "--no-trace"}, quiet(t.TempDir())...)...)
	if res.code != 0 {
		t.Fatalf("%+v", res)
	}
	hs := sim.completionHeaders()
	if len(hs) != 2 || hs[0].Get("X-Mlx-Trace") != "0" {
		t.Errorf("headers %v", hs)
	}
}

// Ctrl-C stops the run at once, with requests in flight, and still writes
// the partial report: the first level of 30 s ends early, the second never
// starts, and the requests it cut short are cancelled, not errors.
func TestInterruptWritesPartialReport(t *testing.T) {
	const level = 30 * time.Second
	sim := startSim(t, mlxsim.Options{PrefillTPS: 1e4, DecodeTPS: 100})
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // Ctrl-C once both workers' requests reached the engine
		for ctx.Err() == nil && len(sim.completionHeaders()) < 2 {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	start := time.Now()
	res := runCmd(t, ctx, append([]string{"load", "--base-url", sim.URL, "--sweep", "2,4", "--duration", level.String(), "--settle", "0"}, quiet(dir)...)...)
	if took := time.Since(start); took >= level {
		t.Errorf("took %v to stop: the level ran out its %v", took, level)
	}
	if res.code != 130 || !strings.Contains(res.stderr, "interrupted") {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	_, r, samples := onlyReport(t, dir)
	if !r.Interrupted || len(r.Levels) != 1 || len(samples) == 0 {
		t.Fatalf("interrupted %v, %d levels, %d samples", r.Interrupted, len(r.Levels), len(samples))
	}
	cancelled := 0
	for _, s := range samples {
		if s.Cause == bench.CauseCancelled {
			cancelled++
		} else if !s.OK() {
			t.Errorf("sample %+v", s)
		}
	}
	if cancelled == 0 || r.Levels[0].Summary.Errors != nil {
		t.Errorf("%d cancelled, errors %v", cancelled, r.Levels[0].Summary.Errors)
	}
}

func TestLoadFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"load"},
		{"load", "--sweep", "1", "--rate", "2"},
		{"load", "--sweep", "0"},
		{"load", "--rate", "x"},
		{"load", "--sweep", "1", "--duration", "0"},
		{"load", "--sweep", "1", "--prompt", "huge"},
		{"load", "--sweep", "1", "--arrival", "bursty"},
		{"load", "--sweep", "1", "extra"},
		{"bogus"},
	} {
		if res := runCmd(t, context.Background(), args...); res.code != 2 {
			t.Errorf("%v: exit %d", args, res.code)
		}
	}
}

func TestLoadPlan(t *testing.T) {
	p, err := loadPlan("1,2,4", 0, "")
	if err != nil || len(p) != 3 || p[2].name != "c=4" || p[2].workers != 4 {
		t.Errorf("%+v %v", p, err)
	}
	p, _ = loadPlan("", 0, "0.5,2")
	if len(p) != 2 || p[0].name != "rate=0.5/s" || p[1].rate != 2 || p[1].mode != "rate" {
		t.Errorf("%+v", p)
	}
	p, _ = loadPlan("", 8, "")
	if len(p) != 1 || p[0].mode != "sustain" || p[0].workers != 8 {
		t.Errorf("%+v", p)
	}
}
