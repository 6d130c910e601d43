package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mlxbench/bench"
)

// loadLevel is one planned level of a load run.
type loadLevel struct {
	name    string
	mode    string
	workers int
	rate    float64
}

// loadPlan turns --sweep, --sustain and --rate (exactly one) into levels.
func loadPlan(sweep string, sustain int, rates string) ([]loadLevel, error) {
	set := 0
	for _, b := range []bool{sweep != "", sustain > 0, rates != ""} {
		if b {
			set++
		}
	}
	if set != 1 {
		return nil, fmt.Errorf("give exactly one of --sweep, --sustain, --rate")
	}
	var out []loadLevel
	switch {
	case sweep != "":
		cs, err := parseInts(sweep)
		if err != nil {
			return nil, fmt.Errorf("--sweep: %w", err)
		}
		for _, c := range cs {
			out = append(out, loadLevel{name: fmt.Sprintf("c=%d", c), mode: "sweep", workers: c})
		}
	case sustain > 0:
		out = append(out, loadLevel{name: fmt.Sprintf("sustain c=%d", sustain), mode: "sustain", workers: sustain})
	default:
		rs, err := parseFloats(rates)
		if err != nil {
			return nil, fmt.Errorf("--rate: %w", err)
		}
		for _, r := range rs {
			out = append(out, loadLevel{name: fmt.Sprintf("rate=%g/s", r), mode: "rate", rate: r})
		}
	}
	return out, nil
}

func runLoad(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCommon("load", "load", stderr)
	fs := c.fs
	sweep := fs.String("sweep", "", "closed loop: concurrency levels, e.g. 1,2,4,8,16")
	sustain := fs.Int("sustain", 0, "closed loop: a soak at N workers")
	rates := fs.String("rate", "", "open loop: arrival rates in requests/s, e.g. 0.5,1,2")
	arrival := fs.String("arrival", bench.Poisson, "open loop: poisson or uniform arrivals")
	duration := fs.Duration("duration", 30*time.Second, "how long each level is measured (after --settle)")
	settle := fs.Duration("settle", 5*time.Second, "warm-up of each level, sent but not measured")
	maxRequests := fs.Int("max-requests", 0, "cap on each level's requests (0 = the time bound only)")
	maxInFlight := fs.Int("max-in-flight", 256, "open loop: requests waiting on the server at most; later sends wait and are reported late")
	lateThreshold := fs.Duration("late-threshold", 10*time.Millisecond, "open loop: a send this much behind its schedule counts as late")
	prompt := fs.String("prompt", "short", "prompt size: short, medium or long")
	noStream := fs.Bool("no-stream", false, "send non-streamed requests (no TTFT or ITL)")
	if err := c.parse(args); err != nil {
		return 2
	}
	plan, err := loadPlan(*sweep, *sustain, *rates)
	if err == nil && *duration <= 0 && *maxRequests <= 0 {
		err = fmt.Errorf("a level needs --duration or --max-requests")
	}
	var text string
	if err == nil {
		text, err = bench.Prompt(*prompt)
	}
	if err == nil && *arrival != bench.Poisson && *arrival != bench.Uniform {
		err = fmt.Errorf("--arrival must be poisson or uniform")
	}
	if err != nil {
		fmt.Fprintln(stderr, "mlxbench load:", err)
		return 2
	}
	if !isSet(fs, "label") {
		c.label = "load-" + plan[0].mode
	}
	s := c.start(ctx, "load", append([]string{"load"}, args...), stdout, stderr)
	stream := !*noStream
	var levels []bench.Level
	for i, lv := range plan {
		if ctx.Err() != nil {
			break
		}
		s.level.Store(int64(i))
		l := bench.Level{Name: lv.name, Mode: lv.mode, Concurrency: lv.workers, Rate: lv.rate, Prompt: *prompt, Stream: stream}
		t0 := time.Now()
		l.StartS = s.rec.Since(t0)
		s.prog.StartLevel(lv.name, *settle+*duration)
		opts := bench.SummaryOptions{}
		if lv.mode == "rate" {
			l.Arrival = *arrival
			ol := bench.OpenLoop{
				Level: i, Rate: lv.rate, Arrival: *arrival, Seed: c.seed + uint64(i),
				Settle: *settle, Duration: *duration, MaxRequests: *maxRequests, MaxInFlight: *maxInFlight,
				Call: func(n int) bench.Call { return s.call(text, i*1_000_000+n, stream) },
			}
			if err := ol.Run(ctx, s.target, s.rec); err != nil {
				fmt.Fprintln(stderr, "mlxbench load:", err)
				return 2
			}
			opts = bench.SummaryOptions{OpenLoop: true, LateThreshold: *lateThreshold}
		} else {
			cl := bench.ClosedLoop{
				Level: i, Workers: lv.workers, Settle: *settle, Duration: *duration, MaxRequests: *maxRequests,
				Call: func(_, n int) bench.Call { return s.call(text, i*1_000_000+n, stream) },
			}
			l.WindowUS = cl.Run(ctx, s.target, s.rec)
			opts.WindowUS = l.WindowUS
		}
		l.EndS = s.rec.Since(time.Now())
		l.Summary = bench.Summarize(bench.SamplesOf(s.rec.Samples(), i), opts)
		s.prog.EndLevel(time.Since(t0), l.Summary, levelExtra(l))
		levels = append(levels, l)
	}
	s.level.Store(-1)
	fmt.Fprintln(stdout)
	bench.WriteLevels(stdout, levels)
	return s.finish(ctx, levels, nil)
}

// levelExtra ends a level's progress line with its throughput.
func levelExtra(l bench.Level) string {
	s := l.Summary
	out := fmt.Sprintf("%.2f req/s  %.1f out tok/s", s.ReqPerS, s.OutTokPerS)
	if l.Mode == "rate" {
		out += fmt.Sprintf("  sent %.2f/s  late %d", s.SendRate, s.Late)
	}
	return out
}

func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
