//go:build e2e && fault

package e2e

// The fault suite (make fault, part of make test): the built collector and
// the simulated engine under faults and hostile input, each case bounded in
// time. Every case adds a row to one table, printed when the suite ends:
// requests sent and failed, log lines lost and duplicated, panics,
// goroutines left over (and those on pooled connections) and RSS growth
// of the collector.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// faultRow is one case's figures; the has* flags say which columns apply.
type faultRow struct {
	name                        string
	sent, failed                int64
	linesLost, linesDuplicated  int
	panics                      int
	goroutinesLeft              int // not counting pooled connections
	connectionGoroutines        int // on pooled connections
	rssGrowthMiB                float64
	elapsed                     time.Duration
	note                        string
	hasLines, hasMem, hasFailed bool
}

var faultTable struct {
	mu   sync.Mutex
	rows []faultRow
}

func addFaultRow(r faultRow) {
	faultTable.mu.Lock()
	faultTable.rows = append(faultTable.rows, r)
	faultTable.mu.Unlock()
}

func TestMain(m *testing.M) {
	code := m.Run()
	printFaultTable(os.Stdout)
	os.Exit(code)
}

func printFaultTable(out io.Writer) {
	faultTable.mu.Lock()
	defer faultTable.mu.Unlock()
	if len(faultTable.rows) == 0 {
		return
	}
	fmt.Fprintln(out, "\nFault suite:")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "case\trequests sent\tfailed\tlines lost\tlines duplicated\tpanics\tgoroutines left\tRSS growth\ttime\tnote")
	na := func(ok bool, v string) string {
		if !ok {
			return "-"
		}
		return v
	}
	for _, r := range faultTable.rows {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", r.name, r.sent,
			na(r.hasFailed, strconv.FormatInt(r.failed, 10)),
			na(r.hasLines, strconv.Itoa(r.linesLost)), na(r.hasLines, strconv.Itoa(r.linesDuplicated)),
			r.panics,
			na(r.hasMem, fmt.Sprintf("%d (+%d on connections)", r.goroutinesLeft, r.connectionGoroutines)), na(r.hasMem, fmt.Sprintf("%.1f MiB", r.rssGrowthMiB)),
			r.elapsed.Round(100*time.Millisecond), r.note)
	}
	_ = tw.Flush()
}

// pprofOverlay adds the pprof extension on port, for the goroutine count.
func pprofOverlay(t testing.TB, port int) string {
	t.Helper()
	return writeOverlay(t, "pprof.yaml", fmt.Sprintf("extensions:\n  pprof:\n    endpoint: 127.0.0.1:%d\nservice:\n  extensions: [mlx_proxy, health_check, file_storage, pprof]\n", port))
}

// faultStack is a collector with its resource readings.
type faultStack struct {
	*stack
	pprof int
	began time.Time
	// baseline readings, taken by mark
	goroutines goroutineProfile
	rssKiB     int
}

func startFaultCollector(t *testing.T, opts collectorOptions) *faultStack {
	t.Helper()
	port := freePort(t)
	opts.configs = append(append([]string{}, opts.configs...), pprofOverlay(t, port))
	if opts.env == nil {
		opts.env = map[string]string{}
	}
	if _, ok := opts.env["MLXSIM_LOAD_DELAY"]; !ok {
		opts.env["MLXSIM_LOAD_DELAY"] = "0s"
	}
	f := &faultStack{stack: startCollector(t, opts), pprof: port, began: time.Now()}
	require.Eventually(t, func() bool { return f.readGoroutineProfile().total() > 0 }, 30*time.Second, 100*time.Millisecond, "pprof answers")
	return f
}

// rss is the collector's resident set in KiB (Linux).
func (f *faultStack) rss() int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", f.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return 0
}

// mark takes the baseline: after warm-up, before the fault.
func (f *faultStack) mark() {
	f.goroutines, f.rssKiB = f.readGoroutineProfile(), f.rss()
}

// panics counts recovered panics (mlx_proxy_panics_total) and any panic
// the collector printed.
func (f *faultStack) panics() int {
	n := strings.Count(f.out.String(), "panic")
	if sc, err := f.scrape("mlx_proxy"); err == nil {
		if v := int(sum(sc, "mlx_proxy_panics_total")); v > n {
			n = v
		}
	}
	return n
}

// leftovers waits (up to 20 s) for the goroutines other than pooled
// connections' to come back to the baseline (pooled connections stay
// open for the transport's idle timeout, 90 s), and returns what is left
// over and the RSS growth in MiB.
func (f *faultStack) leftovers() (goroutineGrowth, float64) {
	http.DefaultClient.CloseIdleConnections()
	deadline := time.Now().Add(20 * time.Second)
	g := f.readGoroutineProfile().since(f.goroutines)
	for g.others > 0 && time.Now().Before(deadline) {
		time.Sleep(250 * time.Millisecond)
		g = f.readGoroutineProfile().since(f.goroutines)
	}
	// A collection first (pprof's heap profile can ask for one), so that
	// garbage does not count as growth.
	if resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/heap?gc=1", f.pprof)); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return g, float64(f.rss()-f.rssKiB) / 1024
}

// finish checks what every case must hold, and adds the row.
func (f *faultStack) finish(t *testing.T, row faultRow) {
	t.Helper()
	select {
	case <-f.exited:
		t.Errorf("the collector exited during the case")
	default:
	}
	row.panics = f.panics()
	var grown goroutineGrowth
	grown, row.rssGrowthMiB = f.leftovers()
	row.goroutinesLeft, row.connectionGoroutines = grown.others, grown.connections
	row.hasMem = true
	row.elapsed = time.Since(f.began)
	addFaultRow(row)
	assert.Zero(t, row.panics, "no panic")
	if grown.others+grown.connections > 0 {
		t.Logf("goroutines left: %d on pooled connections, %d others; stacks that grew:\n%s",
			grown.connections, grown.others, strings.Join(grown.stacks, "\n"))
	}
	assert.LessOrEqual(t, row.goroutinesLeft, 10, "goroutines come back to where they were")
	// Pooled connections are kept for the next request: the proxy's to
	// the engine (one per client that ran at once, 8 at most in a case)
	// and the exporters' (two per sink), two goroutines each. A connection
	// left open per request would break the bound in every case that
	// sends more than 20 requests (all but the long request's).
	assert.LessOrEqual(t, row.connectionGoroutines, 40, "pooled connections stay within the pools")
	// The bound is the memory limiter's (512 MiB in mlx.yaml): spans for a
	// Jaeger that is not there wait in the exporter's queue, and the
	// hostile case's large bodies make large spans.
	assert.Less(t, row.rssGrowthMiB, 400.0, "memory stays bounded")
}

// load runs workers that call do until ctx ends or max requests were
// sent; do reports whether the request failed.
type loadCounts struct{ sent, failed atomic.Int64 }

func runLoad(ctx context.Context, workers int, max int64, do func(ctx context.Context, worker int) (failed bool)) *loadCounts {
	c := &loadCounts{}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for ctx.Err() == nil && c.sent.Add(1) <= max {
				if do(ctx, w) && ctx.Err() == nil {
					c.failed.Add(1)
				}
			}
		}(w)
	}
	wg.Wait()
	if s := c.sent.Load(); s > max {
		c.sent.Store(max)
	}
	return c
}

// completion sends one chat completion through the proxy and says whether
// it failed: no answer, a status other than 200, or a stream that did not
// end with [DONE].
func completion(ctx context.Context, url string, stream bool, maxTokens int) (failed bool) {
	body := fmt.Sprintf(`{"messages": [{"role": "user", "content": "Say hello"}], "max_tokens": %d, "stream": %t}`, maxTokens, stream)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return true
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return true
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return true
	}
	return stream && (!strings.HasSuffix(string(b), "data: [DONE]\n\n") || strings.Contains(string(b), `data: {"error"`))
}
