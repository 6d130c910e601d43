// Command mlxperf is `make bench`'s runner: the proxy beside Debian's nginx,
// beside a bare Go httputil.ReverseProxy (mlxperf itself, run again with
// -serve-goproxy) and beside no proxy, under the same load in one run, and
// the whole distribution's footprint idle and under a realistic load, with
// the relays' CPU under the same load (cmd/mlxperf/perf). It prints tables
// of figures and judges them against the distribution's performance goals
// (perf.Goals: latency, throughput and chunk delay beside the Go proxy and
// nginx, CPU and memory idle and under load); it is a benchmark and exits
// 0 whatever the figures are. The proxy table runs behind
// mlx_lm 0.31.3's wire (streams without logprobs, the shipped 5 %
// destreaming) and behind an engine that streams logprobs; with -baseline,
// a second build of the collector runs the same loads, interleaved, and
// each row prints the ratio of this build to it. With -agents, the
// footprint runs the original Python agents in the collector's place.
//
//	mlxperf [-mode proxy,footprint] [-cell 3s] [-footprint 60s]
//	        [-shapes mlx_lm,stream-logprobs] [-baseline OTHER/_build/mlx-otelcol]
//	        [-agents mlx-oc/cluster]
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mlxperf/perf"
)

func main() {
	o := perf.Options{}
	mode := flag.String("mode", "proxy,footprint", "what to measure: proxy, footprint, or both")
	flag.StringVar(&o.Collector, "collector", "_build/mlx-otelcol", "the built distribution")
	flag.StringVar(&o.Mlxsim, "mlxsim", "bin/mlxsim", "the simulated engine")
	flag.StringVar(&o.Nginx, "nginx", perf.NginxPath, "nginx, the no-telemetry baseline")
	flag.StringVar(&o.RepoDir, "repo", ".", "the repository, where config/ is")
	flag.DurationVar(&o.Cell, "cell", 3*time.Second, "how long each load runs on each path")
	flag.DurationVar(&o.Footprint, "footprint", 60*time.Second, "how long the footprint watches, idle and under load each")
	flag.StringVar(&o.ProfileDir, "profile", "", "save the collector's CPU and allocation profiles under load in this directory (config/profile.yaml)")
	flag.Func("config", "one more config file for the collector, after the shipped ones (repeatable)", func(v string) error {
		o.Overlays = append(o.Overlays, v)
		return nil
	})
	shapes := flag.String("shapes", "mlx_lm,stream-logprobs", "the engines behind the proxy: mlx_lm (0.31.3: streams without logprobs, the shipped destreaming) and stream-logprobs (an engine that streams them); the first is the goals'")
	flag.StringVar(&o.Baseline.Collector, "baseline", "", "a second build of the collector to run on the same loads, interleaved (scripts/bench-baseline.sh builds one)")
	flag.StringVar(&o.Baseline.RepoDir, "baseline-repo", "", "the baseline's repository, where its config/ is (default: two levels above -baseline)")
	flag.StringVar(&o.Baseline.Ref, "baseline-ref", "", "the git ref the baseline was built from, for the header")
	flag.Func("concurrency", "only the loads of these concurrencies (comma-separated, of 1, 16, 64)", func(v string) error {
		return perf.KeepConcurrency(v)
	})
	flag.IntVar(&o.Rounds, "rounds", 0, "rounds of each collector on each shape (default 1, 2 with -baseline: A B B A)")
	flag.BoolVar(&o.NoInject, "noinject", true, "add the rows of the collector with logprob injection off")
	flag.StringVar(&o.Agents, "agents", "", "the original agents' directory (hellodk/mlx-oc's cluster/, scripts/bench-agents.sh fetches it): the footprint runs them too")
	flag.StringVar(&o.Python, "python", "/usr/bin/python3", "the python that runs the original agents (Debian's, with python3-prometheus-client)")
	serveGo := flag.String(perf.GoProxyFlag, "", "`LISTEN=UPSTREAM`: be the Go proxy (mlxperf runs itself with it)")
	flag.Parse()
	if *serveGo != "" {
		listen, upstream, _ := strings.Cut(*serveGo, "=")
		if err := perf.ServeGoProxy(listen, upstream); err != nil {
			fmt.Fprintln(os.Stderr, "mlxperf: the Go proxy:", err)
			os.Exit(1)
		}
		return
	}
	var err error
	if o.Shapes, err = perf.ParseShapes(*shapes); err != nil {
		fmt.Fprintln(os.Stderr, "mlxperf:", err)
		os.Exit(2)
	}
	// Interrupted, the processes started so far are ended first: they
	// would hold the shipped config's ports.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		perf.EndStarted()
		os.Exit(130)
	}()
	if err := run(o, *mode); err != nil {
		fmt.Fprintln(os.Stderr, "mlxperf:", err)
		os.Exit(1)
	}
}

func run(o perf.Options, mode string) error {
	var err error
	if o.Baseline.Collector != "" {
		o.Baseline.Name = perf.PathBaseline
		if o.Baseline.RepoDir == "" {
			o.Baseline.RepoDir = filepath.Dir(filepath.Dir(o.Baseline.Collector))
		}
		if o.Rounds == 0 {
			o.Rounds = 2
		}
	}
	for _, p := range []*string{&o.Collector, &o.Mlxsim, &o.RepoDir, &o.ProfileDir, &o.Baseline.Collector, &o.Baseline.RepoDir, &o.Agents} {
		if *p == "" {
			continue
		}
		if *p, err = filepath.Abs(*p); err != nil {
			return err
		}
	}
	if o.ProfileDir != "" {
		if err := os.MkdirAll(o.ProfileDir, 0o755); err != nil {
			return err
		}
	}
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	var (
		run = &perf.ProxyRun{}
		fp  *perf.Footprint
	)
	if strings.Contains(mode, "proxy") {
		if run, err = perf.RunProxy(o, logf); err != nil {
			return err
		}
	}
	if strings.Contains(mode, "footprint") {
		f, err := perf.RunFootprint(o, logf)
		if err != nil {
			return err
		}
		fp = &f
	}
	if run.Table != nil {
		fmt.Printf("\nThe proxy: %d-token answers, logprob injection top 3 unless off, %s per load and path, %d round(s) averaged\n", run.Tokens, o.Cell, max(1, o.Rounds))
		for _, s := range o.Shapes {
			fmt.Printf("%s: %s\n", perf.PathProxy+s.Suffix, s.About)
		}
		if o.Baseline.Collector != "" {
			fmt.Printf("baseline: %s built from %s, its own config/, the same loads interleaved\n", o.Baseline.Collector, o.Baseline.Ref)
		}
		fmt.Println()
		for _, f := range run.Failed {
			fmt.Printf("NOT MEASURED: %s (its collector did not run; the log says why)\n", f)
		}
		perf.WriteProxyTable(os.Stdout, run)
		fmt.Println()
		perf.WriteChunkTable(os.Stdout, run)
		fmt.Println()
	}
	if fp != nil {
		fmt.Printf("\nThe distribution's footprint (the collector process; the engine it runs is not counted; the agents with the commands they run), %s idle and %s under load\n\n", o.Footprint, o.Footprint)
		perf.WriteFootprint(os.Stdout, *fp)
		fmt.Println()
	}
	var size int64
	if st, err := os.Stat(o.Collector); err == nil {
		size = st.Size()
	}
	perf.WriteGoals(os.Stdout, perf.Goals(run, fp, size))
	return nil
}
