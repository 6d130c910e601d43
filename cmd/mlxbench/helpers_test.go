package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mlxbench/bench"
	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
)

const simModel = "mlx-community/Qwen3-1.7B-4bit"

// simServer is the simulated engine on loopback, with the headers of every
// completion request it got.
type simServer struct {
	URL string // base URL, .../v1

	mu      sync.Mutex
	headers []http.Header
}

func (s *simServer) completionHeaders() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.headers...)
}

func startSim(t *testing.T, o mlxsim.Options) *simServer {
	t.Helper()
	if o.Model == "" {
		o.Model = simModel
	}
	e := mlxsim.New(o, io.Discard)
	s := &simServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			s.mu.Lock()
			s.headers = append(s.headers, r.Header.Clone())
			s.mu.Unlock()
		}
		e.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(e.Close)
	s.URL = srv.URL + "/v1"
	return s
}

// metricsServer stands in for the distribution's /metrics ports and the
// collector's telemetry.
func metricsServer(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/telemetry":
			fmt.Fprint(w, "# TYPE target_info gauge\ntarget_info{service_name=\"mlx-otelcol\",service_version=\"0.1.0\"} 1\n")
		default:
			fmt.Fprint(w, "# TYPE mlx_in_flight gauge\nmlx_in_flight{model=\"m\"} 2\n# TYPE mlx_server_state gauge\nmlx_server_state 1\n")
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// quiet are the flags every test run gets: no scrapes of real ports, no
// progress bar, reports in dir.
func quiet(dir string) []string {
	return []string{"--out-dir", dir, "--progress", "plain", "--snapshot-interval", "0", "--version-url", "",
		"--proxy-metrics", "", "--hw-metrics", "", "--kv-metrics", "", "--supervisor-metrics", ""}
}

type result struct {
	code           int
	stdout, stderr string
}

func runCmd(t *testing.T, ctx context.Context, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(ctx, args, &out, &errb)
	return result{code, out.String(), errb.String()}
}

// onlyReport reads the one report in dir.
func onlyReport(t *testing.T, dir string) (string, *bench.Report, []bench.Sample) {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(m) != 1 {
		ls, _ := os.ReadDir(dir)
		t.Fatalf("want one report in %s, have %v", dir, ls)
	}
	r, samples, err := bench.ReadReport(m[0])
	if err != nil {
		t.Fatal(err)
	}
	return m[0], r, samples
}
