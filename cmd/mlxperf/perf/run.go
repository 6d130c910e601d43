package perf

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
	// ones (to try a change before making it).
	Overlays []string
}

// Path names, in the order the table prints them.
const (
	PathDirect    = "direct"
	PathNginx     = "nginx, no telemetry"
	PathGoProxy   = "Go proxy, no telemetry"
	PathProxy     = "mlx-otelcol"
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
	Tokens int // completion tokens of every answer
}

// env is the collector's environment in every run: its data in dir, its
// ports on loopback, spans and log records to the sink, and no trace store
// for the judge to read (its requests would be load of their own).
func collectorEnv(dir, mlxsim string, sink *SpanSink) []string {
	return []string{
		"MLX_DATA_DIR=" + dir,
		"MLX_LISTEN_HOST=127.0.0.1",
		"MLXSIM=" + mlxsim,
		"MLXSIM_LOAD_DELAY=0s",
		"MLX_JAEGER_OTLP=" + sink.Addr(),
		"MLX_VLOGS_URL=" + sink.LogsURL(),
		"MLX_JAEGER_QUERY=http://127.0.0.1:1",
		// The fast engine streams logprobs in its chunks, so every stream
		// is scored from them; the shipped config's 5 % destreaming is for
		// mlx_lm, which streams none (config/mlx.yaml), and would turn some
		// measured streams into non-streamed requests upstream.
		"MLX_LOGPROBS_STREAM_SAMPLE=0",
	}
}

// proxyOverlay points the proxy at the fast upstream, and with inject false
// turns logprob injection off.
func proxyOverlay(dir, upstream string, inject bool) (string, error) {
	y := "extensions:\n  mlx_proxy:\n    upstream: " + upstream + "\n"
	name := "bench-proxy.yaml"
	if !inject {
		y += "    confidence:\n      top_logprobs: 0\n"
		name = "bench-proxy-noinject.yaml"
	}
	p := filepath.Join(dir, name)
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

// ProxyURL is the shipped config's front door, with MLX_LISTEN_HOST=127.0.0.1.
const ProxyURL = "http://127.0.0.1:8080"

// RunProxy measures every cell on every path, and the chunk delays. Direct,
// nginx and the Go proxy are measured while the full collector runs (idle
// for them), each cell on the four paths back to back; the collector with injection
// off runs after, on its own.
func RunProxy(o Options, log func(string, ...any)) (*ProxyRun, error) {
	dir, err := os.MkdirTemp("", "mlxperf-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	up, err := StartUpstream()
	if err != nil {
		return nil, err
	}
	defer up.Close()
	upHost := mustHost(up.URL())
	ngDir := filepath.Join(dir, "nginx")
	if err := os.MkdirAll(ngDir, 0o755); err != nil {
		return nil, err
	}
	ng, err := StartNginx(o.Nginx, ngDir, upHost)
	if err != nil {
		return nil, err
	}
	defer ng.Stop()
	gp, err := StartGoProxy(up.URL())
	if err != nil {
		return nil, err
	}
	defer gp.Stop()
	sink, err := StartSpanSink()
	if err != nil {
		return nil, err
	}
	defer sink.Stop()

	table := ProxyTable{}
	chunks := ChunkTable{}
	client := NewClient()
	for _, inject := range []bool{true, false} {
		overlay, err := proxyOverlay(dir, up.URL(), inject)
		if err != nil {
			return nil, err
		}
		data := filepath.Join(dir, fmt.Sprintf("data-%v", inject))
		col, err := StartCollector(o.Collector, o.RepoDir, o.configs(overlay), collectorEnv(data, o.Mlxsim, sink))
		if err != nil {
			return nil, err
		}
		paths := map[string]string{PathProxyNoLP: ProxyURL}
		order := []string{PathProxyNoLP}
		if inject {
			paths = map[string]string{PathDirect: up.URL(), PathNginx: ng.URL(), PathGoProxy: gp.URL(), PathProxy: ProxyURL}
			order = []string{PathDirect, PathNginx, PathGoProxy, PathProxy}
		}
		for _, cell := range Cells {
			for _, name := range order {
				var saved chan error
				prefix := "" // the full proxy's profiles; injection off's are noinject-*
				if name == PathProxyNoLP {
					prefix = "noinject-"
				}
				if o.ProfileDir != "" && paths[name] == ProxyURL {
					saved = make(chan error, 1)
					go func() { saved <- saveCPUProfile(o.ProfileDir, prefix, cell, o.Cell) }()
				}
				var before Drops
				if paths[name] == ProxyURL {
					before = ReadDrops(client, ProxyURL)
				}
				r := Drive(client, paths[name], cell, o.Cell)
				if paths[name] == ProxyURL {
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
				if table[name] == nil {
					table[name] = map[Cell]Result{}
				}
				table[name][cell] = r
				log("%-28s %-15s %8.0f rps  p50 %7.2f ms  p99 %7.2f ms  failed %d  dropped: scoring %.0f spans %.0f access %.0f",
					name, cell, r.RPS, r.P50, r.P99, r.Failed, r.Dropped.Scoring, r.Dropped.Spans, r.Dropped.Access)
				if r.FirstErr != nil {
					log("  first error: %v", r.FirstErr)
				}
			}
		}
		// The chunk delays of both collectors: the full proxy's streams are
		// scored from their chunks (upstream.go record), injection off's
		// are relayed as they come.
		{
			up.SetPace(5 * time.Millisecond)
			for _, name := range order {
				d, err := ChunkDelays(client, up, paths[name], 16, 160)
				if err != nil {
					col.Stop()
					return nil, fmt.Errorf("chunk delays through %s: %w", name, err)
				}
				chunks[name] = [3]float64{loadgen.Percentile(d, 0.5), loadgen.Percentile(d, 0.99), loadgen.Percentile(d, 1)}
				log("%-28s chunk delay p50 %.3f ms  p99 %.3f ms  max %.3f ms (%d chunks)", name, chunks[name][0], chunks[name][1], chunks[name][2], len(d))
			}
			up.SetPace(0)
			if inject {
				log("streams scored from their chunks: %s", streamsScored(client))
			}
			log("spans exported to the sink so far: %d, log records %d", sink.Spans(), sink.Records())
		}
		col.Stop()
	}
	return &ProxyRun{Table: table, Chunks: chunks, Tokens: up.Tokens()}, nil
}

func mustHost(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		panic(err)
	}
	return p.Host
}

// streamsScored is mlx_confidence_scored_total{source="streamed"} on the
// proxy's /metrics, as text ("?" with why when it cannot be read).
func streamsScored(client *http.Client) string {
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
			if l.GetName() == "source" && l.GetValue() == "streamed" {
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
