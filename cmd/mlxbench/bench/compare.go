package bench

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// CompareRow is one statistic of one level in two reports.
type CompareRow struct {
	Level  string  `json:"level"`
	Metric string  `json:"metric"`
	Unit   string  `json:"unit"`
	A      float64 `json:"a"`
	B      float64 `json:"b"`
	Delta  float64 `json:"delta"`
	// DeltaPct is (B-A)/A in percent; NaN when A is 0.
	DeltaPct float64 `json:"delta_pct"`
	// LowerIsBetter says which way is an improvement (latencies, errors).
	LowerIsBetter bool `json:"lower_is_better"`
}

type levelMetric struct {
	name  string
	unit  string
	lower bool
	get   func(Summary) float64
}

var levelMetrics = []levelMetric{
	{"ttft p50", "ms", true, func(s Summary) float64 { return s.TTFT.P50 }},
	{"ttft p99", "ms", true, func(s Summary) float64 { return s.TTFT.P99 }},
	{"itl p50", "ms", true, func(s Summary) float64 { return s.ITL.P50 }},
	{"itl p99", "ms", true, func(s Summary) float64 { return s.ITL.P99 }},
	{"e2e p50", "ms", true, func(s Summary) float64 { return s.E2E.P50 }},
	{"e2e p99", "ms", true, func(s Summary) float64 { return s.E2E.P99 }},
	{"tok/s p50", "tok/s", false, func(s Summary) float64 { return s.TPS.P50 }},
	{"req/s", "req/s", false, func(s Summary) float64 { return s.ReqPerS }},
	{"output tok/s", "tok/s", false, func(s Summary) float64 { return s.OutTokPerS }},
	{"error rate", "%", true, func(s Summary) float64 { return 100 * s.ErrorRate }},
}

type scenarioMetric struct {
	name  string
	unit  string
	lower bool
	get   func(ScenarioSummary) float64
}

var scenarioMetrics = []scenarioMetric{
	{"completion rate", "%", false, func(s ScenarioSummary) float64 { return 100 * s.CompletionRate }},
	{"turns mean", "", true, func(s ScenarioSummary) float64 { return s.Turns.Mean }},
	{"tool calls mean", "", false, func(s ScenarioSummary) float64 { return s.ToolCalls.Mean }},
	{"tool-call validity", "%", false, func(s ScenarioSummary) float64 { return 100 * s.ValidityRate }},
	{"wall p50", "ms", true, func(s ScenarioSummary) float64 { return s.Wall.P50 }},
}

// Compare lines up the levels (by name), agentic scenarios and overhead
// rows that two reports share. Notes say what could not be compared.
func Compare(a, b *Report) (rows []CompareRow, notes []string) {
	if a.Kind != b.Kind {
		notes = append(notes, fmt.Sprintf("the reports are of different kinds (%s, %s): only levels with the same name are compared", a.Kind, b.Kind))
	}
	bl := map[string]Level{}
	for _, l := range b.Levels {
		bl[l.Name] = l
	}
	seen := map[string]bool{}
	for _, la := range a.Levels {
		seen[la.Name] = true
		lb, ok := bl[la.Name]
		if !ok {
			notes = append(notes, fmt.Sprintf("level %s only in A", la.Name))
			continue
		}
		for _, m := range levelMetrics {
			rows = append(rows, row(la.Name, m.name, m.unit, m.lower, m.get(la.Summary), m.get(lb.Summary)))
		}
	}
	for _, l := range b.Levels {
		if !seen[l.Name] {
			notes = append(notes, fmt.Sprintf("level %s only in B", l.Name))
		}
	}
	if a.Agentic != nil && b.Agentic != nil {
		bs := map[string]ScenarioSummary{}
		for _, s := range b.Agentic.Scenarios {
			bs[s.Scenario] = s
		}
		for _, sa := range a.Agentic.Scenarios {
			sb, ok := bs[sa.Scenario]
			if !ok {
				continue
			}
			for _, m := range scenarioMetrics {
				rows = append(rows, row(sa.Scenario, m.name, m.unit, m.lower, m.get(sa), m.get(sb)))
			}
		}
	}
	bo := map[string]OverheadRow{}
	for _, o := range b.Overhead {
		bo[o.Metric] = o
	}
	for _, oa := range a.Overhead {
		if ob, ok := bo[oa.Metric]; ok {
			rows = append(rows, row("overhead", "added "+oa.Metric, "ms", true, oa.Added, ob.Added))
		}
	}
	return rows, notes
}

func row(level, metric, unit string, lower bool, a, b float64) CompareRow {
	r := CompareRow{Level: level, Metric: metric, Unit: unit, A: a, B: b, Delta: b - a, LowerIsBetter: lower}
	r.DeltaPct = math.NaN()
	if a != 0 {
		r.DeltaPct = 100 * (b - a) / math.Abs(a)
	}
	return r
}

// Verdict is "better", "worse" or "" (no change, or not comparable) for a
// row, with changes under threshold percent taken as no change.
func (r CompareRow) Verdict(threshold float64) string {
	if math.IsNaN(r.DeltaPct) || math.Abs(r.DeltaPct) < threshold {
		return ""
	}
	if (r.Delta < 0) == r.LowerIsBetter {
		return "better"
	}
	return "worse"
}

// WriteCompare prints the rows as one table.
func WriteCompare(w io.Writer, aName, bName string, rows []CompareRow, notes []string) {
	fmt.Fprintf(w, "A: %s\nB: %s\n\n", aName, bName)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "level\tmetric\tA\tB\tΔ\tΔ%\t\t")
	last := ""
	for _, r := range rows {
		level := r.Level
		if level == last {
			level = ""
		}
		last = r.Level
		pct := "-"
		if !math.IsNaN(r.DeltaPct) {
			pct = fmt.Sprintf("%+.1f%%", r.DeltaPct)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", level, r.Metric, num(r.A, r.Unit), num(r.B, r.Unit), signed(r.Delta, r.Unit), pct, r.Verdict(5))
	}
	_ = tw.Flush()
	for _, n := range notes {
		fmt.Fprintln(w, "note:", n)
	}
}

func num(v float64, unit string) string {
	if math.IsNaN(v) {
		return "-"
	}
	s := fmt.Sprintf("%.1f", v)
	if math.Abs(v) >= 1000 {
		s = fmt.Sprintf("%.0f", v)
	}
	if unit == "" {
		return s
	}
	return strings.TrimSpace(s + " " + unit)
}

func signed(v float64, unit string) string {
	s := num(v, unit)
	if v >= 0 && !math.IsNaN(v) {
		s = "+" + s
	}
	return s
}
