package bench

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// Overhead is what the proxy adds, statistic by statistic: through the
// proxy minus direct. Both come from the same interleaved run, so the
// engine's own variation is in both.
func Overhead(direct, proxy Summary) []OverheadRow {
	var rows []OverheadRow
	add := func(name string, d, p Pcts, v func(Pcts) float64) {
		if d.N == 0 || p.N == 0 {
			return
		}
		rows = append(rows, OverheadRow{Metric: name, Direct: v(d), Proxy: v(p), Added: v(p) - v(d)})
	}
	p50 := func(p Pcts) float64 { return p.P50 }
	p99 := func(p Pcts) float64 { return p.P99 }
	add("ttft p50", direct.TTFT, proxy.TTFT, p50)
	add("ttft p99", direct.TTFT, proxy.TTFT, p99)
	add("itl p50", direct.ITL, proxy.ITL, p50)
	add("itl p99", direct.ITL, proxy.ITL, p99)
	add("e2e p50", direct.E2E, proxy.E2E, p50)
	add("e2e p99", direct.E2E, proxy.E2E, p99)
	return rows
}

// WriteOverhead prints the overhead rows.
func WriteOverhead(w io.Writer, rows []OverheadRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "statistic\tdirect\tproxy\tadded by the proxy\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%+.2f ms\t\n", r.Metric, FormatMs(r.Direct), FormatMs(r.Proxy), r.Added)
	}
	_ = tw.Flush()
}
