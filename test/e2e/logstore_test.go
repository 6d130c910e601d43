//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

// The README's queries, one per signal, the same strings (a test holds
// them to the README).
const (
	// Memory in use per node (TestStackTwoNodes runs it).
	readmeMetricQuery = `sum by (node) (mlx_hw_mem_used_bytes)`
	// The proxy's access log: every request with its trace id.
	readmeAccessQuery = `_time:15m {service.name="mlx-metrics-proxy"} url.path:="/v1/chat/completions" | fields _time, trace_id, http.response.status_code`
	// The log lines of a crash: the engine's errors, a traceback as one
	// record.
	readmeCrashQuery = `_time:1h {service.name="mlx-lm-server"} mlx.log.severity:in(error,fatal) | fields _time, mlx.log.category, exception.type, _msg`
)

// The README shows the queries the tests run, not others.
func TestREADMEShowsTheTestedQueries(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	require.NoError(t, err)
	for _, q := range []string{readmeMetricQuery, readmeAccessQuery, readmeCrashQuery} {
		assert.Contains(t, string(b), "'query="+q+"'", "README.md shows the tested query")
	}
}

// victoriaLogs is the project's build of VictoriaLogs (VLOGS) on a free
// port, with its data in a temporary directory. Its retention is long:
// VictoriaLogs drops, silently to the sender, records older than the
// retention, and the log pipeline's tests write lines of a fixed old date.
type victoriaLogs struct{ url string }

func startVictoriaLogs(t *testing.T) *victoriaLogs {
	t.Helper()
	v := &victoriaLogs{url: fmt.Sprintf("http://127.0.0.1:%d", freePort(t))}
	cmd := exec.Command(binary(t, "VLOGS"), "-storageDataPath="+filepath.Join(t.TempDir(), "vlogs"),
		"-httpListenAddr="+strings.TrimPrefix(v.url, "http://"), "-loggerLevel=WARN", "-retentionPeriod=100y")
	startStore(t, "victoria-logs", cmd, v.url+"/health")
	return v
}

// query runs a LogsQL query and returns its rows (JSON lines).
func (v *victoriaLogs) query(t *testing.T, q string) []map[string]string {
	t.Helper()
	resp, err := http.PostForm(v.url+"/select/logsql/query", url.Values{"query": {q}})
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "LogsQL %s", q)
	var rows []map[string]string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		row := map[string]string{}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &row), sc.Text())
		rows = append(rows, row)
	}
	require.NoError(t, sc.Err())
	return rows
}

// waitRows waits for a query to return a row that cond accepts.
func (v *victoriaLogs) waitRow(t *testing.T, q string, what string, cond func(map[string]string) bool) map[string]string {
	t.Helper()
	var got map[string]string
	require.Eventually(t, func() bool {
		for _, r := range v.query(t, q) {
			if cond(r) {
				got = r
				return true
			}
		}
		return false
	}, 30*time.Second, 200*time.Millisecond, "%s: LogsQL %s", what, q)
	return got
}

// Every signal stored, and found with the README's queries: the proxy's
// access log and the engine's log in VictoriaLogs (by OTLP, from the
// shipped config), the request's trace in Jaeger by the id the access log
// gives, and the lines of an engine crash.
func TestLogsAndTracesInTheirStores(t *testing.T) {
	vl := startVictoriaLogs(t)
	j := startJaeger(t)
	// The engine's generation thread dies on a Metal fault after its
	// second completion (MLX 0.32: the traceback, the process lives on and
	// the supervisor restarts it); the supervisor probes /v1/models, so
	// only this test's requests count. (An exit with a traceback after
	// serving, which --sim-exit-after prints, is not something a real
	// mlx_lm does: socketserver's _handle_request_noblock prints a
	// request's exception and serves on, CPython 3.12 socketserver.py.)
	crash := writeOverlay(t, "crash.yaml", `receivers:
  mlx_supervisor:
    command: ["${env:MLXSIM}", --model, "${env:MLX_MODEL:-mlx-community/Qwen3-4B-4bit}", --host, 127.0.0.1, --port, "${env:MLX_ENGINE_PORT}", --sim-metal-fault-after, "2"]
    health_check:
      probe: models
`)
	s := startCollector(t, collectorOptions{
		configs:  []string{"config/mlx.yaml", "config/demo.yaml", crash},
		sets:     traceSets(j, startOpik(t)),
		vlogsURL: vl.url,
		env:      map[string]string{"MLXSIM_LOAD_DELAY": "0s"},
	})
	s.waitFor("prometheus/supervisor", 60*time.Second, "the engine ready", func(sc *promtext.Scrape) bool {
		v, _ := sc.Value("mlx_server_ready")
		return v == 1
	})
	proxy := fmt.Sprintf("http://127.0.0.1:%d/v1/chat/completions", s.ports["mlx_proxy"])
	body := `{"model": "mlx-community/Qwen3-4B-4bit", "messages": [{"role": "user", "content": "Say hi"}], "max_tokens": 8}`

	// A request: its access-log record names its trace, which Jaeger has.
	traceID := newTraceID(t)
	status, _ := tracedPost(t, proxy, traceID, body)
	require.Equal(t, http.StatusOK, status)
	row := vl.waitRow(t, readmeAccessQuery, "the request in the access log", func(r map[string]string) bool { return r["trace_id"] == traceID })
	assert.Equal(t, "200", row["http.response.status_code"])
	spans, services := j.waitTrace(t, row["trace_id"])
	assert.NotEmpty(t, spans)
	assert.Contains(t, services, "mlx-metrics-proxy")

	// The engine's own lines of that request are there too, classified.
	gen := vl.waitRow(t, `_time:15m {service.name="mlx-lm-server"} mlx.log.category:=generation`, "the engine's generation lines",
		func(r map[string]string) bool { return strings.Contains(r["_msg"], "Prompt processing progress") })
	assert.Equal(t, "info", gen["mlx.log.severity"])

	// The second request is answered, then the generation thread dies:
	// its traceback is one record, found by the crash query, and named a
	// GPU fault.
	status, _ = tracedPost(t, proxy, newTraceID(t), body)
	require.Equal(t, http.StatusOK, status)
	tb := vl.waitRow(t, readmeCrashQuery, "the crash's traceback", func(r map[string]string) bool {
		return r["exception.type"] == "RuntimeError"
	})
	assert.Equal(t, "gpu", tb["mlx.log.category"])
	assert.True(t, strings.HasPrefix(tb["_msg"], "Traceback") || strings.Contains(tb["_msg"], "\nTraceback"), "the traceback's lines, together: %q", tb["_msg"])
	assert.Contains(t, tb["_msg"], "RuntimeError: [METAL] Command buffer execution failed")

	// What went to VictoriaLogs is what the JSON lines file has: nothing
	// lost on the way (the file is the durable copy). The restarted engine
	// may still be logging: the two must meet.
	var inStore, inFile string
	require.Eventually(t, func() bool {
		rows := vl.query(t, `_time:1h {service.name="mlx-lm-server"} | count() n`)
		b, err := os.ReadFile(filepath.Join(s.dataDir, "logs", "engine.jsonl"))
		if len(rows) != 1 || err != nil {
			return false
		}
		inStore, inFile = rows[0]["n"], fmt.Sprint(strings.Count(string(b), "\n"))
		return inStore == inFile
	}, 30*time.Second, 500*time.Millisecond, "records in VictoriaLogs (%s) and in engine.jsonl (%s)", inStore, inFile)
}
