package main

import (
	"context"
	"testing"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
)

// Against the simulated engine: each scenario that names a tool gets one
// valid call, then an answer (see cmd/mlxbench/bench/agent for what the sim
// can drive); every loop has its own session id, the same on each of its
// turns.
func TestAgenticAgainstSim(t *testing.T) {
	sim := startSim(t, mlxsim.Options{PrefillTPS: 1e5, DecodeTPS: 2000})
	dir := t.TempDir()
	res := runCmd(t, context.Background(), append([]string{"agentic", "--base-url", sim.URL, "--runs", "2", "--agents", "2", "--html"}, quiet(dir)...)...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	_, r, samples := onlyReport(t, dir)
	if r.Agentic == nil || len(r.Agentic.Loops) != 12 || len(r.Agentic.Scenarios) != 3 || len(r.Levels) != 3 {
		t.Fatalf("%+v", r.Agentic)
	}
	want := map[string][2]float64{"calculator": {2, 1}, "tri_tool": {2, 1}, "planner": {1, 0}}
	for _, s := range r.Agentic.Scenarios {
		w := want[s.Scenario]
		if s.Loops != 4 || s.Completed != 4 || s.Turns.Mean != w[0] || s.ToolCalls.Mean != w[1] || s.ValidityRate != 1 {
			t.Errorf("%s: %+v", s.Scenario, s)
		}
	}
	turns := map[string]int{}
	for _, smp := range samples {
		turns[smp.Loop]++
	}
	sessions := map[string]int{}
	for _, h := range sim.completionHeaders() {
		sessions[h.Get("X-Session-Id")]++
	}
	if len(sessions) != 12 || len(turns) != 12 || len(samples) != 20 {
		t.Errorf("%d sessions %v, %d loops, %d turns", len(sessions), sessions, len(turns), len(samples))
	}
	for id, n := range sessions {
		if id == "" || n < 1 || n > 2 {
			t.Errorf("session %q: %d requests", id, n)
		}
	}
}
