package main

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlx-otelcol/mlx-otelcol/internal/mlxsim"
)

// compare on two real reports: the same load against an engine that
// decodes at 40 tok/s, then at 80, with the same prefill. tok/s doubles,
// the inter-token time halves (25 → 12.5 ms), and TTFT, which holds one
// token time, drops by 12.5 ms.
func TestCompareTwoRealReports(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for _, decode := range []float64{40, 80} {
		sim := startSim(t, mlxsim.Options{PrefillTPS: 400, DecodeTPS: decode})
		sub := filepath.Join(dir, filepathSafe(decode))
		res := runCmd(t, context.Background(), append([]string{"load", "--base-url", sim.URL, "--sweep", "2", "--max-requests", "4", "--settle", "0", "--max-tokens", "24"}, quiet(sub)...)...)
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
	pct := map[string]float64{}
	for _, r := range out.Rows {
		if r.Level != "c=2" {
			t.Errorf("row of level %s", r.Level)
		}
		got[r.Metric] = r.Delta
		if r.DeltaPct != nil {
			pct[r.Metric] = *r.DeltaPct
		}
	}
	t.Logf("Δ tok/s %+.1f%%, Δ itl p50 %+.2f ms, Δ ttft p50 %+.2f ms", pct["tok/s p50"], got["itl p50"], got["ttft p50"])
	if p := pct["tok/s p50"]; p < 80 || p > 110 {
		t.Errorf("tok/s p50 changed by %+.1f%%, want about +100%%", p)
	}
	if d := got["itl p50"]; math.Abs(d+12.5) > 2.5 {
		t.Errorf("itl p50 changed by %+.2f ms, want about -12.5", d)
	}
	if d := got["ttft p50"]; math.Abs(d+12.5) > 6 {
		t.Errorf("ttft p50 changed by %+.2f ms, want about -12.5", d)
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
