//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/doccheck"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/otlptest"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

// The log pipeline end to end: lines appended to $MLX_DATA_DIR/server.log by
// the test (the supervisor only watches, so nothing else writes there) go
// through file_log, mlx_log_classify and the two sinks; the JSONL file, an
// OTLP endpoint and the :9106 scrape are checked against what was written.

// logOnlyOverlay keeps the engine out: the supervisor in attach mode, and the
// health series collected often.
func logOnlyOverlay(t testing.TB) string {
	t.Helper()
	return writeOverlay(t, "log-only.yaml", "receivers:\n  mlx_supervisor:\n    command: []\n  mlx_log_health:\n    collection_interval: 200ms\n")
}

// engineLogWriter appends mlx_lm-shaped lines, each carrying its number, and
// remembers which file (generation) each went to and how it classifies.
type engineLogWriter struct {
	t    testing.TB
	dir  string
	f    *os.File
	gen  int
	gens map[int]int // line number -> generation
}

func newEngineLogWriter(t testing.TB, dir string) *engineLogWriter {
	w := &engineLogWriter{t: t, dir: dir, gens: map[int]int{}}
	w.open()
	t.Cleanup(func() { w.f.Close() })
	return w
}

func (w *engineLogWriter) open() {
	f, err := os.OpenFile(filepath.Join(w.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	require.NoError(w.t, err)
	w.f = f
}

// lineKind: every 50th line is an access line (dropped), every 1000th a
// three-line traceback (one record), every 100th a ring error; the rest are
// prefill progress.
func lineKind(i int) (severity, category string) {
	switch {
	case i%50 == 49:
		return "info", "http"
	case i%1000 == 500:
		return "error", "python"
	case i%100 == 10:
		return "error", "rank"
	default:
		return "info", "generation"
	}
}

func lineText(i int) string {
	switch sev, cat := lineKind(i); {
	case cat == "http":
		return fmt.Sprintf(`127.0.0.1 - - [22/Aug/2026 17:00:00] "GET /health?n=%d HTTP/1.1" 200 -`, i)
	case cat == "python":
		return fmt.Sprintf("Traceback (most recent call last):\n  File \"/x/server.py\", line 1, in handle\nValueError: boom #%d", i)
	case sev == "error":
		return fmt.Sprintf("[ring] connection to a peer was lost #%d", i)
	default:
		return fmt.Sprintf("2026-08-22 17:%02d:%02d,%03d - INFO - Prompt processing progress: #%d/100000", i/60000%60, i/1000%60, i%1000, i)
	}
}

// write appends lines [from, to) to the current file.
func (w *engineLogWriter) write(from, to int) {
	var b bytes.Buffer
	for i := from; i < to; i++ {
		b.WriteString(lineText(i))
		b.WriteByte('\n')
		w.gens[i] = w.gen
		if b.Len() > 64<<10 {
			_, err := w.f.Write(b.Bytes())
			require.NoError(w.t, err)
			b.Reset()
		}
	}
	_, err := w.f.Write(b.Bytes())
	require.NoError(w.t, err)
}

// rotate renames the file the way lumberjack does and starts a new one.
func (w *engineLogWriter) rotate() {
	require.NoError(w.t, w.f.Close())
	stamp := time.Date(2026, 8, 22, 17, 0, w.gen, 0, time.UTC).Format("2006-01-02T15-04-05.000")
	require.NoError(w.t, os.Rename(filepath.Join(w.dir, "server.log"), filepath.Join(w.dir, "server-"+stamp+".log")))
	w.gen++
	w.open()
}

// truncate empties the file in place and goes on writing to it.
func (w *engineLogWriter) truncate() {
	require.NoError(w.t, w.f.Truncate(0))
	w.gen++
}

// expected says, for the lines written so far, which records must arrive
// (all but the access log) and the lines per severity/category.
func (w *engineLogWriter) expected(upTo int) (delivered []int, lines map[string]int) {
	lines = map[string]int{}
	for i := 0; i < upTo; i++ {
		sev, cat := lineKind(i)
		lines[sev+"/"+cat]++
		if cat != "http" {
			delivered = append(delivered, i)
		}
	}
	return delivered, lines
}

// jsonlRecord is the part of a JSONL line the test reads.
type jsonlRecord struct {
	Body       string         `json:"body"`
	Attributes map[string]any `json:"attributes"`
}

var lineNumber = regexp.MustCompile(`[#=](\d+)`)

func (r jsonlRecord) number(t *testing.T) int {
	m := lineNumber.FindStringSubmatch(r.Body)
	require.NotNil(t, m, r.Body)
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return n
}

// jsonlFiles are the sink's file and its rotated copies, oldest first.
func jsonlFiles(dataDir string) []string {
	backups, _ := filepath.Glob(filepath.Join(dataDir, "logs", "engine-*.jsonl"))
	sort.Strings(backups)
	return append(backups, filepath.Join(dataDir, "logs", "engine.jsonl"))
}

func countJSONL(dataDir string) int {
	n := 0
	for _, f := range jsonlFiles(dataDir) {
		b, err := os.ReadFile(f)
		if err == nil {
			n += bytes.Count(b, []byte{'\n'})
		}
	}
	return n
}

// readJSONL reads the records of the sink's files. A last piece with no
// newline is a write still in progress (a write of many pages shows page by
// page) and is left for the next read.
func readJSONL(t *testing.T, dataDir string) []jsonlRecord {
	t.Helper()
	var out []jsonlRecord
	for _, f := range jsonlFiles(dataDir) {
		b, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		for line := range bytes.Lines(b) {
			if !bytes.HasSuffix(line, []byte("\n")) {
				break
			}
			var r jsonlRecord
			require.NoError(t, json.Unmarshal(line, &r), string(line))
			out = append(out, r)
		}
	}
	return out
}

func waitForJSONL(s *stack, want int, timeout time.Duration) {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for countJSONL(s.dataDir) < want {
		select {
		case <-s.exited:
			s.t.Fatalf("the collector exited with %d of %d records in the JSONL file", countJSONL(s.dataDir), want)
		default:
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the JSONL file has %d records after %s, want %d", countJSONL(s.dataDir), timeout, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sum adds up the values of the series of name whose labels include labels.
func sum(sc *promtext.Scrape, name string, labels ...string) float64 {
	total := 0.0
	fam := sc.Families[name]
	if fam == nil {
		return 0
	}
	for _, m := range fam.GetMetric() {
		ok := true
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
					found = true
				}
			}
			ok = ok && found
		}
		if ok {
			total += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return total
}

// settled waits until the :9106 series of this collector run show its lines
// classified, the ones that do not pass the filter (records fewer) dropped,
// and the records shipped by both sinks. The condition holds every total the
// tests then assert by label: counters only grow, so when a family's total
// is reached, each of its series is at its final value too.
func settled(s *stack, lines, records int) *promtext.Scrape {
	s.t.Helper()
	var last string
	return s.waitForShowing("prometheus/logs", 60*time.Second, fmt.Sprintf("the pipeline to settle at %d lines and %d records", lines, records),
		func(sc *promtext.Scrape) bool {
			seen := sum(sc, "mlx_log_tailer_lines_total")
			dropped := sum(sc, "mlx_log_tailer_dropped_total")
			queued := sum(sc, "mlx_log_tailer_queue_depth")
			toFile := sum(sc, "mlx_log_tailer_shipped_total", "sink", "mlx_jsonl")
			toOTLP := sum(sc, "mlx_log_tailer_shipped_total", "sink", "mlx_otlp_http")
			last = fmt.Sprintf("lines %v, dropped %v, queued %v, shipped to the file %v and by OTLP %v, errors %v",
				seen, dropped, queued, toFile, toOTLP, sum(sc, "mlx_log_tailer_errors_total"))
			return seen == float64(lines) && dropped == float64(lines-records) && queued == 0 &&
				toFile == float64(records) && toOTLP == float64(records)
		},
		func() string { return last })
}

func TestLogPipelineDeliversEveryLineExactlyOnce(t *testing.T) {
	dataDir := t.TempDir()
	opts := collectorOptions{configs: []string{"config/mlx.yaml", logOnlyOverlay(t)}, dataDir: dataDir}
	w := newEngineLogWriter(t, dataDir)
	start := time.Now()

	// Run 1: a file, a rotation with unread lines in the old file, a
	// truncation (once the collector has read all, as copytruncate needs).
	s := startCollector(t, opts)
	w.write(0, 25_000)
	w.write(25_000, 30_000)
	w.rotate()
	w.write(30_000, 55_000)
	delivered, _ := w.expected(55_000)
	waitForJSONL(s, len(delivered), 90*time.Second)
	// Truncating loses what the collector has not read yet (the last line
	// waits for the next one, or for force_flush_period): wait for it.
	settled(s, 55_000, len(delivered))
	w.truncate()
	w.write(55_000, 65_000)
	delivered, _ = w.expected(65_000)
	waitForJSONL(s, len(delivered), 90*time.Second)
	run1 := settled(s, 65_000, len(delivered))
	run1Records := len(delivered)
	s.stop()

	// While the collector is down: more lines, and a rotation.
	w.write(65_000, 75_000)
	w.rotate()
	w.write(75_000, 85_000)

	// Run 2 picks up from its checkpoints.
	s = startCollector(t, opts)
	w.write(85_000, 100_000)
	delivered, lines := w.expected(100_000)
	waitForJSONL(s, len(delivered), 90*time.Second)
	run2 := settled(s, 100_000-65_000, len(delivered)-run1Records)
	t.Logf("100,000 lines (%d records) from file to JSONL in %s, two collector runs", len(delivered), time.Since(start).Round(time.Millisecond))

	// Exactly once each, in order within each file.
	records := readJSONL(t, dataDir)
	seen := map[int]int{}
	last := map[int]int{}
	for _, r := range records {
		n := r.number(t)
		seen[n]++
		gen := w.gens[n]
		if prev, ok := last[gen]; ok {
			require.Greater(t, n, prev, "line %d after line %d in file %d", n, prev, gen)
		}
		last[gen] = n
	}
	for _, n := range delivered {
		require.Equal(t, 1, seen[n], "line %d arrived %d times", n, seen[n])
	}
	require.Len(t, records, len(delivered), "nothing else arrived")

	// The records are classified.
	bySeverity := map[string]int{}
	for _, r := range records {
		bySeverity[r.Attributes["mlx.log.severity"].(string)]++
		sev, cat := lineKind(r.number(t))
		require.Equal(t, sev, r.Attributes["mlx.log.severity"], r.Body)
		require.Equal(t, cat, r.Attributes["mlx.log.category"], r.Body)
	}

	// The counters of the two runs add up to what was written and arrived.
	both := func(name string, labels ...string) float64 {
		return sum(run1, name, labels...) + sum(run2, name, labels...)
	}
	for key, n := range lines {
		sev, cat, _ := strings.Cut(key, "/")
		assert.Equal(t, float64(n), both("mlx_log_tailer_lines_total", "severity", sev, "category", cat), key)
	}
	assert.Equal(t, float64(lines["info/http"]), both("mlx_log_tailer_dropped_total", "reason", "http_filter"))
	for sev, n := range bySeverity {
		assert.Equal(t, float64(n), both("mlx_log_tailer_shipped_total", "severity", sev, "sink", "mlx_jsonl"), sev)
		assert.Equal(t, float64(n), both("mlx_log_tailer_shipped_total", "severity", sev, "sink", "mlx_otlp_http"), sev)
	}
	for _, reason := range []string{"rate_limit", "empty", "queue_full", "export_failed"} {
		assert.Zero(t, both("mlx_log_tailer_dropped_total", "reason", reason), reason)
	}
	assert.Zero(t, both("mlx_log_tailer_errors_total"))
	st, err := os.Stat(filepath.Join(dataDir, "server.log"))
	require.NoError(t, err)
	assert.Equal(t, float64(st.Size()), sum(run2, "mlx_log_tailer_file_bytes"))
	assert.Equal(t, 1.0, sum(run2, "mlx_log_tailer_up"))
}

func TestLogHealthScrapeServesExactlyTheDocumentedSeries(t *testing.T) {
	s := startCollector(t, collectorOptions{configs: []string{"config/mlx.yaml", logOnlyOverlay(t)}})
	w := newEngineLogWriter(t, s.dataDir)
	w.write(0, 100)
	delivered, _ := w.expected(100)
	sc := settled(s, 100, len(delivered))
	documented, err := doccheck.MetadataNames(filepath.Join(repoRoot, "receiver/loghealthreceiver/metadata.yaml"))
	require.NoError(t, err)
	assert.Equal(t, documented, sc.Names())
	assert.Equal(t, "COUNTER", sc.Families["mlx_log_tailer_shipped_total"].GetType().String())
	assert.Equal(t, "GAUGE", sc.Families["mlx_log_tailer_queue_depth"].GetType().String())
	n := `node="` + fleet.NodeName("") + `",`
	assert.Equal(t, []string{`mlx_log_tailer_queue_depth{` + n + `sink="mlx_jsonl"}`, `mlx_log_tailer_queue_depth{` + n + `sink="mlx_otlp_http"}`, `mlx_log_tailer_queue_depth{` + n + `sink="mlx_otlp_http/vlogs"}`},
		sc.Series("mlx_log_tailer_queue_depth"), "only the data points' own labels and the node's")
}

// counted says how many records d accepted, and how many of those were
// accepted before.
func counted(d *otlptest.LogsDestination) (records, duplicates int) {
	seen := map[string]bool{}
	for _, body := range d.Bodies() {
		records++
		if seen[body] {
			duplicates++
		}
		seen[body] = true
	}
	return records, duplicates
}

// sinkOverlay points the OTLP sink at d and retries quickly.
func sinkOverlay(d *otlptest.LogsDestination, extra ...string) []string {
	return append([]string{
		"exporters::mlx_otlp_http::endpoint=" + d.URL,
		"exporters::mlx_otlp_http::retry_on_failure::initial_interval=100ms",
		"exporters::mlx_otlp_http::retry_on_failure::max_interval=500ms",
	}, extra...)
}

func TestLogSinkDownForAWhileLosesNothing(t *testing.T) {
	d := otlptest.NewLogsDestination(t)
	d.SetStatus(http.StatusServiceUnavailable)
	dataDir := t.TempDir()
	opts := collectorOptions{configs: []string{"config/mlx.yaml", logOnlyOverlay(t)}, dataDir: dataDir, sets: sinkOverlay(d)}
	s := startCollector(t, opts)
	w := newEngineLogWriter(t, dataDir)
	w.write(0, 5_000)
	delivered, _ := w.expected(5_000)

	// The file sink is not held up by the other one.
	waitForJSONL(s, len(delivered), 60*time.Second)
	sc := s.waitFor("prometheus/logs", 30*time.Second, "every record queued for the OTLP sink", func(sc *promtext.Scrape) bool {
		return sum(sc, "mlx_log_tailer_queue_depth", "sink", "mlx_otlp_http") == float64(len(delivered))
	})
	assert.Positive(t, sum(sc, "mlx_log_tailer_errors_total"), "failed attempts are counted")
	assert.Zero(t, sum(sc, "mlx_log_tailer_shipped_total", "sink", "mlx_otlp_http"))

	// A restart while it is still down: the queue is on disk.
	s.stop()
	s = startCollector(t, opts)
	w.write(5_000, 6_000)
	delivered, _ = w.expected(6_000)
	s.waitFor("prometheus/logs", 30*time.Second, "the queue restored and grown", func(sc *promtext.Scrape) bool {
		return sum(sc, "mlx_log_tailer_queue_depth", "sink", "mlx_otlp_http") == float64(len(delivered))
	})

	// Back up: everything arrives, once.
	d.SetStatus(0)
	sc = s.waitFor("prometheus/logs", 60*time.Second, "the OTLP queue drained", func(sc *promtext.Scrape) bool {
		return sum(sc, "mlx_log_tailer_queue_depth", "sink", "mlx_otlp_http") == 0
	})
	records, dups := counted(d)
	assert.Equal(t, len(delivered), records, "every record arrived")
	assert.Zero(t, dups, "none twice")
	projects := map[string]bool{}
	for _, p := range d.Projects() {
		projects[p] = true
	}
	assert.Equal(t, map[string]bool{"mlx": true}, projects, "with the projectName header")
	assert.Equal(t, float64(records), sum(sc, "mlx_log_tailer_shipped_total", "sink", "mlx_otlp_http"),
		"the first run shipped nothing: this one shipped all")
	assert.Zero(t, sum(sc, "mlx_log_tailer_dropped_total", "sink", "mlx_otlp_http"))
	waitForJSONL(s, len(delivered), 30*time.Second)
	assert.Len(t, readJSONL(t, dataDir), len(delivered), "the file sink has each record once too")
}

func TestLogSinkPastItsQueueBoundDropsAndCounts(t *testing.T) {
	d := otlptest.NewLogsDestination(t)
	d.SetStatus(http.StatusServiceUnavailable)
	s := startCollector(t, collectorOptions{
		configs: []string{"config/mlx.yaml", logOnlyOverlay(t)},
		sets:    sinkOverlay(d, "exporters::mlx_otlp_http::sending_queue::queue_size=1000"),
	})
	w := newEngineLogWriter(t, s.dataDir)
	w.write(0, 3_000)
	delivered, _ := w.expected(3_000)
	sc := s.waitFor("prometheus/logs", 60*time.Second, "every record queued or dropped", func(sc *promtext.Scrape) bool {
		return sum(sc, "mlx_log_tailer_queue_depth", "sink", "mlx_otlp_http")+
			sum(sc, "mlx_log_tailer_dropped_total", "sink", "mlx_otlp_http") == float64(len(delivered))
	})
	queued := sum(sc, "mlx_log_tailer_queue_depth", "sink", "mlx_otlp_http")
	assert.LessOrEqual(t, queued, 1000.0, "the bound holds")
	assert.Positive(t, sum(sc, "mlx_log_tailer_dropped_total", "reason", "queue_full", "sink", "mlx_otlp_http"))

	d.SetStatus(0)
	sc = s.waitFor("prometheus/logs", 60*time.Second, "the OTLP queue drained", func(sc *promtext.Scrape) bool {
		return sum(sc, "mlx_log_tailer_queue_depth", "sink", "mlx_otlp_http") == 0
	})
	records, dups := counted(d)
	assert.Equal(t, queued, float64(records), "what was queued arrived")
	assert.Zero(t, dups)
	assert.Equal(t, float64(records), sum(sc, "mlx_log_tailer_shipped_total", "sink", "mlx_otlp_http"))
	assert.Equal(t, float64(len(delivered)), float64(records)+sum(sc, "mlx_log_tailer_dropped_total", "reason", "queue_full", "sink", "mlx_otlp_http"),
		"arrived + dropped = sent")
	assert.Zero(t, sum(sc, "mlx_log_tailer_dropped_total", "sink", "mlx_jsonl"), "the file sink dropped nothing")
}

// BenchmarkLogPipeline measures lines per second from the file to the JSONL
// file, through the shipped config: 200,000 lines appended at once to a
// running collector, timed until the last record is in the JSONL file.
//
//	MLX_OTELCOL=... MLXSIM=... go test -tags e2e -run XXX -bench LogPipeline -benchtime 1x ./test/e2e/
func BenchmarkLogPipeline(b *testing.B) {
	for _, bc := range []struct {
		name string
		sets []string
	}{
		{"both-sinks", nil},
		{"jsonl-only", []string{"service::pipelines::logs/engine::exporters=[mlx_jsonl]"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			const lines = 200_000
			delivered := 0
			for i := 0; i < lines; i++ {
				if _, cat := lineKind(i); cat != "http" {
					delivered++
				}
			}
			var elapsed time.Duration
			for i := 0; i < b.N; i++ {
				s := startCollector(b, collectorOptions{configs: []string{"config/mlx.yaml", logOnlyOverlay(b)}, sets: bc.sets})
				w := newEngineLogWriter(b, s.dataDir)
				s.waitFor("prometheus/logs", 30*time.Second, "the pipeline up", func(sc *promtext.Scrape) bool {
					return sum(sc, "mlx_log_tailer_up") == 1
				})
				start := time.Now()
				w.write(0, lines)
				waitForJSONL(s, delivered, 5*time.Minute)
				elapsed += time.Since(start)
				s.stop()
			}
			b.ReportMetric(float64(lines*b.N)/elapsed.Seconds(), "lines/s")
		})
	}
}

func TestLogPipelineValidateRejectsABadConfig(t *testing.T) {
	bin := binary(t, "MLX_OTELCOL")
	for _, tc := range []struct{ set, want string }{
		{"processors::mlx_log_classify::timezone=Mars/Olympus", `timezone: "Mars/Olympus" is not a time zone`},
		{"processors::mlx_log_classify::rate_limit::lines_per_second=-5", "rate_limit.lines_per_second: must be 0 (off) or positive"},
		{"exporters::mlx_jsonl::sending_queue::num_consumers=4", "num_consumers: must be 1 so the file keeps the order"},
		{"exporters::mlx_jsonl::format=xml", `format: "xml" is not one of record, otlp_json`},
		{"receivers::mlx_log_health::file_path=", "file_path: must be set"},
	} {
		out, err := exec.Command(bin, "validate", "--config", filepath.Join(repoRoot, "config/mlx.yaml"), "--set", tc.set).CombinedOutput()
		require.Error(t, err, tc.set)
		assert.Contains(t, string(out), tc.want)
	}
}

func TestLogPipelineClassifiesTheSimulatedEngine(t *testing.T) {
	s := startCollector(t, collectorOptions{
		configs: []string{"config/mlx.yaml", "config/demo.yaml"},
		env:     map[string]string{"MLXSIM_LOAD_DELAY": "0s"},
		sets:    []string{"receivers::mlx_log_health::collection_interval=200ms"},
	})
	// The supervisor's readiness probes are requests: each logs a cache
	// block, prefill progress and an access line.
	sc := s.waitFor("prometheus/logs", 60*time.Second, "cache, startup and access lines from the engine", func(sc *promtext.Scrape) bool {
		return sum(sc, "mlx_log_tailer_lines_total", "category", "cache") >= 4 &&
			sum(sc, "mlx_log_tailer_lines_total", "category", "startup") >= 1 &&
			sum(sc, "mlx_log_tailer_dropped_total", "reason", "http_filter") >= 1 &&
			sum(sc, "mlx_log_tailer_shipped_total", "sink", "mlx_jsonl") >= 5
	})
	assert.Zero(t, sum(sc, "mlx_log_tailer_lines_total", "category", "other"), "no line of the simulated engine falls to other: every shape it writes is in the rule table")

	// The file is written a moment after the lines are counted.
	var categories map[string]int
	require.Eventually(t, func() bool {
		categories = map[string]int{}
		for _, r := range readJSONL(t, s.dataDir) {
			categories[r.Attributes["mlx.log.category"].(string)]++
			assert.Equal(t, "mlx", r.Attributes["mlx.log.project"])
		}
		return categories["cache"] > 0 && categories["startup"] > 0
	}, 30*time.Second, 100*time.Millisecond, "cache and startup records in the file")
	assert.Zero(t, categories["http"], "the access log is not shipped")
}

// The shipped config alone keeps the engine's log in the JSON lines file
// and in the log store (VictoriaLogs), and sends nothing to its own otlp
// receiver: that loop would be work with no result.
// config/otlp-logs.yaml adds the OTLP sink.
func TestShippedConfigSendsLogsToTheStoreNotItself(t *testing.T) {
	vl := startVictoriaLogs(t)
	s := startCollector(t, collectorOptions{configs: []string{"config/mlx.yaml", logOnlyOverlay(t)}, noOTLPLogs: true, vlogsURL: vl.url,
		env: map[string]string{"MLX_NODE_NAME": "logs-node"}})
	w := newEngineLogWriter(t, s.dataDir)
	w.write(0, 50)
	delivered, _ := w.expected(50)
	records := float64(len(delivered))
	sc := s.waitFor("prometheus/logs", 60*time.Second, "every line read and shipped", func(sc *promtext.Scrape) bool {
		return sum(sc, "mlx_log_tailer_lines_total") == 50 && sum(sc, "mlx_log_tailer_queue_depth") == 0 &&
			sum(sc, "mlx_log_tailer_shipped_total", "sink", "mlx_otlp_http/vlogs") == records &&
			sum(sc, "mlx_log_tailer_shipped_total", "sink", "mlx_jsonl") == records
	})
	assert.Equal(t, []string{`mlx_log_tailer_queue_depth{node="logs-node",sink="mlx_jsonl"}`, `mlx_log_tailer_queue_depth{node="logs-node",sink="mlx_otlp_http/vlogs"}`},
		sc.Series("mlx_log_tailer_queue_depth"), "the file and the log store; no OTLP sink without config/otlp-logs.yaml")
	shipped := sum(sc, "mlx_log_tailer_shipped_total", "sink", "mlx_jsonl")
	assert.Positive(t, shipped)
	// The lines are of a fixed old date: no time filter.
	vl.waitRow(t, `{service.name="mlx-lm-server"} | count() n`, "VictoriaLogs has every shipped record",
		func(r map[string]string) bool { return r["n"] == fmt.Sprint(shipped) })
	assert.Len(t, readJSONL(t, s.dataDir), int(shipped), "the JSON lines file has every shipped record")
}
