package main

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
)

// compare on two real reports: the same load against an engine that
// decodes at 20 tok/s, then at 200, with the same prefill. Each row is B
// minus A of the two reports. The sim's timer sleeps only ever run late,
// so its settings bound the figures from below (12 tokens take 600 ms at
// 20 tok/s); a tenfold faster engine shows as a rise in tok/s and a drop
// in the inter-token time, which lateness on a loaded host does not turn
// round.
func TestCompareTwoRealReports(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for _, decode := range []float64{20, 200} {
		sim := startSim(t, mlxsim.Options{PrefillTPS: 400, DecodeTPS: decode})
		sub := filepath.Join(dir, filepathSafe(decode))
		res := runCmd(t, context.Background(), append([]string{"load", "--base-url", sim.URL, "--sweep", "2", "--max-requests", "4", "--settle", "0", "--max-tokens", "12"}, quiet(sub)...)...)
		if res.code != 0 {
			t.Fatalf("exit %d %s", res.code, res.stderr)
		}
		p, _, _ := onlyReport(t, sub)
		paths = append(paths, p)
	}
	res := runCmd(t, context.Background(), "compare", "--json", paths[0], paths[1])
	if res.code != 0 {
		t.Fatalf("exit %d %s", res.code, res.stderr)
	}
	var out struct {
		Rows []struct {
			Level, Metric, Verdict string
			A, B, Delta            float64
			DeltaPct               *float64 `json:"delta_pct"`
		}
	}
	if err := json.Unmarshal([]byte(res.stdout), &out); err != nil {
		t.Fatal(err, res.stdout)
	}
	got := map[string]float64{}
	a, b := map[string]float64{}, map[string]float64{}
	pct := map[string]float64{}
	for _, r := range out.Rows {
		if r.Level != "c=2" {
			t.Errorf("row of level %s", r.Level)
		}
		if math.Abs(r.Delta-(r.B-r.A)) > 1e-9*math.Max(1, math.Abs(r.B)) {
			t.Errorf("%s: delta %v, but B-A is %v", r.Metric, r.Delta, r.B-r.A)
		}
		if r.DeltaPct != nil && r.A != 0 && math.Abs(*r.DeltaPct-100*(r.B-r.A)/r.A) > 1e-6 {
			t.Errorf("%s: delta %v%%, but (B-A)/A is %v%%", r.Metric, *r.DeltaPct, 100*(r.B-r.A)/r.A)
		}
		got[r.Metric], a[r.Metric], b[r.Metric] = r.Delta, r.A, r.B
		if r.DeltaPct != nil {
			pct[r.Metric] = *r.DeltaPct
		}
	}
	t.Logf("tok/s p50 %.1f → %.1f (%+.1f%%), itl p50 %.2f → %.2f ms, ttft p50 %+.2f ms",
		a["tok/s p50"], b["tok/s p50"], pct["tok/s p50"], a["itl p50"], b["itl p50"], got["ttft p50"])
	if a["e2e p50"] < 12*50 || b["e2e p50"] < 12*5 {
		t.Errorf("e2e p50 %.1f and %.1f ms: shorter than 12 tokens take at 20 and 200 tok/s", a["e2e p50"], b["e2e p50"])
	}
	if b["tok/s p50"] <= a["tok/s p50"] || pct["tok/s p50"] <= 0 {
		t.Errorf("tok/s p50 %.1f → %.1f (%+.1f%%): want a rise at a tenfold decode rate", a["tok/s p50"], b["tok/s p50"], pct["tok/s p50"])
	}
	if got["itl p50"] >= 0 {
		t.Errorf("itl p50 changed by %+.2f ms, want a drop at a tenfold decode rate", got["itl p50"])
	}
	if got["error rate"] != 0 {
		t.Errorf("error rate changed by %v", got["error rate"])
	}
	// The table form names both files and marks the direction.
	res = runCmd(t, context.Background(), "compare", paths[0], paths[1])
	if res.code != 0 || !strings.Contains(res.stdout, "tok/s p50") || !strings.Contains(res.stdout, "better") || !strings.Contains(res.stdout, paths[1]) {
		t.Errorf("table:\n%s", res.stdout)
	}
	if res := runCmd(t, context.Background(), "compare", paths[0]); res.code != 2 {
		t.Errorf("one report: exit %d", res.code)
	}
}

func filepathSafe(f float64) string {
	b, _ := json.Marshal(f)
	return "decode-" + string(b)
}
