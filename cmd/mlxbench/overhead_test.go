package main

import (
	"context"
	"io"
	"math"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/mlx-otelcol/mlx-otelcol/proxy"
	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

// startProxy runs the project's proxy in front of the engine at upstream
// (a base URL without /v1) until the test ends.
func startProxy(t *testing.T, upstream string) string {
	t.Helper()
	cfg := proxy.DefaultConfig()
	cfg.Upstream = upstream
	cfg.Model = simModel
	cfg.ProbeInterval = time.Hour
	p, err := proxy.New(cfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.Serve(ln)
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	return "http://" + ln.Addr().String() + "/v1"
}

// Direct and through the proxy, interleaved against one engine: both paths
// get the same share of requests, the proxy counts its share, and each
// row's added time is the proxy's figure minus the direct one. How much the
// proxy adds is a figure for make bench, not asserted here. Whichever the
// path, the engine's settings are floors: the first token takes a token
// time (5 ms at 200 tok/s) and the 16 tokens 80 ms; an inter-token gap is
// only positive (two chunks read together are close).
func TestOverheadThroughTheProxy(t *testing.T) {
	sim := startSim(t, mlxsim.Options{PrefillTPS: 2000, DecodeTPS: 200})
	via := startProxy(t, sim.URL[:len(sim.URL)-len("/v1")])
	dir := t.TempDir()
	res := runCmd(t, context.Background(), append([]string{"overhead", "--base-url", via, "--direct", sim.URL,
		"--concurrency", "2", "--max-requests", "8", "--settle", "0", "--max-tokens", "16"}, quiet(dir)...)...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	_, r, _ := onlyReport(t, dir)
	if len(r.Levels) != 2 || r.Levels[0].Name != "direct" || r.Levels[1].Name != "proxy" {
		t.Fatalf("levels %+v", r.Levels)
	}
	d, p := r.Levels[0].Summary, r.Levels[1].Summary
	if d.Requests+p.Requests != 8 || d.OK != d.Requests || p.OK != p.Requests || math.Abs(float64(d.Requests-p.Requests)) > 2 || d.ErrorRate > 0 || p.ErrorRate > 0 {
		t.Fatalf("direct %+v\nproxy %+v", d, p)
	}
	if len(r.Overhead) != 6 {
		t.Fatalf("overhead rows %+v", r.Overhead)
	}
	floor := map[string]float64{"ttft": 5, "e2e": 80}
	for _, o := range r.Overhead {
		least := floor[strings.Fields(o.Metric)[0]]
		if o.Direct <= least || o.Proxy <= least || math.Abs(o.Added-(o.Proxy-o.Direct)) > 1e-9 {
			t.Errorf("%s: direct %.2f proxy %.2f added %.2f ms", o.Metric, o.Direct, o.Proxy, o.Added)
		}
		t.Logf("%s: direct %.2f ms, proxy %.2f ms, added %+.2f ms", o.Metric, o.Direct, o.Proxy, o.Added)
	}
	// The proxy counted the proxy path's requests, no more.
	sc, err := promtext.Parse([]byte(getMetrics(t, strings.TrimSuffix(via, "/v1")+"/metrics")))
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := sc.Value("mlx_requests_total", "streaming", "true"); !ok || n != float64(p.Requests) {
		t.Errorf("the proxy counted %v streamed requests (found: %t), the proxy path sent %d", n, ok, p.Requests)
	}
	// Every request went through the proxy's or the engine's path with the
	// trace header; the proxy passes it on.
	for _, h := range sim.completionHeaders() {
		if h.Get("X-Mlx-Trace") != "1" {
			t.Fatalf("headers %v", h)
		}
	}
}

// overhead measures the proxy as a user meets it: its requests go out as
// origin user (scored, logprobs injected), where the other subcommands
// default to bench; --origin still overrides it.
func TestOverheadDefaultsToUserOrigin(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "user"},
		{[]string{"--origin", "bench"}, "bench"},
	} {
		sim := startSim(t, mlxsim.Options{PrefillTPS: 2000, DecodeTPS: 2000})
		via := startProxy(t, sim.URL[:len(sim.URL)-len("/v1")])
		args := append([]string{"overhead", "--base-url", via, "--direct", sim.URL,
			"--max-requests", "4", "--settle", "0", "--max-tokens", "4"}, tc.args...)
		res := runCmd(t, context.Background(), append(args, quiet(t.TempDir())...)...)
		if res.code != 0 {
			t.Fatalf("%v: exit %d\n%s", tc.args, res.code, res.stderr)
		}
		seen := 0
		for _, h := range sim.completionHeaders() {
			if o := h.Get(proxy.OriginHeader); o != "" {
				seen++
				if o != tc.want {
					t.Errorf("%v: %s %q, want %q", tc.args, proxy.OriginHeader, o, tc.want)
				}
			}
		}
		if seen == 0 {
			t.Errorf("%v: no request carried %s", tc.args, proxy.OriginHeader)
		}
		// The proxy counted its share under that origin.
		m := getMetrics(t, strings.TrimSuffix(via, "/v1")+"/metrics")
		counted := regexp.MustCompile(`(?m)^mlx_requests_total\{[^}]*origin="` + tc.want + `"[^}]*\} [1-9]`)
		if !counted.MatchString(m) {
			t.Errorf("%v: the proxy counted no origin=%q request:\n%s", tc.args, tc.want, m)
		}
	}
}

// The other subcommands keep origin bench: a load run stays out of the
// users' SLOs.
func TestLoadDefaultsToBenchOrigin(t *testing.T) {
	sim := startSim(t, mlxsim.Options{PrefillTPS: 2000, DecodeTPS: 2000})
	res := runCmd(t, context.Background(), append([]string{"load", "--base-url", sim.URL, "--sustain", "1", "--max-requests", "2", "--settle", "0", "--max-tokens", "4"}, quiet(t.TempDir())...)...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	hs := sim.completionHeaders()
	if len(hs) == 0 {
		t.Fatal("no request reached the engine")
	}
	for _, h := range hs {
		if o := h.Get(proxy.OriginHeader); o != "bench" {
			t.Errorf("%s %q, want bench", proxy.OriginHeader, o)
		}
	}
}

func getMetrics(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
