package main

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
)

func TestProfileMatrix(t *testing.T) {
	sim := startSim(t, mlxsim.Options{PrefillTPS: 20000, DecodeTPS: 500})
	dir := t.TempDir()
	res := runCmd(t, context.Background(), append([]string{"profile", "--base-url", sim.URL, "--iters", "2", "--prompts", "short,long", "--max-tokens", "16", "--html"}, quiet(dir)...)...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	_, r, samples := onlyReport(t, dir)
	if r.Kind != "profile" || len(r.Levels) != 4 || len(samples) != 8 {
		t.Fatalf("%d levels, %d samples", len(r.Levels), len(samples))
	}
	names := []string{"short/stream-on", "short/stream-off", "long/stream-on", "long/stream-off"}
	for i, l := range r.Levels {
		s := l.Summary
		if l.Name != names[i] || s.OK != 2 || s.TPS.N != 2 {
			t.Errorf("cell %d: %s %+v", i, l.Name, s)
		}
		if l.Stream != (s.TTFT.N == 2) {
			t.Errorf("%s: TTFT measured %d times", l.Name, s.TTFT.N)
		}
	}
	// The long prompt has more tokens, so a longer prefill.
	if !(r.Levels[2].Summary.PromptTokens.Mean > 5*r.Levels[0].Summary.PromptTokens.Mean) || math.IsNaN(r.Levels[2].Summary.TTFT.P50) {
		t.Errorf("prompt tokens %v / %v", r.Levels[2].Summary.PromptTokens.Mean, r.Levels[0].Summary.PromptTokens.Mean)
	}
	if !strings.Contains(res.stdout, "prompt  stream") && !strings.Contains(res.stdout, "stream") {
		t.Errorf("%s", res.stdout)
	}
}
