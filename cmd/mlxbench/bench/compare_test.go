package bench

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	a := &Report{Kind: "load", Levels: []Level{
		{Name: "c=1", Summary: Summary{TTFT: Pcts{P50: 800, P99: 900}, TPS: Pcts{P50: 65}, ReqPerS: 0.5, ErrorRate: 0}},
		{Name: "c=2", Summary: Summary{TTFT: Pcts{P50: 800}}},
	}, Overhead: []OverheadRow{{Metric: "ttft p50", Added: 2}}}
	b := &Report{Kind: "load", Levels: []Level{
		{Name: "c=1", Summary: Summary{TTFT: Pcts{P50: 400, P99: 990}, TPS: Pcts{P50: 130}, ReqPerS: 0.5, ErrorRate: 0.1}},
		{Name: "c=4"},
	}, Overhead: []OverheadRow{{Metric: "ttft p50", Added: 1}}}
	rows, notes := Compare(a, b)
	get := func(level, metric string) CompareRow {
		for _, r := range rows {
			if r.Level == level && r.Metric == metric {
				return r
			}
		}
		t.Fatalf("no row %s %s", level, metric)
		return CompareRow{}
	}
	for _, tc := range []struct {
		level, metric string
		delta, pct    float64
		verdict       string
	}{
		{"c=1", "ttft p50", -400, -50, "better"},
		{"c=1", "ttft p99", 90, 10, "worse"},
		{"c=1", "tok/s p50", 65, 100, "better"},
		{"c=1", "req/s", 0, 0, ""},
		{"c=1", "error rate", 10, math.NaN(), ""},
		{"overhead", "added ttft p50", -1, -50, "better"},
	} {
		r := get(tc.level, tc.metric)
		if math.Abs(r.Delta-tc.delta) > 1e-9 || (math.IsNaN(tc.pct) != math.IsNaN(r.DeltaPct)) || (!math.IsNaN(tc.pct) && math.Abs(r.DeltaPct-tc.pct) > 1e-9) {
			t.Errorf("%s %s: Δ %v Δ%% %v", tc.level, tc.metric, r.Delta, r.DeltaPct)
		}
		if v := r.Verdict(5); v != tc.verdict {
			t.Errorf("%s %s: verdict %q", tc.level, tc.metric, v)
		}
	}
	if strings.Join(notes, ";") != "level c=2 only in A;level c=4 only in B" {
		t.Errorf("notes %q", notes)
	}
	var buf bytes.Buffer
	WriteCompare(&buf, "a.json", "b.json", rows, notes)
	out := buf.String()
	if !strings.Contains(out, "-400.0 ms") || !strings.Contains(out, "-50.0%") || !strings.Contains(out, "note: level c=4 only in B") {
		t.Errorf("table:\n%s", out)
	}
}
