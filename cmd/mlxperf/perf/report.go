package perf

import (
	"fmt"
	"io"
	"text/tabwriter"
)

var pathOrder = []string{PathDirect, PathNginx, PathProxy, PathProxyNoLP}

// WriteProxyTable prints, per cell and path: requests per second, latency
// p50 and p99, and the throughput and p99 as multiples of nginx's.
func WriteProxyTable(w io.Writer, t ProxyTable) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "load\tpath\trps\tp50 ms\tp99 ms\trps / nginx\tp99 / nginx\tfailed\tcollector RSS\t")
	for _, cell := range Cells {
		ng := t[PathNginx][cell]
		for _, name := range pathOrder {
			r, ok := t[name][cell]
			if !ok {
				continue
			}
			rss := ""
			if r.RSSKiB > 0 {
				rss = mib(r.RSSKiB)
			}
			fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.2f\t%.2f\t%s\t%s\t%d\t%s\t\n", cell, name, r.RPS, r.P50, r.P99,
				ratio(r.RPS, ng.RPS), ratio(r.P99, ng.P99), r.Failed, rss)
		}
	}
	_ = tw.Flush()
}

// WriteChunkTable prints the chunk delays at c=16.
func WriteChunkTable(w io.Writer, c ChunkTable) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "path (c=16 streams, a chunk every 5 ms)\tp50 ms\tp99 ms\tmax ms\tp99 added to direct\t")
	for _, name := range pathOrder {
		d, ok := c[name]
		if !ok {
			continue
		}
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%+.3f ms\t\n", name, d[0], d[1], d[2], d[1]-c[PathDirect][1])
	}
	_ = tw.Flush()
}

// WriteFootprint prints the distribution's footprint beside the original
// agents' (quoted from issue 13).
func WriteFootprint(w io.Writer, fp Footprint) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tidle RSS\tidle CPU\tload RSS (max)\tload CPU\t")
	row := func(name string, f Footprint, maxRSS bool) {
		load := mib(f.Load.RSSKiB)
		if maxRSS {
			load += fmt.Sprintf(" (%s)", mib(f.Load.MaxRSSKiB))
		}
		fmt.Fprintf(tw, "%s\t%s\t%.2f %%\t%s\t%.2f %%\t\n", name, mib(f.Idle.RSSKiB), 100*f.Idle.Cores, load, 100*f.Load.Cores)
	}
	row("original agents (quoted from issue 13)", Footprint(OriginalAgents), false)
	row("mlx-otelcol, shipped config", fp, true)
	_ = tw.Flush()
}

// Goal is one of issue 13's goals, and whether this run met it.
type Goal struct {
	What     string
	Measured string
	Met      bool
}

// Goals judges this run's figures against issue 13's goals (ratios within
// the same run). A missing table leaves its goals out.
func Goals(t ProxyTable, c ChunkTable, fp *Footprint) []Goal {
	var g []Goal
	if t != nil {
		for _, stream := range []bool{false, true} {
			cell := Cell{stream, 1}
			added := t[PathProxy][cell].P50 - t[PathNginx][cell].P50
			g = append(g, Goal{fmt.Sprintf("%s: added p50 over nginx <= 0.2 ms", cell), fmt.Sprintf("%+.2f ms", added), added <= 0.2})
		}
		for _, cell := range Cells {
			if cell.Concurrency == 1 {
				continue
			}
			ng, p, off := t[PathNginx][cell], t[PathProxy][cell], t[PathProxyNoLP][cell]
			g = append(g,
				Goal{fmt.Sprintf("%s: throughput >= 0.6x nginx", cell), ratio(p.RPS, ng.RPS), p.RPS >= 0.6*ng.RPS},
				Goal{fmt.Sprintf("%s: p99 <= 2x nginx", cell), ratio(p.P99, ng.P99), p.P99 <= 2*ng.P99},
				Goal{fmt.Sprintf("%s, injection off: throughput >= 0.8x nginx", cell), ratio(off.RPS, ng.RPS), off.RPS >= 0.8*ng.RPS})
		}
	}
	if c != nil {
		added := c[PathProxy][1] - c[PathDirect][1]
		g = append(g, Goal{"c=16 stream: chunk delay p99 within 0.1 ms of direct", fmt.Sprintf("%+.3f ms", added), added <= 0.1})
		if ng, ok := c[PathNginx]; ok {
			added := c[PathProxy][1] - ng[1]
			g = append(g, Goal{"c=16 stream, scored from its chunks: chunk delay p99 within 0.3 ms of nginx's", fmt.Sprintf("%+.3f ms", added), added <= 0.3})
		}
	}
	if fp != nil {
		g = append(g,
			Goal{"idle: CPU <= 0.3 % of a core", fmt.Sprintf("%.2f %%", 100*fp.Idle.Cores), fp.Idle.Cores <= 0.003},
			Goal{"idle: RSS <= 48 MiB", mib(fp.Idle.RSSKiB), fp.Idle.RSSKiB <= 48<<10},
			Goal{"load: CPU <= 1/3 of the original agents'", fmt.Sprintf("%.2f %% (limit %.2f %%)", 100*fp.Load.Cores, 100*OriginalAgents.Load.Cores/3), fp.Load.Cores <= OriginalAgents.Load.Cores/3})
	}
	return g
}

// WriteGoals prints the goals, met or not.
func WriteGoals(w io.Writer, goals []Goal) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "goal\tmeasured\t\t")
	for _, g := range goals {
		verdict := "met"
		if !g.Met {
			verdict = "NOT met"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t\n", g.What, g.Measured, verdict)
	}
	_ = tw.Flush()
}

func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

func mib(kib int64) string { return fmt.Sprintf("%.1f MiB", float64(kib)/1024) }
