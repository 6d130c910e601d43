// Command mlxperf is `make bench`'s runner: the proxy beside Debian's nginx,
// beside a bare Go httputil.ReverseProxy (mlxperf itself, run again with
// -serve-goproxy) and beside no proxy, under the same load in one run, and
// the whole distribution's footprint idle and under a realistic load, with
// the relays' CPU under the same load (cmd/mlxperf/perf). It prints tables
// of figures and judges them against issue 32's goals; it is a benchmark
// and exits 0 whatever the figures are.
//
//	mlxperf [-mode proxy,footprint] [-cell 3s] [-footprint 60s]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	if err := run(o, *mode); err != nil {
		fmt.Fprintln(os.Stderr, "mlxperf:", err)
		os.Exit(1)
	}
}

func run(o perf.Options, mode string) error {
	var err error
	for _, p := range []*string{&o.Collector, &o.Mlxsim, &o.RepoDir, &o.ProfileDir} {
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
		fmt.Printf("\nThe proxy: %d-token answers, logprob injection top 3 unless off, %s per load and path\n\n", run.Tokens, o.Cell)
		perf.WriteProxyTable(os.Stdout, run.Table)
		fmt.Println()
		perf.WriteChunkTable(os.Stdout, run.Chunks)
		fmt.Println()
	}
	if fp != nil {
		fmt.Printf("\nThe distribution's footprint (the collector process; the engine it runs is not counted), %s idle and %s under load\n\n", o.Footprint, o.Footprint)
		perf.WriteFootprint(os.Stdout, *fp)
		fmt.Println()
	}
	var size int64
	if st, err := os.Stat(o.Collector); err == nil {
		size = st.Size()
	}
	perf.WriteGoals(os.Stdout, perf.Goals(run.Table, run.Chunks, fp, size))
	return nil
}
