package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mlxbench/bench"
	"github.com/mlx-otelcol/mlx-otelcol/cmd/mlxbench/bench/agent"
)

func runAgentic(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCommon("agentic", "agentic", stderr)
	fs := c.fs
	scenarios := fs.String("scenarios", "all", "calculator, tri_tool, planner (comma-separated) or all")
	runs := fs.Int("runs", 1, "runs of each scenario, one after the other")
	agents := fs.Int("agents", 1, "concurrent agent loops per run (the seed: 2 crashed the original server)")
	maxTurns := fs.Int("max-turns", 8, "turn budget of a loop")
	// Tool-call JSON and a final answer need more room than a load request.
	c.maxTokens = 512
	fs.Lookup("max-tokens").DefValue = "512"
	if err := c.parse(args); err != nil {
		return 2
	}
	list, err := agent.Lookup(splitList(*scenarios))
	if err == nil && (*runs <= 0 || *agents <= 0 || *maxTurns <= 0) {
		err = fmt.Errorf("--runs, --agents and --max-turns must be positive")
	}
	if err != nil {
		fmt.Fprintln(stderr, "mlxbench agentic:", err)
		return 2
	}
	s := c.start(ctx, "agentic", append([]string{"agentic"}, args...), stdout, stderr)
	var levels []bench.Level
	var loops []bench.LoopRecord
	var order []string
	var mu sync.Mutex
	for i, sc := range list {
		if ctx.Err() != nil {
			break
		}
		order = append(order, sc.Name)
		l := bench.Level{Name: sc.Name, Mode: "agentic", Concurrency: *agents, Stream: true}
		t0 := time.Now()
		l.StartS = s.rec.Since(t0)
		s.level.Store(int64(i))
		s.prog.StartLevel(sc.Name, 0)
		for run := 1; run <= *runs && ctx.Err() == nil; run++ {
			var wg sync.WaitGroup
			for a := 1; a <= *agents; a++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					id := fmt.Sprintf("%s-r%d-a%d", sc.Name, run, a)
					nonce := ""
					if !c.noCacheBust {
						nonce = bench.Nonce(s.runID, i*10_000+run*100+a)
					}
					rec := agent.RunLoop(ctx, s.target, sc, agent.LoopOptions{
						ID: id, Run: run, Agent: a,
						SessionID: "mlxbench-" + s.runID + "-" + id,
						Nonce:     nonce, MaxTurns: *maxTurns, MaxTokens: c.maxTokens, Temperature: c.temperature,
						OnTurn: func(turn int, r bench.Result) {
							s.rec.Add(r, i, a, func(smp *bench.Sample) { smp.Loop, smp.Turn = id, turn })
						},
					})
					mu.Lock()
					loops = append(loops, rec)
					mu.Unlock()
				}()
			}
			wg.Wait()
		}
		l.EndS = s.rec.Since(time.Now())
		l.Summary = bench.Summarize(bench.SamplesOf(s.rec.Samples(), i), bench.SummaryOptions{})
		sum := bench.SummarizeLoops([]string{sc.Name}, loopsOf(loops, sc.Name))
		extra := ""
		if len(sum) == 1 {
			extra = fmt.Sprintf("completed %d/%d  turns %.1f  calls %.1f  valid %.0f%%", sum[0].Completed, sum[0].Loops, sum[0].Turns.Mean, sum[0].ToolCalls.Mean, 100*sum[0].ValidityRate)
		}
		s.prog.EndLevel(time.Since(t0), l.Summary, extra)
		levels = append(levels, l)
	}
	s.level.Store(-1)
	summary := &bench.AgenticSummary{Scenarios: bench.SummarizeLoops(order, loops), Loops: loops}
	fmt.Fprintln(stdout)
	bench.WriteScenarios(stdout, summary.Scenarios)
	return s.finish(ctx, levels, func(r *bench.Report) { r.Agentic = summary })
}

func loopsOf(all []bench.LoopRecord, scenario string) []bench.LoopRecord {
	var out []bench.LoopRecord
	for _, l := range all {
		if l.Scenario == scenario {
			out = append(out, l)
		}
	}
	return out
}
