package proxy

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

const testModel = "mlx-community/Qwen3-4B-4bit"

// simOptions is a simulated engine that answers at once: no model load,
// no pacing.
func simOptions() mlxsim.Options {
	return mlxsim.Options{
		Model:      testModel,
		Seed:       7,
		PrefillTPS: 1e12,
		DecodeTPS:  1e12,
	}
}

// rig is a simulated engine behind a proxy, both on loopback, plus a twin
// engine in the same state that the test talks to directly: what the
// client gets through the proxy is compared with what it gets from the
// twin.
type rig struct {
	t       *testing.T
	proxy   *Proxy
	url     string // the proxy
	direct  string // the twin engine
	client  *http.Client
	engine  *httptest.Server
	enginel *killableListener
}

type rigOption func(*Config, *mlxsim.Options)

func newRig(t *testing.T, opts ...rigOption) *rig {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Model = testModel
	cfg.ModelConfig = "../internal/modelconfig/testdata/qwen3-4b-4bit.json"
	cfg.ProbeInterval = time.Hour // tests call probe themselves
	so := simOptions()
	for _, o := range opts {
		o(&cfg, &so)
	}

	r := &rig{t: t}
	behind := mlxsim.New(so, io.Discard)
	twin := mlxsim.New(so, io.Discard)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	r.enginel = &killableListener{Listener: ln, killAfter: make(chan int, 1)}
	r.engine = httptest.NewUnstartedServer(behind.Handler())
	r.engine.Listener = r.enginel
	r.engine.Start()
	t.Cleanup(r.engine.Close)
	twinSrv := httptest.NewServer(twin.Handler())
	t.Cleanup(twinSrv.Close)
	// Cleanups run last first: the engines release hung requests before
	// their servers wait for them.
	t.Cleanup(behind.Close)
	t.Cleanup(twin.Close)
	r.direct = twinSrv.URL

	ours := cfg.Upstream == DefaultConfig().Upstream
	if ours {
		cfg.Upstream = r.engine.URL
	}
	r.proxy, r.url = startProxy(t, cfg)
	if ours {
		// The first probe has been answered: no connection of the test
		// races with it.
		require.Eventually(t, func() bool { return r.proxy.upState.v.Load() == 1 }, 5*time.Second, time.Millisecond)
	}
	r.client = testClient(t)
	return r
}

// rigWithUpstream is a proxy in front of a hand-written engine, for answers
// the simulated one never gives. configure may be nil.
func rigWithUpstream(t *testing.T, engine http.HandlerFunc, configure func(*Config)) *rig {
	t.Helper()
	up := httptest.NewServer(engine)
	t.Cleanup(up.Close)
	cfg := DefaultConfig()
	cfg.Upstream = up.URL
	cfg.ProbeInterval = time.Hour // tests call probe themselves
	if configure != nil {
		configure(&cfg)
	}
	p, url := startProxy(t, cfg)
	return &rig{t: t, proxy: p, url: url, client: testClient(t)}
}

// startProxy runs a proxy on a loopback port until the test ends.
func startProxy(t *testing.T, cfg Config) (*Proxy, string) {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	log := zap.New(zapcore.NewTee(zaptest.NewLogger(t).Core(), core))
	// A handler panic is logged by net/http through the proxy's logger;
	// none may happen, whatever the test did.
	t.Cleanup(func() {
		for _, e := range logs.All() {
			if strings.Contains(e.Message, "panic") && !(panicsExpected.Load() && e.Message == recoveredMessage) {
				t.Errorf("the proxy panicked: %s", e.Message)
			}
		}
	})
	p, err := New(cfg, log)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p.Serve(ln)
	t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })
	return p, "http://" + ln.Addr().String()
}

// testClient is an HTTP client whose connections close with the test.
func testClient(t *testing.T) *http.Client {
	tr := &http.Transport{DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// response is what a client saw.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r *rig) do(base, method, path, body string, header ...string) response {
	r.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, rd)
	require.NoError(r.t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := r.client.Do(req)
	require.NoError(r.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(r.t, err)
	return response{resp.StatusCode, resp.Header, b}
}

func (r *rig) post(path, body string) response { return r.do(r.url, http.MethodPost, path, body) }

// settle waits until every completion request the proxy took has ended
// and every answer queued for scoring is scored: a client has its whole
// answer before the proxy's handler records the request, and scoring runs
// after that. A request still in flight on purpose only makes it wait.
func settle(p *Proxy) {
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) && (p.active.Load() != 0 || !p.scorer.idle()) {
		time.Sleep(time.Millisecond)
	}
}

// scrape reads the proxy's /metrics through its own listener, once what
// the requests sent so far will move has moved.
func (r *rig) scrape() *promtext.Scrape {
	r.t.Helper()
	settle(r.proxy)
	resp := r.do(r.url, http.MethodGet, "/metrics", "")
	require.Equal(r.t, http.StatusOK, resp.status)
	sc, err := promtext.Parse(resp.body)
	require.NoError(r.t, err)
	return sc
}

// Fields that differ between two runs of the same request.
var (
	idRe      = regexp.MustCompile(`"id": "[^"]*"`)
	createdRe = regexp.MustCompile(`"created": \d+`)
)

func normalize(b []byte) string {
	b = idRe.ReplaceAll(b, []byte(`"id": "ID"`))
	b = createdRe.ReplaceAll(b, []byte(`"created": 0`))
	return string(b)
}

// killableListener lets a test kill the engine's connections mid-answer,
// as a crashed engine would: every connection accepted from now on closes
// after its first write of at least minBytes.
type killableListener struct {
	net.Listener
	killAfter chan int
	open      atomic.Int64 // connections not closed yet
}

func (l *killableListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return c, err
	}
	l.open.Add(1)
	c = &countedConn{Conn: c, open: &l.open}
	select {
	case n := <-l.killAfter:
		return &dyingConn{Conn: c, left: n}, nil
	default:
		return c, nil
	}
}

type countedConn struct {
	net.Conn
	open *atomic.Int64
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.open.Add(-1) })
	return c.Conn.Close()
}

// killNext makes the next connection die after n bytes of response.
func (l *killableListener) killNext(n int) { l.killAfter <- n }

type dyingConn struct {
	net.Conn
	left int
}

func (c *dyingConn) Write(p []byte) (int, error) {
	if c.left <= 0 {
		c.Conn.Close()
		return 0, net.ErrClosed
	}
	if len(p) > c.left {
		n, _ := c.Conn.Write(p[:c.left])
		c.left = 0
		c.Conn.Close()
		return n, net.ErrClosed
	}
	c.left -= len(p)
	return c.Conn.Write(p)
}

// sseEvents splits a stream body into its events.
func sseEvents(b []byte) []string {
	var out []string
	for _, e := range bytes.SplitAfter(b, []byte("\n\n")) {
		if len(e) > 0 {
			out = append(out, string(e))
		}
	}
	return out
}
