package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mlxbench/bench"
	"github.com/mlx-otelcol/mlx-otelcol/cmd/mlxbench/bench/htmlreport"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

// common are the flags of every measuring command.
type common struct {
	fs *flag.FlagSet

	baseURL     string
	model       string
	apiKey      string
	label       string
	outDir      string
	html        bool
	noTrace     bool
	origin      string
	timeout     time.Duration
	maxTokens   int
	temperature float64
	noUsage     bool
	noCacheBust bool
	seed        uint64
	progress    string

	snapInterval time.Duration
	proxyMetrics string
	hwMetrics    string
	kvMetrics    string
	supMetrics   string
	snapSeries   string
	versionURL   string
}

func newCommon(name, defaultLabel string, stderr io.Writer) *common {
	c := &common{fs: flag.NewFlagSet(name, flag.ContinueOnError)}
	fs := c.fs
	fs.SetOutput(stderr)
	fs.StringVar(&c.baseURL, "base-url", "http://127.0.0.1:8080/v1", "OpenAI-compatible base URL (the proxy; the engine is :8081)")
	fs.StringVar(&c.model, "model", "", "model to ask for (default: the first of /v1/models, else default_model)")
	fs.StringVar(&c.apiKey, "api-key", os.Getenv("OPENAI_API_KEY"), "bearer token, if the endpoint wants one (default $OPENAI_API_KEY)")
	fs.StringVar(&c.label, "label", defaultLabel, "report name: <out-dir>/<label>-<time>.json")
	fs.StringVar(&c.outDir, "out-dir", "bench-reports", `where reports go ("" = write none)`)
	fs.BoolVar(&c.html, "html", false, "also write the HTML report with plots beside the JSON")
	fs.BoolVar(&c.noTrace, "no-trace", false, "send X-Mlx-Trace: 0 (default 1: the proxy traces every request)")
	fs.StringVar(&c.origin, "origin", "bench", `X-Mlx-Origin: the proxy counts the run under origin=<this> and scores only "user" ("" = send none; overhead defaults to user)`)
	fs.DurationVar(&c.timeout, "timeout", 2*time.Minute, "per-request limit, from send to last byte")
	fs.IntVar(&c.maxTokens, "max-tokens", 256, "max_tokens of each request")
	fs.Float64Var(&c.temperature, "temperature", 0, "sampling temperature")
	fs.BoolVar(&c.noUsage, "no-usage", false, "do not ask streams for the usage chunk (count output chunks instead)")
	fs.BoolVar(&c.noCacheBust, "no-cache-bust", false, "send the same prompt each time (the engine's prompt cache then skips prefill)")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the Poisson arrivals")
	fs.StringVar(&c.progress, "progress", "auto", "auto (bar on a terminal, a line per level otherwise), bar, plain or off")
	fs.DurationVar(&c.snapInterval, "snapshot-interval", 5*time.Second, "scrape the distribution's series this often during the run (0 = never)")
	fs.StringVar(&c.proxyMetrics, "proxy-metrics", "http://127.0.0.1:8080/metrics", `proxy series (mlx_in_flight, ...) ("" = skip)`)
	fs.StringVar(&c.hwMetrics, "hw-metrics", "http://127.0.0.1:9102/metrics", `hardware series (GPU memory, ...) ("" = skip)`)
	fs.StringVar(&c.kvMetrics, "kv-metrics", "http://127.0.0.1:9104/metrics", `KV-cache series ("" = skip)`)
	fs.StringVar(&c.supMetrics, "supervisor-metrics", "http://127.0.0.1:9105/metrics", `engine state and restarts ("" = skip)`)
	fs.StringVar(&c.snapSeries, "snapshot-series", strings.Join(bench.DefaultSnapshotFamilies, ","), `metric families to keep ("name" or "prefix*"; "*" = all)`)
	fs.StringVar(&c.versionURL, "version-url", "http://127.0.0.1:8888/metrics", `the collector's telemetry, for its service.version ("" = skip)`)
	return c
}

// parse parses args, refusing positional leftovers.
func (c *common) parse(args []string) error {
	if err := c.fs.Parse(args); err != nil {
		return err
	}
	if c.fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %s", strings.Join(c.fs.Args(), " "))
	}
	return nil
}

// session is one measuring run: the target, the clock, the samples, the
// snapshots, the progress display.
type session struct {
	c       *common
	kind    string
	args    []string
	stdout  io.Writer
	stderr  io.Writer
	target  *bench.Target
	also    *bench.Target // a second target whose answers tell the engine (overhead)
	info    bench.TargetInfo
	rec     *bench.Recorder
	prog    *bench.Progress
	snap    *bench.Snapshotter
	level   atomic.Int64
	runID   string
	started time.Time

	snapCancel context.CancelFunc
	snapDone   sync.WaitGroup
}

func (c *common) targetConfig(baseURL string) bench.TargetConfig {
	return bench.TargetConfig{
		BaseURL: baseURL, APIKey: c.apiKey, Model: c.model,
		Trace: !c.noTrace, Origin: c.origin, Timeout: c.timeout, Usage: !c.noUsage,
	}
}

// start asks the target for its models, starts the clock and the
// snapshots.
func (c *common) start(ctx context.Context, kind string, args []string, stdout, stderr io.Writer) *session {
	s := &session{c: c, kind: kind, args: args, stdout: stdout, stderr: stderr, started: time.Now()}
	s.runID = bench.RunID()
	s.info = bench.TargetInfo{BaseURL: c.baseURL}
	probe := bench.NewTarget(c.targetConfig(c.baseURL))
	raw, ids, err := probe.Models(ctx)
	probe.Close()
	if err != nil {
		s.info.ModelsError = err.Error()
	} else {
		s.info.Models = json.RawMessage(raw)
	}
	if c.model == "" {
		c.model = "default_model"
		if len(ids) > 0 {
			c.model = ids[0]
		}
	}
	s.info.Model = c.model
	s.target = bench.NewTarget(c.targetConfig(c.baseURL))

	switch mode := c.progress; {
	case mode == "off":
		s.prog = bench.NewProgress(nil, false)
	case mode == "bar" || mode == "auto" && bench.IsTerminal(stderr):
		s.prog = bench.NewProgress(stderr, true)
	default:
		s.prog = bench.NewProgress(stderr, false)
	}
	s.rec = bench.NewRecorder()
	s.rec.OnSample = s.prog.Add
	s.level.Store(-1)
	s.snap = &bench.Snapshotter{
		Sources:  c.sources(),
		Families: c.families(),
		Interval: c.snapInterval,
		Rec:      s.rec,
		Level:    func() int { return int(s.level.Load()) },
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.snapCancel = cancel
	s.snapDone.Add(1)
	go func() {
		defer s.snapDone.Done()
		s.snap.Run(sctx)
	}()
	s.prog.Printf("mlxbench %s: %s, model %s\n", kind, c.baseURL, c.model)
	return s
}

func (c *common) sources() []bench.SnapshotSource {
	var out []bench.SnapshotSource
	for _, s := range []bench.SnapshotSource{{Name: "proxy", URL: c.proxyMetrics}, {Name: "hw", URL: c.hwMetrics}, {Name: "kv", URL: c.kvMetrics}, {Name: "supervisor", URL: c.supMetrics}} {
		if s.URL != "" {
			out = append(out, s)
		}
	}
	return out
}

func (c *common) families() []string {
	if c.snapSeries == "*" {
		return nil
	}
	return splitList(c.snapSeries)
}

// call is a plain user request: the prompt, made unique per request
// unless --no-cache-bust.
func (s *session) call(prompt string, n int, stream bool) bench.Call {
	text := prompt
	if !s.c.noCacheBust {
		text = bench.Nonce(s.runID, n) + prompt
	}
	return bench.Call{
		Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)},
		MaxTokens: s.c.maxTokens, Temperature: s.c.temperature, Stream: stream,
	}
}

// finish stops the snapshots, writes the report (and its HTML) and prints
// where. It returns the exit code: 0, or 130 for an interrupted run.
func (s *session) finish(ctx context.Context, levels []bench.Level, extra func(*bench.Report)) int {
	s.snapCancel()
	s.snapDone.Wait()
	s.target.Close()
	samples := s.rec.Samples()
	r := &bench.Report{
		Schema:      bench.ReportSchema,
		Kind:        s.kind,
		Label:       s.c.label,
		Started:     s.started,
		Finished:    time.Now(),
		Interrupted: ctx.Err() != nil,
		Args:        redactArgs(s.args),
		Flags:       flagValues(s.c.fs),
		Target:      s.info,
		Versions:    bench.Versions{Mlxbench: fullVersion(), Go: runtime.Version()},
		Levels:      levels,
		Snapshots:   s.snap.Snapshots(),
	}
	s.fillEngine(r)
	r.Versions.Distribution, r.Versions.DistributionError = distributionVersion(s.c.versionURL)
	if extra != nil {
		extra(r)
	}
	packed, err := bench.Pack(samples)
	if err != nil {
		fmt.Fprintln(s.stderr, "mlxbench: packing samples:", err)
		return 1
	}
	r.Samples = packed
	code := 0
	if r.Interrupted {
		fmt.Fprintln(s.stderr, "mlxbench: interrupted; the report is partial")
		code = 130
	}
	if s.c.outDir == "" {
		return code
	}
	path := bench.ReportPath(s.c.outDir, s.c.label, s.started)
	if err := bench.WriteReport(path, r); err != nil {
		fmt.Fprintln(s.stderr, "mlxbench: writing the report:", err)
		return 1
	}
	fmt.Fprintln(s.stdout, "report:", path)
	if s.c.html {
		hp := htmlreport.PathFor(path)
		if err := htmlreport.Write(hp, r, samples); err != nil {
			fmt.Fprintln(s.stderr, "mlxbench: writing the HTML report:", err)
			return 1
		}
		fmt.Fprintln(s.stdout, "html:  ", hp)
	}
	return code
}

// fillEngine records what the answers said about the engine.
func (s *session) fillEngine(r *bench.Report) {
	r.Target.Fingerprint = s.target.Fingerprint()
	r.Target.Server = s.target.Server()
	if r.Target.Fingerprint == "" && s.also != nil {
		r.Target.Fingerprint = s.also.Fingerprint()
	}
}

// distributionVersion reads service_version from the collector's own
// telemetry (target_info, or any series carrying the label).
func distributionVersion(url string) (string, string) {
	if url == "" {
		return "", "not asked (--version-url \"\")"
	}
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{Proxy: nil}}
	defer client.CloseIdleConnections()
	resp, err := client.Get(url)
	if err != nil {
		return "", err.Error()
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return "", err.Error()
	}
	sc, err := promtext.Parse(b)
	if err != nil {
		return "", err.Error()
	}
	for _, name := range append([]string{"target_info"}, sc.Names()...) {
		for _, m := range sc.Families[name].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "service_version" && l.GetValue() != "" {
					return l.GetValue(), ""
				}
			}
		}
	}
	return "", "no service_version label at " + url
}

// flagValues records every flag's effective value.
func flagValues(fs *flag.FlagSet) map[string]string {
	out := map[string]string{}
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "api-key" {
			if f.Value.String() != "" {
				out[f.Name] = "(set)"
			}
			return
		}
		out[f.Name] = f.Value.String()
	})
	return out
}

// redactArgs hides the value of --api-key in the recorded command line.
func redactArgs(args []string) []string {
	out := append([]string(nil), args...)
	for i, a := range out {
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "api-key" {
			continue
		}
		if hasValue {
			out[i] = a[:strings.Index(a, "=")+1] + "(set)"
		} else if i+1 < len(out) {
			out[i+1] = "(set)"
		}
	}
	return out
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, p := range splitList(s) {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive integer", p)
		}
		out = append(out, n)
	}
	return out, nil
}

func parseFloats(s string) ([]float64, error) {
	var out []float64
	for _, p := range splitList(s) {
		f, err := strconv.ParseFloat(p, 64)
		if err != nil || f <= 0 {
			return nil, fmt.Errorf("%q is not a positive number", p)
		}
		out = append(out, f)
	}
	return out, nil
}
