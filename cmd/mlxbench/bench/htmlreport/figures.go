package htmlreport

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mlxbench/bench"
)

// Figures draws every plot a report has data for, in reading order.
func Figures(r *bench.Report, samples []bench.Sample) ([]Figure, error) {
	var out []Figure
	add := func(id, title, caption string, p *plot.Plot, ok bool) error {
		if !ok {
			return nil
		}
		f, err := render(id, title, caption, p)
		if err != nil {
			return fmt.Errorf("%s: %w", id, err)
		}
		out = append(out, f)
		return nil
	}
	var builders []func() error
	switch r.Kind {
	case "load":
		builders = append(builders, func() error { return loadFigures(r, add) })
	case "profile":
		builders = append(builders, func() error { return profileFigures(r, add) })
	case "overhead":
		builders = append(builders, func() error { return overheadFigures(r, add) })
	case "agentic":
		builders = append(builders, func() error { return agenticFigures(r, add) })
	}
	builders = append(builders,
		func() error { return ttftDistribution(r, samples, add) },
		func() error { return latencyOverTime(r, samples, add) },
		func() error { return snapshotFigures(r, add) },
	)
	for _, b := range builders {
		if err := b(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

type adder func(id, title, caption string, p *plot.Plot, ok bool) error

// levelX is the x value of a load level and the axis it is on.
func levelX(levels []bench.Level) (xs []float64, label string) {
	rate := len(levels) > 0
	for _, l := range levels {
		rate = rate && l.Mode == "rate"
	}
	for _, l := range levels {
		if rate {
			xs = append(xs, l.Rate)
		} else {
			xs = append(xs, float64(l.Concurrency))
		}
	}
	if rate {
		return xs, "arrival rate (requests/s)"
	}
	return xs, "concurrency (workers)"
}

func stat(levels []bench.Level, f func(bench.Summary) float64) []float64 {
	out := make([]float64, len(levels))
	for i, l := range levels {
		out[i] = f(l.Summary)
		if l.Summary.OK == 0 {
			out[i] = math.NaN()
		}
	}
	return out
}

func loadFigures(r *bench.Report, add adder) error {
	xs, xlab := levelX(r.Levels)
	against := strings.TrimSuffix(strings.Split(xlab, " (")[0], "s")
	for _, m := range []struct {
		id, title, caption string
		get                func(bench.Summary) bench.Pcts
	}{
		{"ttft", "Time to first token", "From each request's scheduled start to its first output chunk, p50 (solid) and p99 (dashed).", func(s bench.Summary) bench.Pcts { return s.TTFT }},
		{"latency", "End-to-end latency", "From each request's scheduled start to its last byte, p50 (solid) and p99 (dashed).", func(s bench.Summary) bench.Pcts { return s.E2E }},
	} {
		p := newPlot(m.title+" vs "+against, xlab, "ms")
		ok := addLines(p, []series{
			{name: "p50", xs: xs, ys: stat(r.Levels, func(s bench.Summary) float64 { return m.get(s).P50 }), color: 0},
			{name: "p99", xs: xs, ys: stat(r.Levels, func(s bench.Summary) float64 { return m.get(s).P99 }), color: 1, dashed: true},
		}, true)
		levelAxis(p, xs)
		fromZero(p)
		if err := add(m.id, m.title, m.caption, p, ok); err != nil {
			return err
		}
	}
	p := newPlot("Throughput vs "+against, xlab, "output tokens/s")
	ok := addLines(p, []series{{name: "output tok/s", xs: xs, ys: stat(r.Levels, func(s bench.Summary) float64 { return s.OutTokPerS }), color: 2}}, true)
	levelAxis(p, xs)
	fromZero(p)
	if err := add("throughput", "Throughput", "Output tokens per second of the whole level (all workers), over its measured window.", p, ok); err != nil {
		return err
	}
	p = newPlot("Requests/s vs "+against, xlab, "requests/s")
	ok = addLines(p, []series{{name: "completed req/s", xs: xs, ys: stat(r.Levels, func(s bench.Summary) float64 { return s.ReqPerS }), color: 3}}, true)
	levelAxis(p, xs)
	fromZero(p)
	return add("requests", "Requests per second", "Requests answered without error per second.", p, ok)
}

func profileFigures(r *bench.Report, add adder) error {
	var prompts []string
	seen := map[string]bool{}
	for _, l := range r.Levels {
		if !seen[l.Prompt] {
			seen[l.Prompt] = true
			prompts = append(prompts, l.Prompt)
		}
	}
	cell := func(prompt string, stream bool, f func(bench.Summary) float64) float64 {
		for _, l := range r.Levels {
			if l.Prompt == prompt && l.Stream == stream && l.Summary.OK > 0 {
				return f(l.Summary)
			}
		}
		return math.NaN()
	}
	vals := func(stream bool, f func(bench.Summary) float64) []float64 {
		var v []float64
		for _, p := range prompts {
			v = append(v, cell(p, stream, f))
		}
		return v
	}
	p, ok := bars("Time to first token by prompt size (streamed)", "ms", prompts, []barGroup{
		{"p50", vals(true, func(s bench.Summary) float64 { return s.TTFT.P50 })},
		{"p99", vals(true, func(s bench.Summary) float64 { return s.TTFT.P99 })},
	})
	if err := add("profile-ttft", "TTFT per prompt size", "Only streamed requests have a first-token time.", p, ok); err != nil {
		return err
	}
	p, ok = bars("Decode speed by prompt size", "tokens/s (p50)", prompts, []barGroup{
		{"stream", vals(true, func(s bench.Summary) float64 { return s.TPS.P50 })},
		{"no stream", vals(false, func(s bench.Summary) float64 { return s.TPS.P50 })},
	})
	if err := add("profile-tps", "tok/s per cell", "Streamed: tokens after the first over the time after the first. Not streamed: all tokens over the whole latency (prefill included).", p, ok); err != nil {
		return err
	}
	p, ok = bars("Generation time by prompt size", "ms (p50)", prompts, []barGroup{
		{"stream", vals(true, func(s bench.Summary) float64 { return s.Generation.P50 })},
		{"no stream", vals(false, func(s bench.Summary) float64 { return s.Generation.P50 })},
	})
	return add("profile-gen", "Generation time per cell", "After the first token when streamed; the whole request when not.", p, ok)
}

func overheadFigures(r *bench.Report, add adder) error {
	var cats []string
	var direct, proxy []float64
	for _, o := range r.Overhead {
		cats = append(cats, o.Metric)
		direct = append(direct, o.Direct)
		proxy = append(proxy, o.Proxy)
	}
	p, ok := bars("Direct to the engine vs through the proxy", "ms", cats, []barGroup{{"direct", direct}, {"proxy", proxy}})
	return add("overhead", "Proxy overhead", "Both paths interleaved in one run against the same engine at the same load.", p, ok)
}

func agenticFigures(r *bench.Report, add adder) error {
	if r.Agentic == nil {
		return nil
	}
	p := newPlot("TTFT per turn (the transcript grows each turn)", "turn", "ms (p50)")
	var ss []series
	for i, s := range r.Agentic.Scenarios {
		var xs, ys []float64
		for t, d := range s.TurnTTFT {
			if d.N > 0 {
				xs = append(xs, float64(t+1))
				ys = append(ys, d.P50)
			}
		}
		ss = append(ss, series{name: s.Scenario, xs: xs, ys: ys, color: i})
	}
	ok := addLines(p, ss, true)
	fromZero(p)
	if err := add("agentic-ttft", "Per-turn TTFT", "Each turn re-sends the whole transcript.", p, ok); err != nil {
		return err
	}
	var cats []string
	var turns, calls, valid []float64
	for _, s := range r.Agentic.Scenarios {
		cats = append(cats, s.Scenario)
		turns = append(turns, s.Turns.Mean)
		calls = append(calls, s.ToolCalls.Mean)
		valid = append(valid, float64(s.ValidCalls)/float64(max(1, s.Loops)))
	}
	bp, ok := bars("Turns and tool calls per loop (mean)", "per loop", cats, []barGroup{{"turns", turns}, {"tool calls", calls}, {"valid calls", valid}})
	return add("agentic-turns", "Turns and tool calls", "", bp, ok)
}

// ttftDistribution draws each level's TTFT distribution.
func ttftDistribution(r *bench.Report, samples []bench.Sample, add adder) error {
	var sets []series
	for i, l := range r.Levels {
		var v []float64
		for _, s := range samples {
			if s.Level == i && !s.Warmup && s.OK() && s.TTFTUS > 0 {
				v = append(v, s.TTFTms())
			}
		}
		sets = append(sets, series{name: l.Name, xs: v, color: i})
	}
	p, ok := ecdf("TTFT distribution", "time to first token (ms)", sets)
	return add("ttft-distribution", "TTFT distribution", "Share of requests whose first token came at or before each time, per level.", p, ok)
}

// latencyOverTime draws every request's latency at its scheduled start:
// queueing shows as a slope, a stall as a gap, errors as red crosses.
func latencyOverTime(r *bench.Report, samples []bench.Sample, add adder) error {
	if len(samples) < 2 {
		return nil
	}
	var sets []series
	var ex, ey []float64
	for i, l := range r.Levels {
		var xs, ys []float64
		for _, s := range samples {
			if s.Level != i || s.Cause == bench.CauseCancelled {
				continue
			}
			if !s.OK() {
				ex, ey = append(ex, float64(s.SchedUS)/1e6), append(ey, s.E2Ems())
				continue
			}
			xs, ys = append(xs, float64(s.SchedUS)/1e6), append(ys, s.E2Ems())
		}
		sets = append(sets, series{name: l.Name, xs: xs, ys: ys, color: i})
	}
	sets = append(sets, series{name: "error", xs: ex, ys: ey, dashed: true})
	p := newPlot("Latency of each request over the run", "scheduled start (s since the run began)", "end-to-end ms")
	ok := scatter(p, sets)
	fromZero(p)
	p.Legend.Left = false
	return add("latency-over-time", "Latency over time", "Every request at its scheduled start.", p, ok)
}

// snapshotFigures draws the distribution's series over the run, one plot
// per family, at most 8 families and 6 series each.
func snapshotFigures(r *bench.Report, add adder) error {
	type pt struct{ t, v float64 }
	fam := map[string]map[string][]pt{}
	for _, s := range r.Snapshots {
		for k, v := range s.Series {
			f := bench.SeriesFamily(k)
			if fam[f] == nil {
				fam[f] = map[string][]pt{}
			}
			fam[f][k] = append(fam[f][k], pt{s.TS, v})
		}
	}
	var names []string
	for _, f := range bench.DefaultSnapshotFamilies {
		if fam[f] != nil {
			names = append(names, f)
		}
	}
	var rest []string
	for f := range fam {
		found := false
		for _, n := range names {
			found = found || n == f
		}
		if !found {
			rest = append(rest, f)
		}
	}
	sort.Strings(rest)
	names = append(names, rest...)
	if len(names) > 8 {
		names = names[:8]
	}
	for _, f := range names {
		keys := make([]string, 0, len(fam[f]))
		for k := range fam[f] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if len(keys) > 6 {
			keys = keys[:6]
		}
		var ss []series
		for i, k := range keys {
			var xs, ys []float64
			for _, p := range fam[f][k] {
				xs, ys = append(xs, p.t), append(ys, p.v)
			}
			label := strings.TrimPrefix(k, f)
			if label == "" {
				label = f
			}
			ss = append(ss, series{name: label, xs: xs, ys: ys, color: i})
		}
		p := newPlot(f, "seconds since the run began", "")
		ok := addLines(p, ss, true)
		fromZero(p)
		if err := add("snapshot-"+f, f, "Scraped every --snapshot-interval during the run.", p, ok); err != nil {
			return err
		}
	}
	return nil
}
