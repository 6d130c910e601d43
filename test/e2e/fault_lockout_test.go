//go:build e2e && fault

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

const lockoutKey = "attacker-key-0123456789"

// failingTap stands between the proxy and the simulated engine, and
// answers every completion 500 while failing is set: an outage of the
// engine that the users' SLO must show.
func failingTap(t *testing.T, enginePort int) (string, *atomic.Bool) {
	t.Helper()
	target, err := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", enginePort))
	require.NoError(t, err)
	relay := httputil.NewSingleHostReverseProxy(target)
	var failing atomic.Bool
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() && strings.HasSuffix(r.URL.Path, "completions") {
			http.Error(w, `{"error": "the engine failed"}`, http.StatusInternalServerError)
			return
		}
		relay.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String(), &failing
}

// availabilityRatio is what mlx:slo_availability_error_ratio records
// (rules/mlx-slo.yml) over the window between two scrapes of one proxy:
// the users' 5xx over the users' requests, at most 1.
func availabilityRatio(t *testing.T, before, after *promtext.Scrape) float64 {
	t.Helper()
	errs := sum(after, "mlx_error_total", "origin", "user", "status", "5xx") - sum(before, "mlx_error_total", "origin", "user", "status", "5xx")
	reqs := sum(after, "mlx_requests_total", "origin", "user") - sum(before, "mlx_requests_total", "origin", "user")
	require.Positive(t, reqs, "users' requests in the window")
	return min(errs/reqs, 1)
}

// sloRuleRecords has promtool evaluate rules/mlx-slo.yml's availability
// ratio over the users' request and error counters of the two scrapes,
// a minute apart (both within the 5m window: Prometheus 3's windows are
// open on the left) and then flat, and checks it records want.
func sloRuleRecords(t *testing.T, before, after *promtext.Scrape, want float64) {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		promtool = filepath.Join(repoRoot, "bin", "promtool")
	}
	require.FileExists(t, promtool, "promtool (make rules-deps) evaluates the SLO rules")
	series := func(name, extra string, labels ...string) string {
		// From 1000 on: rate() extrapolates a series that starts near 0
		// only to where it would be 0, and the two would be extrapolated
		// differently; the increases are the scrapes'.
		b, a := 1000+sum(before, name, labels...), 1000+sum(after, name, labels...)
		return fmt.Sprintf("      - series: '%s{job=\"mlx-proxy\", instance=\"p:8080\", origin=\"user\"%s}'\n        values: '%g %g %g %g %g %g'\n", name, extra, b, b, a, a, a, a)
	}
	test := "rule_files:\n  - " + filepath.Join(repoRoot, "rules", "mlx-slo.yml") + "\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n" +
		series("mlx_requests_total", "", "origin", "user") + series("mlx_error_total", `, status="5xx"`, "origin", "user", "status", "5xx") +
		fmt.Sprintf("    promql_expr_test:\n      - expr: round(mlx:slo_availability_error_ratio:rate5m, 0.0001)\n        eval_time: 5m\n        exp_samples:\n          - labels: '{slo=\"availability\"}'\n            value: %g\n", want)
	file := filepath.Join(t.TempDir(), "slo_test.yml")
	require.NoError(t, os.WriteFile(file, []byte(test), 0o600))
	out, err := exec.Command(promtool, "test", "rules", file).CombinedOutput()
	require.NoError(t, err, "promtool: the SLO rule records %g:\n%s\n%s", want, out, test)
}

// A flood of refusals during an outage hides nothing and evicts nothing:
// the engine fails every user's request, while 3,000 refused requests
// (a wrong key, a rebound Host, an unknown path, a body that is not JSON
// from an admitted caller) arrive; the users' error ratio the SLO rules
// record stays 1, far over the fast burn's 14.4 x 0.5 %, the refusals are
// in mlx_http_refusals_total, and an answer from before the outage still
// takes feedback although the index holds 50 and more refusals came.
func TestFaultRefusalFloodKeepsTheOutageVisible(t *testing.T) {
	enginePort := freePort(t)
	tap, failing := failingTap(t, enginePort)
	f := startFaultCollector(t, collectorOptions{configs: append(demoConfigs, engineOverlay(t)), enginePort: enginePort,
		env:  map[string]string{"MLX_API_KEYS": "attacker=" + lockoutKey},
		sets: []string{"extensions::mlx_proxy::upstream=" + tap, "extensions::mlx_proxy::feedback::max_traces=50"}})
	waitEngineReady(f.stack)
	base := f.proxyURL("")

	// An answer from before the outage, and its trace id.
	resp, body := postJSON(t, base+"/v1/chat/completions", `{"messages": [{"role": "user", "content": "Say hello"}], "max_tokens": 8}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	traceID := resp.Header.Get("X-Mlx-Trace-Id")
	require.Len(t, traceID, 32, "the answer is traced")
	f.mark()
	before, err := f.scrape("mlx_proxy")
	require.NoError(t, err)

	failing.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	users := runLoad(ctx, 2, 20, func(ctx context.Context, _ int) bool { return !completion(ctx, base+"/v1/chat/completions", false, 8) })
	require.Zero(t, users.failed.Load(), "every user's request failed with the engine")

	kinds := []struct {
		path, body string
		header     []string
		status     int
	}{
		{"/v1/chat/completions", `{"messages": []}`, []string{"Authorization", "Bearer wrong-key-0123456789"}, http.StatusUnauthorized},
		{"/v1/chat/completions", `{"messages": []}`, []string{"Host", "rebind.attacker.test"}, http.StatusForbidden},
		{"/v1/embeddings", `{"input": "x"}`, nil, http.StatusNotFound},
		{"/v1/chat/completions", `{"messages": [`, []string{"Authorization", "Bearer " + lockoutKey}, http.StatusBadRequest},
	}
	const perKind = 750
	client := &http.Client{Timeout: 20 * time.Second}
	defer client.CloseIdleConnections()
	flood := runLoad(ctx, 8, perKind*int64(len(kinds)), func(ctx context.Context, w int) bool {
		k := kinds[w%len(kinds)]
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+k.path, strings.NewReader(k.body))
		if err != nil {
			return true
		}
		req.Header.Set("Content-Type", "application/json")
		setHeaders(req, k.header)
		resp, err := client.Do(req)
		if err != nil {
			return true
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode != k.status
	})
	require.Zero(t, flood.failed.Load(), "every refusal got its status")
	sent := flood.sent.Load()

	after, err := f.scrape("mlx_proxy")
	require.NoError(t, err)
	ratio := availabilityRatio(t, before, after)
	assert.Equal(t, 1.0, ratio, "the users' error ratio is the outage's")
	assert.Greater(t, ratio, 14.4*0.005, "over the fast burn's threshold")
	sloRuleRecords(t, before, after, ratio)
	assert.Equal(t, 20.0, sum(after, "mlx_requests_total", "origin", "user")-sum(before, "mlx_requests_total", "origin", "user"),
		"only the users' requests are requests")
	refused := sum(after, "mlx_http_refusals_total") - sum(before, "mlx_http_refusals_total")
	assert.Equal(t, float64(sent), refused, "every refusal is in mlx_http_refusals_total")

	failing.Store(false)
	fb, err := http.Post(base+"/v1/feedback", "application/json", strings.NewReader(`{"trace_id": "`+traceID+`", "score": "up"}`))
	require.NoError(t, err)
	fbBody, _ := io.ReadAll(fb.Body)
	fb.Body.Close()
	assert.Equal(t, http.StatusOK, fb.StatusCode, "the answer from before the flood is still in the feedback index: %s", fbBody)

	f.finish(t, faultRow{name: "front door: a refusal flood in an outage", sent: sent + 20, failed: int64(refused) - sent, hasFailed: true,
		note: fmt.Sprintf("users' error ratio %.2f; failed: refusals miscounted", ratio)})
}

// No client locks out the rest: an attacker holds its maximum of idle
// keep-alive connections (from four loopback addresses, one client to
// the proxy) and, with a key, its share of request slots with bodies
// that stall after one byte; meanwhile a normal client gets answers,
// /metrics scrapes, and a request refused for its Host while its body is
// stalled is answered with the body still stalled.
func TestFaultNoClientLocksOutTheRest(t *testing.T) {
	f := startFaultCollector(t, collectorOptions{configs: append(demoConfigs, engineOverlay(t)),
		env: map[string]string{"MLX_API_KEYS": "attacker=" + lockoutKey}})
	waitEngineReady(f.stack)
	base := f.proxyURL("")
	addr := strings.TrimPrefix(base, "http://")
	require.False(t, completion(t.Context(), base+"/v1/chat/completions", false, 4), "warm-up")
	f.mark()

	// The defaults: 512 connections, 128 per client, 64 requests, 32 per
	// client.
	const perClient, slots = 128, 32
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	hold := func(c net.Conn) {
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
	}
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	// Slow bodies first: each takes a slot of the key and holds it.
	for range slots {
		c, err := (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).Dial("tcp", addr)
		require.NoError(t, err)
		hold(c)
		_, err = fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", lockoutKey)
		require.NoError(t, err)
	}
	// Then idle keep-alive connections from four addresses, four times
	// the per-client bound; each asks once and stays open.
	var idle atomic.Int64
	var wg sync.WaitGroup
	for a := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(3+a))}}
			for range perClient {
				c, err := d.Dial("tcp", addr)
				if err != nil {
					continue
				}
				hold(c)
				_ = c.SetDeadline(time.Now().Add(10 * time.Second))
				if _, err := fmt.Fprintf(c, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
					continue
				}
				if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if !resp.Close {
						idle.Add(1)
					}
				}
				_ = c.SetDeadline(time.Time{})
			}
		}()
	}
	wg.Wait()
	// At most 128 stay open at once: past its bound each new connection
	// of the attacker's closes its own oldest idle one.
	t.Logf("attacker: %d slow bodies, %d connections answered keep-alive", slots, idle.Load())
	require.GreaterOrEqual(t, idle.Load(), int64(perClient), "the attacker reached its bound of connections")

	// Its key is at its share.
	resp, body := postJSONAuth(t, base+"/v1/chat/completions", `{"messages": [{"role": "user", "content": "x"}], "max_tokens": 4}`, lockoutKey)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, string(body))

	// A normal client: answers and scrapes, on new connections.
	normal := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for range 5 {
		require.False(t, completionWith(t.Context(), normal, base+"/v1/chat/completions"), "a normal client is served")
		sresp, err := normal.Get(base + "/metrics")
		require.NoError(t, err, "/metrics scrapes")
		_, _ = io.Copy(io.Discard, sresp.Body)
		sresp.Body.Close()
		assert.Equal(t, http.StatusOK, sresp.StatusCode)
	}

	// A refusal with a stalled body is answered while the body stalls.
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	_, err = fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: rebind.attacker.test\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"messages")
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(20*time.Second)))
	refusal, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err, "answered with the body stalled")
	rb, _ := io.ReadAll(refusal.Body)
	assert.Equal(t, http.StatusForbidden, refusal.StatusCode)
	assert.Contains(t, string(rb), "host_not_allowed")
	assert.True(t, refusal.Close, "the refusal closes the connection")

	sc, err := f.scrape("mlx_proxy")
	require.NoError(t, err)
	t.Logf("connections refused: %v", sc.Series("mlx_proxy_connections_refused_total"))
	assert.Positive(t, value(t, sc, "mlx_http_refusals_total", "route", "chat_completions", "status", "429"))

	mu.Lock()
	for _, c := range conns {
		c.Close()
	}
	conns = nil
	mu.Unlock()
	f.finish(t, faultRow{name: "front door: one client's connections and slow bodies", sent: int64(slots) + 4*perClient + 11,
		note: fmt.Sprintf("attacker: %d slow bodies, %d keep-alive answers", slots, idle.Load())})
}

// setHeaders sets the name, value pairs on req; "Host" is its Host.
func setHeaders(req *http.Request, pairs []string) {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i] == "Host" {
			req.Host = pairs[i+1]
		} else {
			req.Header.Set(pairs[i], pairs[i+1])
		}
	}
}

// postJSONAuth posts body with a bearer key.
func postJSONAuth(t *testing.T, url, body, key string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// completionWith is completion (fault_test.go) through client.
func completionWith(ctx context.Context, client *http.Client, url string) (failed bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url,
		strings.NewReader(`{"messages": [{"role": "user", "content": "Say hello"}], "max_tokens": 4}`))
	if err != nil {
		return true
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return true
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode != http.StatusOK
}
