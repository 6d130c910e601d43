// Command mlxbench measures an OpenAI-compatible endpoint (mlx_lm.server,
// the mlx-otelcol proxy in front of it, or any other) the way the original
// stack's bench.py, bench_load.py and bench_agentic.py did, with rate
// control, live progress, JSON reports and HTML plots:
//
//	mlxbench profile   the prompt matrix: short/medium/long × stream on/off
//	mlxbench load      --sweep 1,2,4,8,16 | --sustain N | --rate R[,R2]
//	mlxbench agentic   calculator, tri_tool and planner agent loops
//	mlxbench overhead  direct to the engine vs through the proxy, interleaved
//	mlxbench compare   the differences between two reports
//	mlxbench html      (re)draw a report's HTML page and plots
//
// `mlxbench <command> -h` lists a command's flags. docs/mlxbench.md has
// the details and an example run.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

// version is set at build time (-ldflags "-X main.version=...").
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// The first Ctrl-C stops the run and writes the partial report; a
		// second one kills the process as usual.
		<-ctx.Done()
		stop()
	}()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: mlxbench <command> [flags]

commands:
  profile    prompt matrix (short/medium/long × stream on/off), --iters each
  load       --sweep 1,2,4,8,16 | --sustain N | --rate R[,R2,...]
  agentic    agent loops: --scenarios calculator,tri_tool,planner --runs N --agents M
  overhead   direct to the engine vs through the proxy, interleaved
  compare    A.json B.json: the differences between two reports
  html       REPORT.json: write its HTML report (and --png-dir PNGs)
  version    print the version

Reports go to bench-reports/<label>-<time>.json (--out-dir); --html writes
the HTML page beside it. "mlxbench <command> -h" lists the flags.
`

// run is main without the process: tests call it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "profile":
		return runProfile(ctx, rest, stdout, stderr)
	case "load":
		return runLoad(ctx, rest, stdout, stderr)
	case "agentic":
		return runAgentic(ctx, rest, stdout, stderr)
	case "overhead":
		return runOverhead(ctx, rest, stdout, stderr)
	case "compare":
		return runCompare(rest, stdout, stderr)
	case "html":
		return runHTML(rest, stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "mlxbench", fullVersion())
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "mlxbench: unknown command %q\n\n%s", cmd, usage)
	return 2
}

// fullVersion is the version and, when built from a checkout, its commit.
func fullVersion() string {
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += "+" + s.Value[:12]
			}
			if s.Key == "vcs.modified" && s.Value == "true" {
				v += "-dirty"
			}
		}
	}
	return v
}
