package perf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/loadgen"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

// Options say what to run and with which binaries.
type Options struct {
	Collector string // the built distribution
	Mlxsim    string // the simulated engine, for the footprint's engine
	Nginx     string
	RepoDir   string // where config/ is; the collector runs there
	Cell      time.Duration
	Footprint time.Duration // each of the idle and the load windows
	// ProfileDir, when set, runs the collector with config/profile.yaml
	// and saves its CPU and allocation profiles there, one per load on
	// the full proxy.
	ProfileDir string
	// Overlays are more config files for the collector, after the shipped
	// ones (to try a change before making it); the baseline runs without.
	Overlays []string
	// Shapes are the engines the proxy table runs behind, the first the
	// one the goals read (ShapeMLXLM by default: the path users take).
	Shapes []Shape
	// Baseline, when set, is a second build of the collector (another git
	// ref, scripts/bench-baseline.sh) run on the same loads, interleaved
	// with this one: its rows print the ratio of this build to it.
	Baseline Build
	// Rounds is how many times each build runs each shape's loads; with a
	// baseline the order alternates (A B B A ...), so a drift of the
	// machine weighs on both builds alike. Figures are the rounds' mean.
	Rounds int
	// NoInject adds the rows of the collector with logprob injection off.
	NoInject bool
	// Agents, when set, is the original Python stack's cluster/ directory
	// (hellodk/mlx-oc), measured in the footprint beside the collector.
	Agents string
	// Python runs the agents: Debian's python3, where install-deps.sh
	// --bench installs their one dependency (python3-prometheus-client).
	Python string
}

// Build is one build of the collector and the repository it runs in (its
// own config/).
type Build struct {
	Name      string // the row's name: PathProxy, or PathBaseline
	Ref       string // the git ref it was built from, for the header
	Collector string
	RepoDir   string
	Overlays  []string
}

// Path names, in the order the table prints them.
const (
	PathDirect    = "direct"
	PathNginx     = "nginx, no telemetry"
	PathGoProxy   = "Go proxy, no telemetry"
	PathProxy     = "mlx-otelcol"
	PathBaseline  = "baseline"
	PathProxyNoLP = "mlx-otelcol, injection off"
)

// Cells are the loads of the proxy table.
var Cells = []Cell{{false, 1}, {false, 16}, {false, 64}, {true, 1}, {true, 16}, {true, 64}}

// ProxyTable is the proxy table's figures: path -> cell -> result.
type ProxyTable map[string]map[Cell]Result

// ChunkTable is each path's chunk delays at c=16 (ms): p50, p99, max.
type ChunkTable map[string][3]float64

// ProxyRun is what RunProxy measured.
type ProxyRun struct {
	Table  ProxyTable
	Chunks ChunkTable
	Rows   []Row    // the collector rows, in the order they print
	Tokens int      // completion tokens of every answer
	Failed []string // sessions that could not run (their rows are missing)
}

// Row is one collector row of the tables, and the baseline row it is
// compared with ("" for none).
type Row struct{ Name, Baseline string }

// env is the collector's environment in every run: its data in dir, its
// ports on loopback, spans and log records to the sink, and no trace store
// for the judge to read (its requests would be load of their own). The
// shape's setting comes last.
func collectorEnv(dir, mlxsim string, sink *SpanSink, shape Shape) []string {
	return append([]string{
		"MLX_DATA_DIR=" + dir,
		"MLX_LISTEN_HOST=127.0.0.1",
		"MLXSIM=" + mlxsim,
		"MLXSIM_LOAD_DELAY=0s",
		"MLX_JAEGER_OTLP=" + sink.Addr(),
		"MLX_VLOGS_URL=" + sink.LogsURL(),
		"MLX_JAEGER_QUERY=http://127.0.0.1:1",
	}, shape.Env...)
}

// proxyOverlay points the proxy at the fast upstream, and with inject false
// turns logprob injection off. The load generator is one client on
// loopback standing for as many users as the cell's concurrency: the
// shipped cap on one client's requests in progress (32) would refuse the
// rest of c=64 with 429, so it is raised to the largest load's (the cells'
// and the chunk delays').
// A build from before that cap has no such setting (and would refuse it):
// perClientCap says whether the build's proxy knows it.
func proxyOverlay(dir, upstream string, inject, perClientCap bool) (string, error) {
	top := chunkStreams
	for _, c := range Cells {
		top = max(top, c.Concurrency)
	}
	y := "extensions:\n  mlx_proxy:\n    upstream: " + upstream + "\n"
	if perClientCap {
		y += "    max_concurrent_requests_per_client: " + strconv.Itoa(top) + "\n"
	}
	name := "bench-proxy-" + mustHost(upstream) + ".yaml"
	if !inject {
		// Nothing scored: no stream destreamed either (the shipped 5 %
		// needs logprobs to ask for).
		y += "    confidence:\n      top_logprobs: 0\n      destream_fraction: 0\n"
		name = "bench-proxy-noinject-" + mustHost(upstream) + ".yaml"
	}
	p := filepath.Join(dir, strings.ReplaceAll(name, ":", "-"))
	return p, os.WriteFile(p, []byte(y), 0o644)
}

// shippedConfigs are the shipped config and the simulated engine's overlay.
var shippedConfigs = []string{"config/mlx.yaml", "config/demo.yaml"}

// configs are the collector's config files: the shipped ones, the user's
// overlays, then the run's own, and the profiling overlay with ProfileDir.
func (o Options) configs(own ...string) []string {
	c := append(append(slices.Clone(shippedConfigs), o.Overlays...), own...)
	if o.ProfileDir != "" {
		c = append(c, "config/profile.yaml")
	}
	return c
}

// chunkStreams are the streams at once of the chunk delay table.
const chunkStreams = 16

// ProxyURL is the shipped config's front door, with MLX_LISTEN_HOST=127.0.0.1.
const ProxyURL = "http://127.0.0.1:8080"

// session is one collector run over every cell: a build behind a shape.
type session struct {
	build  Build
	shape  Shape
	inject bool
	relays bool // direct, nginx and the Go proxy are measured beside it
	row    string
}

// sessions orders the collector runs: round by round, each shape, this
// build and the baseline alternating (A B, then B A), so that a drift of
// the shared machine weighs on every row alike; then injection off. The
// relays are measured in the first one, back to back with the collector on
// each cell.
func (o Options) sessions() ([]session, []Row) {
	this := Build{Name: PathProxy, Collector: o.Collector, RepoDir: o.RepoDir, Overlays: o.Overlays}
	var (
		out  []session
		rows []Row
	)
	for _, shape := range o.Shapes {
		row := Row{Name: PathProxy + shape.Suffix}
		if o.Baseline.Collector != "" {
			row.Baseline = PathBaseline + shape.Suffix
		}
		rows = append(rows, row)
		if row.Baseline != "" {
			rows = append(rows, Row{Name: row.Baseline})
		}
	}
	pair := []Build{this}
	if o.Baseline.Collector != "" {
		pair = append(pair, o.Baseline)
	}
	for r := range max(1, o.Rounds) {
		order := slices.Clone(pair)
		if r%2 == 1 {
			slices.Reverse(order)
		}
		for _, shape := range o.Shapes {
			for _, b := range order {
				out = append(out, session{build: b, shape: shape, inject: true, row: b.Name + shape.Suffix})
			}
		}
	}
	if o.NoInject {
		out = append(out, session{build: this, shape: o.Shapes[0], row: PathProxyNoLP})
		rows = append(rows, Row{Name: PathProxyNoLP})
	}
	out[0].relays = true
	return out, rows
}

// RunProxy measures every cell on every path, and the chunk delays. Direct,
// nginx and the Go proxy are measured while the first collector runs (idle
// for them), each cell on the four paths back to back; the other
// collectors (the other shapes, the baseline, injection off) run after,
// each on its own.
func RunProxy(o Options, log func(string, ...any)) (*ProxyRun, error) {
	dir, err := os.MkdirTemp("", "mlxperf-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	ups := map[string]*Upstream{}
	for _, shape := range o.Shapes {
		up, err := StartUpstream(shape)
		if err != nil {
			return nil, err
		}
		defer up.Close()
		ups[shape.Key] = up
	}
	// The relays' clients never ask for logprobs: every shape answers them
	// alike, so they relay the first shape's engine.
	relayUp := ups[o.Shapes[0].Key]
	ngDir := filepath.Join(dir, "nginx")
	if err := os.MkdirAll(ngDir, 0o755); err != nil {
		return nil, err
	}
	ng, err := StartNginx(o.Nginx, ngDir, mustHost(relayUp.URL()))
	if err != nil {
		return nil, err
	}
	defer ng.Stop()
	gp, err := StartGoProxy(relayUp.URL())
	if err != nil {
		return nil, err
	}
	defer gp.Stop()
	sink, err := StartSpanSink()
	if err != nil {
		return nil, err
	}
	defer sink.Stop()

	acc := &accumulator{table: map[string]map[Cell][]Result{}, chunks: map[string][][3]float64{}}
	client := NewClient()
	sessions, rows := o.sessions()
	var failed []string
	for i, s := range sessions {
		log("session %d of %d: %s", i+1, len(sessions), s.row)
		up := ups[s.shape.Key]
		if err := runSession(o, s, up, relayUp, ng, gp, sink, client, dir, i, acc, log); err != nil {
			if i == 0 {
				return nil, err
			}
			// The rows measured so far still print; this one is missing.
			log("session %s failed, its rows are left out: %v", s.row, err)
			failed = append(failed, s.row)
		}
	}
	return &ProxyRun{Table: acc.mean(), Chunks: acc.meanChunks(), Rows: rows, Tokens: relayUp.Tokens(), Failed: failed}, nil
}

// runSession starts the session's collector, drives every cell through it
// (and through the relays beside it when the session has them), then the
// chunk delays, and stops it.
func runSession(o Options, s session, up, relayUp *Upstream, ng *Nginx, gp *GoProxy, sink *SpanSink,
	client *http.Client, dir string, n int, acc *accumulator, log func(string, ...any)) error {
	src, _ := os.ReadFile(filepath.Join(s.build.RepoDir, "proxy", "config.go"))
	overlay, err := proxyOverlay(dir, up.URL(), s.inject, bytes.Contains(src, []byte(`"max_concurrent_requests_per_client"`)))
	if err != nil {
		return err
	}
	bo := o
	bo.Overlays = s.build.Overlays
	data := filepath.Join(dir, fmt.Sprintf("data-%d", n))
	col, err := StartCollector(s.build.Collector, s.build.RepoDir, bo.configs(overlay), collectorEnv(data, o.Mlxsim, sink, s.shape))
	if err != nil {
		return fmt.Errorf("%s: %w", s.row, err)
	}
	defer col.Stop()
	paths := map[string]string{s.row: ProxyURL}
	order := []string{s.row}
	if s.relays {
		paths[PathDirect], paths[PathNginx], paths[PathGoProxy] = relayUp.URL(), ng.URL(), gp.URL()
		order = []string{PathDirect, PathNginx, PathGoProxy, s.row}
	}
	// Each path's processes, for its CPU per request.
	procs := map[string]func() (ProcSample, error){
		s.row: func() (ProcSample, error) { return ReadProc(col.Pid()) },
	}
	if s.relays {
		procs[PathNginx] = func() (ProcSample, error) { return ReadGroup(ng.Pid()) }
		procs[PathGoProxy] = func() (ProcSample, error) { return ReadProc(gp.Pid()) }
	}
	// Profiles: the default row's, and injection off's as noinject-*.
	profile := map[string]string{PathProxy: "", PathProxyNoLP: "noinject-"}
	for _, cell := range Cells {
		for _, name := range order {
			var saved chan error
			prefix, profiled := profile[name]
			profiled = profiled && o.ProfileDir != ""
			if profiled {
				saved = make(chan error, 1)
				go func() { saved <- saveCPUProfile(o.ProfileDir, prefix, cell, o.Cell) }()
			}
			var before Drops
			if name == s.row {
				before = ReadDrops(client, ProxyURL)
			}
			var cpu0 ProcSample
			read, measured := procs[name]
			if measured {
				cpu0, err = read()
				measured = err == nil
			}
			r := Drive(client, paths[name], cell, o.Cell)
			if measured {
				if cpu1, err := read(); err == nil && r.Requests > 0 {
					r.CPUPerReq = float64((cpu1.CPU - cpu0.CPU).Microseconds()) / float64(r.Requests)
				}
			}
			if name == s.row {
				if ps, err := ReadProc(col.Pid()); err == nil {
					r.RSSKiB = ps.RSSKiB
				}
				r.Dropped = ReadDrops(client, ProxyURL).Sub(before)
			}
			if saved != nil {
				if err := errors.Join(<-saved, saveAllocs(o.ProfileDir, prefix, cell)); err != nil {
					log("profile: %v", err)
				}
			}
			acc.add(name, cell, r)
			log("%-45s %-15s %8.0f rps  p50 %7.2f ms  p99 %7.2f ms  cpu %6.0f µs/req  failed %d  dropped: scoring %.0f spans %.0f access %.0f",
				name, cell, r.RPS, r.P50, r.P99, r.CPUPerReq, r.Failed, r.Dropped.Scoring, r.Dropped.Spans, r.Dropped.Access)
			if r.FirstErr != nil {
				log("  first error: %v", r.FirstErr)
			}
		}
	}
	// The chunk delays: streams scored from their chunks behind an engine
	// that streams logprobs, relayed as they come behind mlx_lm (but the
	// destreamed share, whose chunks are written by the proxy at once).
	up.SetPace(5 * time.Millisecond)
	defer up.SetPace(0)
	for _, name := range order {
		target := up
		if name != s.row {
			target = relayUp
			target.SetPace(5 * time.Millisecond)
		}
		d, destreamed, err := ChunkDelays(client, target, paths[name], chunkStreams, 160)
		if target != up {
			target.SetPace(0)
		}
		if err != nil {
			return fmt.Errorf("chunk delays through %s: %w", name, err)
		}
		c := [3]float64{loadgen.Percentile(d, 0.5), loadgen.Percentile(d, 0.99), loadgen.Percentile(d, 1)}
		acc.chunks[name] = append(acc.chunks[name], c)
		log("%-45s chunk delay p50 %.3f ms  p99 %.3f ms  max %.3f ms (%d chunks; %d streams destreamed, left out)", name, c[0], c[1], c[2], len(d), destreamed)
	}
	log("streams scored: from their chunks %s, destreamed %s", scored(client, "streamed"), scored(client, "destreamed"))
	log("spans exported to the sink so far: %d, log records %d", sink.Spans(), sink.Records())
	return nil
}

// accumulator gathers the rounds' results per path and cell.
type accumulator struct {
	table  map[string]map[Cell][]Result
	chunks map[string][][3]float64
}

func (a *accumulator) add(name string, cell Cell, r Result) {
	if a.table[name] == nil {
		a.table[name] = map[Cell][]Result{}
	}
	a.table[name][cell] = append(a.table[name][cell], r)
}

// mean is each path's and cell's rounds averaged: throughput and latency
// percentiles the mean of the rounds', counts summed, RSS the largest.
func (a *accumulator) mean() ProxyTable {
	t := ProxyTable{}
	for name, cells := range a.table {
		t[name] = map[Cell]Result{}
		for cell, rs := range cells {
			t[name][cell] = meanResult(rs)
		}
	}
	return t
}

func meanResult(rs []Result) Result {
	var m Result
	for _, r := range rs {
		m.Requests += r.Requests
		m.Failed += r.Failed
		if m.FirstErr == nil {
			m.FirstErr = r.FirstErr
		}
		m.RPS += r.RPS / float64(len(rs))
		m.P50 += r.P50 / float64(len(rs))
		m.P99 += r.P99 / float64(len(rs))
		m.CPUPerReq += r.CPUPerReq / float64(len(rs))
		m.RSSKiB = max(m.RSSKiB, r.RSSKiB)
		m.Dropped = Drops{m.Dropped.Scoring + r.Dropped.Scoring, m.Dropped.Spans + r.Dropped.Spans, m.Dropped.Access + r.Dropped.Access}
	}
	return m
}

func (a *accumulator) meanChunks() ChunkTable {
	c := ChunkTable{}
	for name, cs := range a.chunks {
		var m [3]float64
		for _, x := range cs {
			for i := range m {
				m[i] += x[i] / float64(len(cs))
			}
		}
		c[name] = m
	}
	return c
}

func mustHost(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		panic(err)
	}
	return p.Host
}

// scored is mlx_confidence_scored_total{source=source} on the proxy's
// /metrics, as text ("?" with why when it cannot be read).
func scored(client *http.Client, source string) string {
	resp, err := client.Get(ProxyURL + "/metrics")
	if err != nil {
		return "? (" + err.Error() + ")"
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "? (" + err.Error() + ")"
	}
	sc, err := promtext.Parse(b)
	if err != nil {
		return "? (" + err.Error() + ")"
	}
	total, found := 0.0, false
	for _, m := range sc.Families["mlx_confidence_scored_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "source" && l.GetValue() == source {
				total += m.GetCounter().GetValue()
				found = true
			}
		}
	}
	if !found {
		return "? (no such series)"
	}
	return strconv.FormatFloat(total, 'f', -1, 64)
}
