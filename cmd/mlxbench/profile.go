package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mlxbench/bench"
)

func runProfile(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCommon("profile", "profile", stderr)
	fs := c.fs
	iters := fs.Int("iters", 3, "requests per cell")
	concurrency := fs.Int("concurrency", 1, "requests of a cell in flight at once (bench.py's burst)")
	promptList := fs.String("prompts", "short,medium,long", "prompt sizes of the matrix")
	streams := fs.String("streams", "on,off", "stream modes of the matrix: on, off or both")
	if err := c.parse(args); err != nil {
		return 2
	}
	names := splitList(*promptList)
	var modes []bool
	for _, m := range splitList(*streams) {
		switch m {
		case "on":
			modes = append(modes, true)
		case "off":
			modes = append(modes, false)
		default:
			fmt.Fprintf(stderr, "mlxbench profile: --streams: %q is not on or off\n", m)
			return 2
		}
	}
	texts := map[string]string{}
	for _, n := range names {
		t, err := bench.Prompt(n)
		if err != nil {
			fmt.Fprintln(stderr, "mlxbench profile:", err)
			return 2
		}
		texts[n] = t
	}
	if *iters <= 0 || *concurrency <= 0 || len(names) == 0 || len(modes) == 0 {
		fmt.Fprintln(stderr, "mlxbench profile: --iters, --concurrency, --prompts and --streams must not be empty")
		return 2
	}
	s := c.start(ctx, "profile", append([]string{"profile"}, args...), stdout, stderr)
	var levels []bench.Level
	for _, name := range names {
		for _, stream := range modes {
			if ctx.Err() != nil {
				break
			}
			i := len(levels)
			mode := "off"
			if stream {
				mode = "on"
			}
			l := bench.Level{Name: name + "/stream-" + mode, Mode: "profile", Concurrency: *concurrency, Prompt: name, Stream: stream}
			t0 := time.Now()
			l.StartS = s.rec.Since(t0)
			s.level.Store(int64(i))
			s.prog.StartLevel(l.Name, 0)
			text := texts[name]
			// A count-bound level: each request is bounded by --timeout.
			bench.ClosedLoop{
				Level: i, Workers: min(*concurrency, *iters), MaxRequests: *iters,
				Call: func(_, n int) bench.Call { return s.call(text, i*1_000_000+n, stream) },
			}.Run(ctx, s.target, s.rec)
			l.EndS = s.rec.Since(time.Now())
			l.Summary = bench.Summarize(bench.SamplesOf(s.rec.Samples(), i), bench.SummaryOptions{})
			s.prog.EndLevel(time.Since(t0), l.Summary, fmt.Sprintf("%.1f tok/s p50", l.Summary.TPS.P50))
			levels = append(levels, l)
		}
	}
	s.level.Store(-1)
	fmt.Fprintln(stdout)
	bench.WriteProfile(stdout, levels)
	return s.finish(ctx, levels, nil)
}
