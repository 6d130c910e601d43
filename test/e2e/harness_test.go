//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/syncbuf"
)

// repoRoot is where the shipped configs are.
var repoRoot = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}()

func binary(t testing.TB, env string) string {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		t.Fatalf("%s is not set: run the end-to-end tests with `make e2e`", env)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s: %v", env, err)
	}
	return p
}

// freePort returns a loopback port nobody listens on now.
//
// The port is drawn below the kernel's ephemeral range, and so is never one
// the kernel hands out meanwhile: a port from that range (what listening on
// port 0 gives) can become the local port of an outgoing connection before
// the collector binds it, and the collector then fails with "address
// already in use" (seen in the fault suite, after a case with thousands of
// connections).
func freePort(t testing.TB) int {
	t.Helper()
	lo, hi := 20000, ephemeralPortsStart()
	for range 200 {
		port := lo + rand.IntN(hi-lo)
		if handedOut.Contains(port) {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue // in use
		}
		l.Close()
		handedOut.Add(port)
		return port
	}
	t.Fatalf("no free port in [%d, %d)", lo, hi)
	return 0
}

// handedOut are the ports freePort gave this test binary, never given twice.
var handedOut = &portSet{ports: map[int]bool{}}

type portSet struct {
	mu    sync.Mutex
	ports map[int]bool
}

func (s *portSet) Contains(p int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ports[p]
}

func (s *portSet) Add(p int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ports[p] = true
}

// ephemeralPortsStart is the first port of the kernel's ephemeral range
// (32768 when it cannot be read).
func ephemeralPortsStart() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n <= 20000+1000 {
		return 32768
	}
	return n
}

// stack is one running collector with its own ports and data directory.
type stack struct {
	t          testing.TB
	cmd        *exec.Cmd
	out        *syncbuf.Buffer
	dataDir    string
	enginePort int
	ports      map[string]int // exporter or extension name -> port
	exited     chan struct{}
}

// collectorOptions say how to run the collector.
type collectorOptions struct {
	configs []string          // config files, relative to the repo root or absolute
	sets    []string          // --set values
	env     map[string]string // extra environment
	dataDir string            // reuse this data directory (a restart); default: a new one
	// enginePort is the engine's port; default: a free one. A restart
	// that must meet what the last run left passes the same.
	enginePort int
	// noOTLPLogs runs the shipped config as it is. By default the tests
	// add config/otlp-logs.yaml, sending the engine's log and the judge's
	// events to this collector's own otlp receiver, so that the OTLP sink
	// is exercised too.
	noOTLPLogs bool
	// vlogsURL is a VictoriaLogs the test started; by default the log
	// store's sinks go to this collector's own otlp receiver.
	vlogsURL string
}

// startCollector runs the built collector with the shipped config files,
// every port moved to a free one, the data under a temporary directory.
func startCollector(t testing.TB, opts collectorOptions) *stack {
	t.Helper()
	s := &stack{
		t:          t,
		out:        &syncbuf.Buffer{},
		dataDir:    opts.dataDir,
		enginePort: freePort(t),
		ports:      map[string]int{},
		exited:     make(chan struct{}),
	}
	if s.dataDir == "" {
		s.dataDir = t.TempDir()
	}
	if opts.enginePort != 0 {
		s.enginePort = opts.enginePort
	}
	for _, name := range []string{"prometheus/supervisor", "prometheus/kv", "prometheus/logs", "prometheus/hw", "health_check", "otlp_grpc", "otlp_http", "mlx_proxy", "otlp_jaeger", "jaeger_query"} {
		s.ports[name] = freePort(t) // never one it gave before
	}
	args := []string{}
	configs := opts.configs
	if !opts.noOTLPLogs && len(configs) > 0 && configs[0] == "config/mlx.yaml" {
		configs = append(slices.Clone(configs), "config/otlp-logs.yaml")
	}
	for _, c := range configs {
		if !filepath.IsAbs(c) {
			c = filepath.Join(repoRoot, c)
		}
		args = append(args, "--config", c)
	}
	vlogs := fmt.Sprintf("http://127.0.0.1:%d", s.ports["otlp_http"])
	if opts.vlogsURL != "" {
		vlogs = opts.vlogsURL + "/insert/opentelemetry"
	}
	sets := []string{
		fmt.Sprintf("exporters::prometheus/supervisor::endpoint=127.0.0.1:%d", s.ports["prometheus/supervisor"]),
		fmt.Sprintf("exporters::prometheus/kv::endpoint=127.0.0.1:%d", s.ports["prometheus/kv"]),
		fmt.Sprintf("exporters::prometheus/logs::endpoint=127.0.0.1:%d", s.ports["prometheus/logs"]),
		fmt.Sprintf("exporters::prometheus/hw::endpoint=127.0.0.1:%d", s.ports["prometheus/hw"]),
		// The log pipeline's OTLP sink goes to this collector's own otlp receiver.
		fmt.Sprintf("exporters::mlx_otlp_http::endpoint=http://127.0.0.1:%d", s.ports["otlp_http"]),
		fmt.Sprintf("exporters::mlx_otlp_http/judge::endpoint=http://127.0.0.1:%d", s.ports["otlp_http"]),
		// So do the log store's (VictoriaLogs), unless the test runs one.
		"exporters::mlx_otlp_http/vlogs::endpoint=" + vlogs,
		"exporters::mlx_otlp_http/vlogs_access::endpoint=" + vlogs,
		fmt.Sprintf("extensions::health_check::endpoint=127.0.0.1:%d", s.ports["health_check"]),
		fmt.Sprintf("extensions::mlx_proxy::endpoint=127.0.0.1:%d", s.ports["mlx_proxy"]),
		fmt.Sprintf("receivers::otlp::protocols::grpc::endpoint=127.0.0.1:%d", s.ports["otlp_grpc"]),
		fmt.Sprintf("receivers::otlp::protocols::http::endpoint=127.0.0.1:%d", s.ports["otlp_http"]),
		"service::telemetry::metrics::level=none",
		// No Jaeger unless a test starts one: spans go to a port of its own.
		fmt.Sprintf("exporters::otlp_grpc/jaeger::endpoint=127.0.0.1:%d", s.ports["otlp_jaeger"]),
		// Nor a Jaeger for the judge to read (a developer's Jaeger on
		// :16686 would have its traces judged through this proxy).
		fmt.Sprintf("receivers::mlx_judge::jaeger::endpoint=http://127.0.0.1:%d", s.ports["jaeger_query"]),
		"receivers::mlx_judge::opik::endpoint=",
	}
	for _, v := range append(sets, opts.sets...) {
		args = append(args, "--set", v)
	}
	s.cmd = exec.Command(binary(t, "MLX_OTELCOL"), args...)
	s.cmd.Dir = repoRoot
	s.cmd.Env = append(os.Environ(),
		"MLXSIM="+binary(t, "MLXSIM"),
		"MLX_DATA_DIR="+s.dataDir,
		"MLX_ENGINE_PORT="+strconv.Itoa(s.enginePort),
		"MLX_LISTEN_HOST=127.0.0.1",
		// The shipped config destreams a random 5 % of chat streams;
		// tests that want it say so (opts.env comes after and wins).
		"MLX_LOGPROBS_STREAM_SAMPLE=0",
	)
	for k, v := range opts.env {
		s.cmd.Env = append(s.cmd.Env, k+"="+v)
	}
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	require.NoError(t, s.cmd.Start())
	go func() { _ = s.cmd.Wait(); close(s.exited) }()
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			t.Logf("collector output:\n%s", s.out.String())
			if b, err := os.ReadFile(s.serverLog()); err == nil {
				t.Logf("server.log:\n%s", tailOf(b, 4000))
			}
		}
	})
	return s
}

// writeOverlay writes a config file of the test's own, for --config.
func writeOverlay(t testing.TB, name, yaml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(yaml), 0o600))
	return p
}

// telemetryOverlay is a config file that turns the collector's own
// metrics on, served on port (pass --set
// service::telemetry::metrics::level=normal too: the harness sets none).
func telemetryOverlay(t testing.TB, port int) string {
	t.Helper()
	return writeOverlay(t, "telemetry.yaml", fmt.Sprintf("service:\n  telemetry:\n    metrics:\n      level: normal\n      readers:\n        - pull:\n            exporter:\n              prometheus:\n                host: 127.0.0.1\n                port: %d\n", port))
}

// stop sends SIGTERM and waits for the collector to exit.
func (s *stack) stop() {
	select {
	case <-s.exited:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
		s.t.Errorf("the collector did not stop within 30s of SIGTERM")
	}
}

func (s *stack) serverLog() string { return filepath.Join(s.dataDir, "server.log") }

func (s *stack) engineURL(path string) string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", s.enginePort, path)
}

// scrape reads the /metrics of one of the collector's prometheus exporters.
func (s *stack) scrape(exporter string) (*promtext.Scrape, error) {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", s.ports[exporter]))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape %s: status %d", exporter, resp.StatusCode)
	}
	return promtext.Parse(b)
}

// scrapeMeeting scrapes exporter and says whether cond holds. A prometheus
// exporter stores a collection one series at a time, and a scrape during
// that store mixes two collections (v0.165's accumulator is a sync.Map with
// no lock across a collection): the series cond reads may be new while the
// ones the test asserts next are not. So a scrape that meets cond is taken
// again a moment later, when that collection is whole (a receiver's
// collections are at least 200 ms apart in every test config), and the
// second one is returned.
func (s *stack) scrapeMeeting(exporter string, cond func(*promtext.Scrape) bool) (*promtext.Scrape, bool, error) {
	sc, err := s.scrape(exporter)
	if err != nil || !cond(sc) {
		return sc, false, err
	}
	time.Sleep(50 * time.Millisecond)
	sc, err = s.scrape(exporter)
	if err != nil {
		return nil, false, err
	}
	return sc, cond(sc), nil
}

// waitFor scrapes until cond holds, and returns a whole scrape that meets it
// (scrapeMeeting).
func (s *stack) waitFor(exporter string, timeout time.Duration, what string, cond func(*promtext.Scrape) bool) *promtext.Scrape {
	s.t.Helper()
	return s.waitForShowing(exporter, timeout, what, cond, nil)
}

// waitForShowing is waitFor whose timeout also says state() (if not nil):
// what cond last saw.
func (s *stack) waitForShowing(exporter string, timeout time.Duration, what string, cond func(*promtext.Scrape) bool, state func() string) *promtext.Scrape {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		sc, ok, err := s.scrapeMeeting(exporter, cond)
		if ok {
			return sc
		}
		if time.Now().After(deadline) {
			if state != nil {
				what += ": " + state()
			}
			s.t.Fatalf("timed out after %s waiting for %s (last scrape error: %v)", timeout, what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// value is Scrape.Value that treats a missing series as a test failure.
func value(t *testing.T, sc *promtext.Scrape, name string, labels ...string) float64 {
	t.Helper()
	v, ok := sc.Value(name, labels...)
	require.True(t, ok, "series %s%v is in the scrape", name, labels)
	return v
}

// chat sends a small non-streaming chat completion straight to the engine.
func chat(ctx context.Context, url string) (*http.Response, error) {
	body := `{"model": "mlx-community/Qwen3-4B-4bit", "messages": [{"role": "user", "content": "Say hello"}], "max_tokens": 8}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	return http.DefaultClient.Do(req)
}

// syncBuffer is a bytes.Buffer safe for the two writers of a process.
func tailOf(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// processesRunning lists the live pids whose command line starts with path
// and has arg among its arguments.
func processesRunning(path, arg string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.HasPrefix(cmdline, []byte(path+"\x00")) || !bytes.Contains(cmdline, []byte("\x00"+arg+"\x00")) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err == nil {
			f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
			if len(f) > 0 && f[0] == "Z" {
				continue
			}
		}
		pids = append(pids, pid)
	}
	return pids
}
