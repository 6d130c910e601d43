package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mlxbench/bench"
)

func runOverhead(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCommon("overhead", "overhead", stderr)
	fs := c.fs
	direct := fs.String("direct", "http://127.0.0.1:8081/v1", "the engine itself (--base-url is the proxy in front of it)")
	concurrency := fs.Int("concurrency", 1, "workers; each alternates between the two paths")
	duration := fs.Duration("duration", 30*time.Second, "measured time (after --settle)")
	settle := fs.Duration("settle", 2*time.Second, "warm-up, sent but not measured")
	maxRequests := fs.Int("max-requests", 0, "cap on the requests of both paths together (0 = the time bound only)")
	prompt := fs.String("prompt", "short", "prompt size: short, medium or long")
	noStream := fs.Bool("no-stream", false, "send non-streamed requests (then only latency is compared)")
	c.maxTokens = 64
	fs.Lookup("max-tokens").DefValue = "64"
	// Overhead is the proxy as a user meets it: as origin user its requests
	// are scored (logprobs injected), which a bench request never is. They
	// count in the users' series (and SLOs) like any user's.
	c.origin = "user"
	fs.Lookup("origin").DefValue = "user"
	if err := c.parse(args); err != nil {
		return 2
	}
	text, err := bench.Prompt(*prompt)
	if err == nil && (*concurrency <= 0 || *duration <= 0 && *maxRequests <= 0) {
		err = fmt.Errorf("--concurrency must be positive, and --duration or --max-requests set")
	}
	if err != nil {
		fmt.Fprintln(stderr, "mlxbench overhead:", err)
		return 2
	}
	s := c.start(ctx, "overhead", append([]string{"overhead"}, args...), stdout, stderr)
	engine := bench.NewTarget(c.targetConfig(*direct))
	defer engine.Close()
	stream := !*noStream
	levels := []bench.Level{
		{Name: "direct", Mode: "overhead", Concurrency: *concurrency, Prompt: *prompt, Stream: stream, Path: *direct},
		{Name: "proxy", Mode: "overhead", Concurrency: *concurrency, Prompt: *prompt, Stream: stream, Path: c.baseURL},
	}
	t0 := time.Now()
	s.level.Store(0)
	s.prog.StartLevel("direct+proxy", *settle+*duration)
	window := bench.Interleaved{
		Levels: [2]int{0, 1}, Targets: [2]*bench.Target{engine, s.target},
		Workers: *concurrency, Settle: *settle, Duration: *duration, MaxRequests: *maxRequests,
		Call: func(_, n int) bench.Call { return s.call(text, n, stream) },
	}.Run(ctx, s.rec)
	s.level.Store(-1)
	samples := s.rec.Samples()
	for i := range levels {
		levels[i].StartS, levels[i].EndS = 0, s.rec.Since(time.Now())
		levels[i].WindowUS = window
		levels[i].Summary = bench.Summarize(bench.SamplesOf(samples, i), bench.SummaryOptions{WindowUS: window})
	}
	rows := bench.Overhead(levels[0].Summary, levels[1].Summary)
	s.prog.EndLevel(time.Since(t0), bench.Summary{Requests: levels[0].Summary.Requests + levels[1].Summary.Requests, OK: levels[0].Summary.OK + levels[1].Summary.OK}, "")
	fmt.Fprintln(stdout)
	bench.WriteLevels(stdout, levels)
	fmt.Fprintln(stdout)
	bench.WriteOverhead(stdout, rows)
	// When every request through the proxy failed, the engine's own
	// answers still say what it is.
	s.also = engine
	return s.finish(ctx, levels, func(r *bench.Report) { r.Overhead = rows })
}
