//go:build e2e && fault

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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

	"github.com/mlx-otelcol/mlx-otelcol/standins/opiktest"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/otlptest"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

// The OTLP log sink and Opik both down for a minute under load: no user
// request fails, Jaeger still gets every span, the requests Opik could
// not take wait on disk (config/mlx.yaml's queue and retries) and each is
// one trace with its scores once it is back, with no loss and no orphan
// score; the OTLP sink's records wait on disk and arrive once each, with
// nothing done by hand.
// (VictoriaMetrics down is nothing the collector sees: it is scraped, and
// its exporters serve the latest values to whoever asks.)
func TestFaultSinksDownForAMinuteUnderLoad(t *testing.T) {
	j := startJaeger(t)
	opik := startOpik(t)
	sink := otlptest.NewLogsDestination(t)
	telemetry := freePort(t)
	sets := append(traceSets(j, opik),
		// Retries a little faster than mlx.yaml's 5 s to 30 s, so that
		// the test does not wait half a minute for the queue to drain.
		"exporters::opik::retry_on_failure::max_interval=5s",
		"service::telemetry::metrics::level=normal",
	)
	f := startFaultCollector(t, collectorOptions{
		configs: append(append([]string{}, demoConfigs...), telemetryOverlay(t, telemetry), numberedLogOverlay(t)),
		sets:    sinkOverlay(sink, sets...),
	})
	waitEngineReady(f.stack)
	url := f.proxyURL("/v1/chat/completions")
	body := `{"messages": [{"role": "user", "content": "Say hello"}], "max_tokens": 4}`
	f.mark()

	ctx, cancel := context.WithTimeout(context.Background(), 75*time.Second)
	defer cancel()
	const lines = 21_000
	wrote := numberedLines(ctx, t, f.dataDir, lines, 300) // 70 s of lines
	var mu sync.Mutex
	var duringDown []string
	var down atomic.Bool
	loadDone := make(chan *loadCounts, 1)
	go func() {
		loadDone <- runLoad(ctx, 4, 100_000, func(ctx context.Context, _ int) bool {
			id := newTraceID(t)
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("traceparent", "00-"+id+"-00f067aa0ba902b7-01")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return true
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if down.Load() {
				mu.Lock()
				duringDown = append(duringDown, id)
				mu.Unlock()
			}
			return resp.StatusCode != http.StatusOK
		})
	}()
	time.Sleep(5 * time.Second)
	opik.Down()
	sink.SetStatus(http.StatusServiceUnavailable)
	down.Store(true)
	time.Sleep(60 * time.Second)
	down.Store(false)
	require.NoError(t, opik.Up())
	sink.SetStatus(0)
	upAt := time.Now()
	load := <-loadDone
	written := <-wrote

	t.Logf("requests sent %d, failed %d, while the sinks were down %d", load.sent.Load(), load.failed.Load(), len(duringDown))
	assert.Zero(t, load.failed.Load(), "no user request failed")
	require.NotEmpty(t, duringDown)

	// Jaeger got the spans of the downtime: Opik held up no other exporter.
	for i, id := range duringDown {
		if i%(len(duringDown)/20+1) == 0 {
			j.waitTrace(t, id)
		}
	}
	// Every request of the downtime is one trace in Opik, with its
	// scores, once Opik is back: nothing lost, no orphan score.
	missing := func() (traces, scores int) {
		got := map[string]opiktest.Trace{}
		for _, tr := range opik.Traces("mlx") {
			got[tr.OTelTraceID] = tr
		}
		for _, id := range duringDown {
			tr, ok := got[id]
			switch {
			case !ok:
				traces++
			case len(tr.FeedbackScores) < 2:
				scores++
			}
		}
		return traces, scores
	}
	require.Eventually(t, func() bool { tr, sc := missing(); return tr == 0 && sc == 0 }, 3*time.Minute, time.Second,
		"every request of the downtime reaches Opik with its scores")
	t.Logf("%d requests of the downtime in Opik with their scores %s after it came back", len(duringDown), time.Since(upAt).Round(time.Second))
	assert.Zero(t, opik.OrphanScores(), "scores on ids Opik shows no trace of")
	col := scrapeURL(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", telemetry))
	dropped := sum(col, "otelcol_exporter_enqueue_failed_spans", "exporter", "opik") + sum(col, "otelcol_exporter_send_failed_spans", "exporter", "opik")
	t.Logf("requests Opik lost: %g; sent: %g", dropped, sum(col, "otelcol_exporter_sent_spans", "exporter", "opik"))
	assert.Zero(t, dropped, "Opik's outage lost nothing")
	px := scrapeURL(t, f.proxyURL("/metrics"))
	assert.Zero(t, value(t, px, "mlx_spans_dropped_total"), "the proxy dropped no span: Opik never held up the pipeline")

	// Opik recovers by itself: a request after it came back lands there.
	id := newTraceID(t)
	status, _ := tracedPost(t, url, id, body)
	require.Equal(t, http.StatusOK, status)
	require.Eventually(t, func() bool {
		for _, tr := range opik.Traces("mlx") {
			if tr.OTelTraceID == id && tr.StartTime.After(upAt) {
				return true
			}
		}
		return false
	}, 60*time.Second, 200*time.Millisecond, "a new trace reaches Opik after it is back")

	// The OTLP sink's records waited on disk and arrive, once each.
	f.waitFor("prometheus/logs", 90*time.Second, "the OTLP queue drained", func(sc *promtext.Scrape) bool {
		return sum(sc, "mlx_log_tailer_queue_depth", "sink", "mlx_otlp_http") == 0 &&
			sum(sc, "mlx_log_tailer_shipped_total", "sink", "mlx_otlp_http") > 0
	})
	// The last lines may still be on their way: written after the queue was
	// seen empty (the writer can run late on a busy machine), a file_log
	// poll and a flush behind. Wait for them, bounded.
	var lost, dup int
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		seen := map[int]int{}
		tallyNumbers(seen, faultLine, sink.Bodies()...)
		lost, dup = lostAndDuplicated(seen, upTo(written))
		if lost == 0 || time.Now().After(deadline) {
			break
		}
	}
	assert.Zero(t, lost, "every line reached the OTLP sink")
	assert.Zero(t, dup, "none twice")
	f.finish(t, faultRow{name: "OTLP log sink and Opik down for 60 s, 4 clients", sent: load.sent.Load(), failed: load.failed.Load(), hasFailed: true,
		linesLost: lost, linesDuplicated: dup, hasLines: true,
		note: fmt.Sprintf("%d lines to the OTLP sink; spans Opik lost (counted): %g", written, dropped)})
}

// smallDisk mounts a tmpfs of size bytes for the test (the test runs as
// root, as make test does) and returns its path; grow gives it room.
func smallDisk(t *testing.T, size int) (dir string, grow func(int)) {
	t.Helper()
	dir = t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput()
	require.NoError(t, err, "mount a small tmpfs (needs root): %s", out)
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir, func(n int) {
		out, err := exec.Command("mount", "-o", fmt.Sprintf("remount,size=%d", n), dir).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
}

// readJSONLFile reads one JSONL file: the numbered lines it holds, and the
// lines that are not whole JSON objects (torn by a failed write).
func readJSONLFile(t *testing.T, path string) (seen map[int]int, torn int) {
	seen = map[int]int{}
	fh, err := os.Open(path)
	if os.IsNotExist(err) {
		return seen, 0
	}
	require.NoError(t, err)
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r jsonlRecord
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			torn++
			continue
		}
		tallyNumbers(seen, lineNumber, r.Body)
	}
	require.NoError(t, sc.Err())
	return seen, torn
}

// The JSONL sink's disk fills up: the records wait in the queue (on
// another disk), the failures are counted, nothing else is held up; once
// there is room every record is in the file once, and no line is torn.
func TestFaultDiskFullJSONLSink(t *testing.T) {
	disk, grow := smallDisk(t, 192<<10)
	path := filepath.Join(disk, "engine.jsonl")
	f := startFaultCollector(t, collectorOptions{
		configs: []string{"config/mlx.yaml", logOnlyOverlay(t)},
		sets: []string{
			"exporters::mlx_jsonl::path=" + path,
			"exporters::mlx_jsonl::retry_on_failure::initial_interval=200ms",
			"exporters::mlx_jsonl::retry_on_failure::max_interval=1s",
		},
	})
	// Warm-up: the pipeline's goroutines (the file reader, the sinks'
	// connections) start with the first lines, before the baseline.
	w := newEngineLogWriter(t, f.dataDir)
	const warm, lines = 100, 4_000
	w.write(0, warm)
	warmed, _ := w.expected(warm)
	f.waitFor("prometheus/logs", 30*time.Second, "the warm-up lines in both sinks", func(sc *promtext.Scrape) bool {
		return sum(sc, "mlx_log_tailer_shipped_total", "sink", "mlx_otlp_http") == float64(len(warmed)) &&
			sum(sc, "mlx_log_tailer_shipped_total", "sink", "mlx_jsonl") == float64(len(warmed))
	})
	f.mark()
	w.write(warm, lines)
	delivered, _ := w.expected(lines)

	// Full: the writes fail and are counted; the OTLP sink goes on.
	f.waitFor("prometheus/logs", 60*time.Second, "failed writes counted and the OTLP sink done", func(sc *promtext.Scrape) bool {
		return sum(sc, "mlx_log_tailer_errors_total") > 0 &&
			sum(sc, "mlx_log_tailer_shipped_total", "sink", "mlx_otlp_http") == float64(len(delivered))
	})
	seen, torn := readJSONLFile(t, path)
	require.Less(t, len(seen), len(delivered), "the disk is full before the last record")
	assert.Zero(t, torn, "no torn line while full")

	grow(16 << 20)
	deadline := time.Now().Add(60 * time.Second)
	for len(seen) < len(delivered) && time.Now().Before(deadline) {
		time.Sleep(300 * time.Millisecond)
		seen, torn = readJSONLFile(t, path)
	}
	lost, dup := lostAndDuplicated(seen, delivered)
	assert.Zero(t, lost, "every record arrived once there was room")
	assert.Zero(t, dup, "none twice")
	assert.Zero(t, torn, "no torn line")
	f.finish(t, faultRow{name: "JSONL sink's disk full (192 KiB tmpfs), then room", linesLost: lost, linesDuplicated: dup, hasLines: true,
		note: fmt.Sprintf("%d records; torn lines: %d", len(delivered), torn)})
}
