package perf

import (
	"fmt"
	"io"
	"text/tabwriter"
)

var pathOrder = []string{PathDirect, PathNginx, PathGoProxy, PathProxy, PathProxyNoLP}

// WriteProxyTable prints, per cell and path: requests per second, latency
// p50 and p99, the throughput and p99 as multiples of the Go proxy's (the
// floor of a Go front door), and the throughput as a multiple of nginx's.
func WriteProxyTable(w io.Writer, t ProxyTable) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "load\tpath\trps\tp50 ms\tp99 ms\trps / Go proxy\tp99 / Go proxy\trps / nginx\tfailed\tcollector RSS\tspans dropped\tunscored\t")
	for _, cell := range Cells {
		ng, gp := t[PathNginx][cell], t[PathGoProxy][cell]
		for _, name := range pathOrder {
			r, ok := t[name][cell]
			if !ok {
				continue
			}
			rss, spans, unscored := "", "", ""
			if r.RSSKiB > 0 {
				rss = mib(r.RSSKiB)
				spans, unscored = share(r.Dropped.Spans, r.Requests), share(r.Dropped.Scoring, r.Requests)
			}
			fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.2f\t%.2f\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t\n", cell, name, r.RPS, r.P50, r.P99,
				ratio(r.RPS, gp.RPS), ratio(r.P99, gp.P99), ratio(r.RPS, ng.RPS), r.Failed, rss, spans, unscored)
		}
	}
	_ = tw.Flush()
}

// WriteChunkTable prints the chunk delays at c=16.
func WriteChunkTable(w io.Writer, c ChunkTable) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "path (c=16 streams, a chunk every 5 ms)\tp50 ms\tp99 ms\tmax ms\tp99 added to direct\tp99 added to nginx\t")
	for _, name := range pathOrder {
		d, ok := c[name]
		if !ok {
			continue
		}
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%+.3f ms\t%+.3f ms\t\n", name, d[0], d[1], d[2], d[1]-c[PathDirect][1], d[1]-c[PathNginx][1])
	}
	_ = tw.Flush()
}

// WriteFootprint prints the distribution's footprint beside the original
// agents' (quoted from issue 13), and the relays' under the same load.
func WriteFootprint(w io.Writer, fp Footprint) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tidle RSS\tidle CPU\tload RSS (max)\tload CPU\t")
	row := func(name string, idle *Usage, load Usage, maxRSS bool) {
		rss, cpu := "-", "-"
		if idle != nil {
			rss, cpu = mib(idle.RSSKiB), fmt.Sprintf("%.2f %%", 100*idle.Cores)
		}
		l := mib(load.RSSKiB)
		if maxRSS {
			l += fmt.Sprintf(" (%s)", mib(load.MaxRSSKiB))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.2f %%\t\n", name, rss, cpu, l, 100*load.Cores)
	}
	agents := OriginalAgents.Idle
	row("original agents (quoted from issue 13)", &agents, OriginalAgents.Load, false)
	row("mlx-otelcol, shipped config", &fp.Idle, fp.Load, true)
	row("nginx relaying the same chats (all its processes)", nil, fp.Nginx, true)
	row("Go proxy relaying the same chats", nil, fp.GoProxy, true)
	_ = tw.Flush()
}

// Goal is one of issue 32's goals, and whether this run met it.
type Goal struct {
	What     string
	Measured string
	Met      bool
}

// Goals judges this run's figures against issue 32's goals: ratios within
// the same run against the Go proxy (and nginx for relay CPU and chunk
// delay). binaryBytes is the collector's size (0 leaves its goal out); a
// missing table leaves its goals out.
func Goals(t ProxyTable, c ChunkTable, fp *Footprint, binaryBytes int64) []Goal {
	var g []Goal
	if t != nil {
		for _, stream := range []bool{false, true} {
			cell := Cell{stream, 1}
			gp, p := t[PathGoProxy][cell], t[PathProxy][cell]
			added := p.P50 - gp.P50
			g = append(g,
				Goal{fmt.Sprintf("%s: p50 <= the Go proxy's + 0.1 ms", cell), fmt.Sprintf("%+.2f ms", added), added <= 0.1},
				Goal{fmt.Sprintf("%s: p99 <= 2x the Go proxy's", cell), ratio(p.P99, gp.P99), p.P99 <= 2*gp.P99})
		}
		for _, cell := range Cells {
			if cell.Concurrency == 1 {
				continue
			}
			want := 0.6
			if cell.Stream {
				want = 0.85
			}
			gp, p := t[PathGoProxy][cell], t[PathProxy][cell]
			g = append(g, Goal{fmt.Sprintf("%s: throughput >= %.2fx the Go proxy", cell, want), ratio(p.RPS, gp.RPS), p.RPS >= want*gp.RPS})
		}
	}
	if c != nil {
		if ng, ok := c[PathNginx]; ok {
			added := c[PathProxy][1] - ng[1]
			g = append(g, Goal{"c=16 stream, scored from its chunks: chunk delay p99 within 0.3 ms of nginx's", fmt.Sprintf("%+.3f ms", added), added <= 0.3})
		}
	}
	if fp != nil {
		limit := fp.Nginx.Cores + 0.01
		g = append(g,
			Goal{"4 streamed chats: collector CPU <= nginx's relay + 1 % of a core", fmt.Sprintf("%.2f %% (limit %.2f %%)", 100*fp.Load.Cores, 100*limit), fp.Load.Cores <= limit},
			Goal{"4 streamed chats: collector CPU < the original agents'", fmt.Sprintf("%.2f %% (agents %.2f %%)", 100*fp.Load.Cores, 100*OriginalAgents.Load.Cores), fp.Load.Cores < OriginalAgents.Load.Cores},
			Goal{"idle: CPU <= 0.2 % of a core", fmt.Sprintf("%.2f %%", 100*fp.Idle.Cores), fp.Idle.Cores <= 0.002},
			Goal{"idle: RSS <= 40 MiB", mib(fp.Idle.RSSKiB), fp.Idle.RSSKiB <= 40<<10})
	}
	if binaryBytes > 0 {
		g = append(g, Goal{"binary <= 60 MB", fmt.Sprintf("%.1f MB", float64(binaryBytes)/1e6), binaryBytes <= 60e6})
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

// share is n of requests as a percentage.
func share(n float64, requests int) string {
	if requests == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f %%", 100*n/float64(requests))
}

func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

func mib(kib int64) string { return fmt.Sprintf("%.1f MiB", float64(kib)/1024) }
