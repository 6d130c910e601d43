package perf

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
)

// relayOrder are the rows without telemetry, printed first in each cell.
var relayOrder = []string{PathDirect, PathNginx, PathGoProxy}

// rowOrder is every row of the run, the relays first.
func rowOrder(rows []Row) []string {
	out := slices.Clone(relayOrder)
	for _, r := range rows {
		out = append(out, r.Name)
	}
	return out
}

// WriteProxyTable prints, per cell and path: requests per second, latency
// p50 and p99, the throughput and p99 as multiples of the Go proxy's (the
// floor of a Go front door), the throughput as a multiple of nginx's, and
// for a collector with a baseline beside it, its throughput and p99 as
// multiples of the baseline's.
func WriteProxyTable(w io.Writer, run *ProxyRun) {
	t := run.Table
	base := map[string]string{}
	for _, r := range run.Rows {
		base[r.Name] = r.Baseline
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "load\tpath\trps\tp50 ms\tp99 ms\tCPU µs/req\trps / Go proxy\tp99 / Go proxy\tCPU / Go proxy\trps / nginx\trps / baseline\tp99 / baseline\tCPU / baseline\tfailed\tcollector RSS\tspans dropped\tunscored\t")
	for _, cell := range Cells {
		ng, gp := t[PathNginx][cell], t[PathGoProxy][cell]
		for _, name := range rowOrder(run.Rows) {
			r, ok := t[name][cell]
			if !ok {
				continue
			}
			rss, spans, unscored := "", "", ""
			if r.RSSKiB > 0 {
				rss = mib(r.RSSKiB)
				spans, unscored = share(r.Dropped.Spans, r.Requests), share(r.Dropped.Scoring, r.Requests)
			}
			vsRPS, vsP99, vsCPU := "", "", ""
			if b, ok := t[base[name]][cell]; ok {
				vsRPS, vsP99, vsCPU = ratio(r.RPS, b.RPS), ratio(r.P99, b.P99), ratio(r.CPUPerReq, b.CPUPerReq)
			}
			cpu, cpuGo := "-", "-"
			if r.CPUPerReq > 0 {
				cpu, cpuGo = fmt.Sprintf("%.0f", r.CPUPerReq), ratio(r.CPUPerReq, gp.CPUPerReq)
			}
			fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.2f\t%.2f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t\n", cell, name, r.RPS, r.P50, r.P99, cpu,
				ratio(r.RPS, gp.RPS), ratio(r.P99, gp.P99), cpuGo, ratio(r.RPS, ng.RPS), vsRPS, vsP99, vsCPU, r.Failed, rss, spans, unscored)
		}
	}
	_ = tw.Flush()
}

// WriteChunkTable prints the chunk delays at c=16.
func WriteChunkTable(w io.Writer, run *ProxyRun) {
	c := run.Chunks
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "path (c=16 streams, a chunk every 5 ms)\tp50 ms\tp99 ms\tmax ms\tp99 added to direct\tp99 added to nginx\t")
	for _, name := range rowOrder(run.Rows) {
		d, ok := c[name]
		if !ok {
			continue
		}
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%+.3f ms\t%+.3f ms\t\n", name, d[0], d[1], d[2], d[1]-c[PathDirect][1], d[1]-c[PathNginx][1])
	}
	_ = tw.Flush()
}

// WriteFootprint prints the distribution's footprint beside the original
// agents' (each and together, measured in the same run when given), and
// the relays' under the same load.
func WriteFootprint(w io.Writer, fp Footprint) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tidle RSS\tidle CPU\tload RSS (max)\tload CPU\t")
	row := func(name string, idle *Usage, load Usage) {
		rss, cpu := "-", "-"
		if idle != nil {
			rss, cpu = mib(idle.RSSKiB), fmt.Sprintf("%.2f %%", 100*idle.Cores)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s (%s)\t%.2f %%\t\n", name, rss, cpu, mib(load.RSSKiB), mib(load.MaxRSSKiB), 100*load.Cores)
	}
	row("mlx-otelcol, shipped config", &fp.Idle, fp.Load)
	if a := fp.Agents; a != nil {
		row("original agents, the four together", &a.Idle.Total, a.Load.Total)
		for _, name := range a.Load.Names() {
			idle := a.Idle.Each[name]
			row("  original "+name+" agent", &idle, a.Load.Each[name])
		}
	} else {
		fmt.Fprintln(tw, "original agents: not measured (-agents, make bench AGENTS=...)\t\t\t\t\t")
	}
	row("nginx relaying the same chats (all its processes)", nil, fp.Nginx)
	row("Go proxy relaying the same chats", nil, fp.GoProxy)
	_ = tw.Flush()
}

// Goal is one of the distribution's performance goals, and whether this
// run met it.
type Goal struct {
	What     string
	Measured string
	Met      bool
}

// Goals judges this run's figures against the performance goals: ratios within
// the same run against the Go proxy (and nginx for relay CPU and chunk
// delay), read on the first collector row (the first shape's: mlx_lm's by
// default, the path users take); and, for every collector with a baseline
// beside it, throughput within 5 % of the baseline's on every load.
// binaryBytes is the collector's size (0 leaves its goal out); a missing
// table leaves its goals out.
func Goals(run *ProxyRun, fp *Footprint, binaryBytes int64) []Goal {
	var g []Goal
	if run != nil && run.Table != nil && len(run.Rows) > 0 {
		t, proxy := run.Table, run.Rows[0].Name
		for _, stream := range []bool{false, true} {
			cell := Cell{stream, 1}
			gp, ok1 := t[PathGoProxy][cell]
			p, ok2 := t[proxy][cell]
			if !ok1 || !ok2 {
				continue // -concurrency left it out
			}
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
			gp, p := t[PathGoProxy][cell], t[proxy][cell]
			g = append(g, Goal{fmt.Sprintf("%s: throughput >= %.2fx the Go proxy", cell, want), ratio(p.RPS, gp.RPS), p.RPS >= want*gp.RPS})
		}
		if ng, ok := run.Chunks[PathNginx]; ok {
			added := run.Chunks[proxy][1] - ng[1]
			g = append(g, Goal{"c=16 stream: chunk delay p99 within 0.3 ms of nginx's", fmt.Sprintf("%+.3f ms", added), added <= 0.3})
		}
		for _, r := range run.Rows {
			if r.Baseline == "" {
				continue
			}
			worst, at := 0.0, Cell{}
			for _, cell := range Cells {
				b, ok := t[r.Baseline][cell]
				if !ok || b.RPS == 0 {
					continue
				}
				if x := t[r.Name][cell].RPS / b.RPS; worst == 0 || x < worst {
					worst, at = x, cell
				}
			}
			g = append(g, Goal{fmt.Sprintf("%s: throughput >= 0.95x the baseline's on every load", r.Name),
				fmt.Sprintf("lowest %.2fx (%s)", worst, at), worst >= 0.95})
		}
	}
	if fp != nil {
		limit := fp.Nginx.Cores + 0.01
		g = append(g,
			Goal{"4 streamed chats: collector CPU <= nginx's relay + 1 % of a core", fmt.Sprintf("%.2f %% (limit %.2f %%)", 100*fp.Load.Cores, 100*limit), fp.Load.Cores <= limit},
			Goal{"idle: CPU <= 0.2 % of a core", fmt.Sprintf("%.2f %%", 100*fp.Idle.Cores), fp.Idle.Cores <= 0.002},
			Goal{"idle: RSS <= 40 MiB", mib(fp.Idle.RSSKiB), fp.Idle.RSSKiB <= 40<<10})
		if fp.Agents != nil {
			g = append(g, Goal{"4 streamed chats: collector CPU < the original agents' (measured in this run)",
				fmt.Sprintf("%.2f %% (agents %.2f %%)", 100*fp.Load.Cores, 100*fp.Agents.Load.Total.Cores), fp.Load.Cores < fp.Agents.Load.Total.Cores})
		}
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
