//go:build e2e

package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mdgen/mdschema"
	"github.com/mlx-otelcol/mlx-otelcol/internal/opikid"
	"github.com/mlx-otelcol/mlx-otelcol/standins/opiktest"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/syncbuf"
)

// jaeger is a Jaeger v2 (the project's build, JAEGER) with the shipped
// config, every port moved to a free one and its Badger store in a
// directory of the test's.
type jaeger struct {
	query string // host:port of the query API
	otlp  string // host:port of OTLP/gRPC in
}

func startJaeger(t *testing.T) *jaeger {
	t.Helper()
	j := &jaeger{query: fmt.Sprintf("127.0.0.1:%d", freePort(t)), otlp: fmt.Sprintf("127.0.0.1:%d", freePort(t))}
	cmd := exec.Command(binary(t, "JAEGER"), "--config", filepath.Join(repoRoot, "config/jaeger/jaeger.yaml"))
	cmd.Env = append(os.Environ(), "JAEGER_DATA_DIR="+t.TempDir(),
		"JAEGER_QUERY_HTTP="+j.query, "JAEGER_OTLP_GRPC="+j.otlp,
		fmt.Sprintf("JAEGER_QUERY_GRPC=127.0.0.1:%d", freePort(t)),
		fmt.Sprintf("JAEGER_OTLP_HTTP=127.0.0.1:%d", freePort(t)))
	startStore(t, "jaeger", cmd, "http://"+j.query+"/api/services")
	return j
}

// startStore runs a store the tests send to (Jaeger, VictoriaLogs) until
// the test ends, and waits until ready answers 200. Its output is logged
// when the test failed.
func startStore(t *testing.T, name string, cmd *exec.Cmd, ready string) {
	t.Helper()
	out := &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	// Dies with the test, even when it exits without its cleanups.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("%s output:\n%s", name, tailOf([]byte(out.String()), 3000))
		}
	})
	require.Eventually(t, func() bool {
		resp, err := http.Get(ready)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 30*time.Second, 50*time.Millisecond, "%s answers", name)
}

// jaegerSpan is a span as Jaeger's query API returns it.
type jaegerSpan struct {
	TraceID       string `json:"traceID"`
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	References    []struct {
		RefType string `json:"refType"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	StartTime int64 `json:"startTime"` // µs
	Duration  int64 `json:"duration"`  // µs
	Tags      []struct {
		Key   string `json:"key"`
		Type  string `json:"type"`
		Value any    `json:"value"`
	} `json:"tags"`
	Logs []struct {
		Fields []struct {
			Key   string `json:"key"`
			Value any    `json:"value"`
		} `json:"fields"`
	} `json:"logs"`
	ProcessID string `json:"processID"`
}

func (s jaegerSpan) tag(key string) (any, bool) {
	for _, t := range s.Tags {
		if t.Key == key {
			return t.Value, true
		}
	}
	return nil, false
}

// trace reads one trace; found is false on Jaeger's 404.
func (j *jaeger) trace(t *testing.T, traceID string) (spans []jaegerSpan, services []string, found bool) {
	t.Helper()
	resp, err := http.Get("http://" + j.query + "/api/traces/" + traceID)
	require.NoError(t, err)
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil, nil, false
	}
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var body struct {
		Data []struct {
			Spans     []jaegerSpan `json:"spans"`
			Processes map[string]struct {
				ServiceName string `json:"serviceName"`
			} `json:"processes"`
		} `json:"data"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	if len(body.Data) == 0 {
		return nil, nil, false
	}
	for _, p := range body.Data[0].Processes {
		services = append(services, p.ServiceName)
	}
	return body.Data[0].Spans, services, true
}

// waitTrace waits for a trace to be in Jaeger.
func (j *jaeger) waitTrace(t *testing.T, traceID string) ([]jaegerSpan, []string) {
	t.Helper()
	var (
		spans    []jaegerSpan
		services []string
	)
	require.Eventually(t, func() bool {
		var found bool
		spans, services, found = j.trace(t, traceID)
		return found
	}, 20*time.Second, 100*time.Millisecond, "trace %s in jaeger", traceID)
	return spans, services
}

func newTraceID(t *testing.T) string {
	var b [16]byte
	_, err := rand.Read(b[:])
	require.NoError(t, err)
	return hex.EncodeToString(b[:])
}

// tracedPost sends a completion through the proxy as part of the client's
// trace traceID, and returns the answer's status and body.
func tracedPost(t *testing.T, url, traceID, body string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// traceSets point the collector's traces at this Jaeger and Opik.
func traceSets(j *jaeger, opik *opiktest.Server) []string {
	return []string{
		"exporters::otlp_grpc/jaeger::endpoint=" + j.otlp,
		"exporters::opik::endpoint=" + opik.URL(),
	}
}

func startOpik(t *testing.T) *opiktest.Server {
	t.Helper()
	opik := opiktest.New()
	require.NoError(t, opik.Listen(fmt.Sprintf("127.0.0.1:%d", freePort(t))))
	t.Cleanup(opik.Close)
	return opik
}

// Traffic through the built collector: every traced completion is one
// span in Jaeger with the documented attributes, the same request is a
// readable trace in Opik's stand-in (the request as input, the answer as
// output, no proxy figures in the input) under the id minted from the
// span's ids and start, with its feedback scores and no orphan score, and
// the access log has the request with its ids.
func TestTracesInJaegerAndOpik(t *testing.T) {
	j := startJaeger(t)
	opik := startOpik(t)
	s := startCollector(t, collectorOptions{configs: demoConfigs, sets: traceSets(j, opik),
		env: map[string]string{"MLXSIM_LOAD_DELAY": "0s"}})
	waitEngineReady(s)
	url := s.proxyURL("/v1/chat/completions")

	cases := []struct {
		name, body string
		scored     bool // logprobs injected: token_confidence is written
	}{
		{"chat", `{"messages": [{"role": "user", "content": "Say hello"}], "max_tokens": 8}`, true},
		{"stream", `{"messages": [{"role": "user", "content": "Tell a story"}], "max_tokens": 8, "stream": true}`, false},
		{"tool call", `{"messages": [{"role": "user", "content": "Use get_weather for Oslo"}], "stream": true, "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]}`, false},
	}
	schema, err := mdschema.Load(filepath.Join(repoRoot, "receiver/proxyreceiver/metadata.yaml"))
	require.NoError(t, err)
	ids := map[string]string{}
	for _, c := range cases {
		id := newTraceID(t)
		ids[c.name] = id
		status, _ := tracedPost(t, url, id, c.body, "Authorization", "Bearer sk-not-for-spans")
		require.Equal(t, http.StatusOK, status, c.name)
	}
	untraced := newTraceID(t)
	status, _ := tracedPost(t, url, untraced, cases[0].body, "X-Mlx-Trace", "0")
	require.Equal(t, http.StatusOK, status)

	for _, c := range cases {
		spans, services := j.waitTrace(t, ids[c.name])
		require.Len(t, spans, 1, c.name)
		sp := spans[0]
		model, _ := sp.tag("gen_ai.request.model")
		require.NotEmpty(t, model, c.name)
		assert.Equal(t, fmt.Sprintf("chat %s", model), sp.OperationName, "%s: GenAI's span name", c.name)
		assert.Equal(t, []string{"mlx-metrics-proxy"}, services)
		require.Len(t, sp.References, 1, "a child of the client's span")
		assert.Equal(t, "00f067aa0ba902b7", sp.References[0].SpanID)
		keys := map[string]bool{}
		for _, tag := range sp.Tags {
			keys[tag.Key] = true
			assert.NotContains(t, fmt.Sprint(tag.Value), "sk-not-for-spans", tag.Key)
		}
		for _, e := range schema.SpanAttributes {
			if e.Value.Always() {
				assert.True(t, keys[e.Key], "%s: %s is always on the span", c.name, e.Key)
			}
		}
		for k := range keys {
			if k == "otel.scope.name" || k == "otel.scope.version" || k == "span.kind" || k == "error" || k == "otel.status_code" || k == "otel.status_description" {
				continue // Jaeger's own tags for the scope, kind and status
			}
			_, documented := schema.SpanAttributes.Lookup(k)
			assert.True(t, documented, "%s: %s is in metadata.yaml", c.name, k)
		}
		for _, k := range []string{"mlx.hallucination_risk", "llm.output_messages.0.message.role", "gen_ai.usage.output_tokens"} {
			assert.True(t, keys[k], "%s: %s", c.name, k)
		}

		// The same request in Opik's stand-in, under the id minted from
		// the ids and the start Jaeger shows, with its scores.
		var tid [16]byte
		var sid [8]byte
		_, err := hex.Decode(tid[:], []byte(ids[c.name]))
		require.NoError(t, err)
		_, err = hex.Decode(sid[:], []byte(sp.SpanID))
		require.NoError(t, err)
		opikID := opikid.Trace(tid, sid, time.UnixMicro(sp.StartTime))
		want := 2
		if c.scored {
			want = 3
		}
		require.Eventually(t, func() bool {
			tr, ok := opik.Trace(opikID)
			return ok && len(tr.FeedbackScores) == want
		}, 20*time.Second, 100*time.Millisecond, "%s: trace %s with %d scores in Opik", c.name, opikID, want)
		tr, _ := opik.Trace(opikID)
		assert.Equal(t, "mlx", tr.ProjectName)
		assert.Equal(t, ids[c.name], tr.OTelTraceID)
		in, _ := tr.Input.(map[string]any)
		assert.Contains(t, in, "messages", "%s: the input is the request", c.name)
		for k := range in {
			assert.False(t, strings.HasPrefix(k, "mlx.") || strings.HasPrefix(k, "http."), "%s: %s in the input", c.name, k)
		}
		out, _ := tr.Output.(map[string]any)
		assert.Equal(t, "assistant", out["role"], "%s: the output is the answer", c.name)
		risk, _ := sp.tag("mlx.hallucination_risk")
		for _, sc := range tr.FeedbackScores {
			if sc.Name == "hallucination_quality" {
				assert.InDelta(t, 1-risk.(float64), sc.Value, 0.0005)
			}
		}
	}
	if _, _, found := j.trace(t, untraced); found {
		t.Errorf("a request with X-Mlx-Trace: 0 was traced")
	}
	assert.Equal(t, len(cases), len(opik.Traces("mlx")), "Opik has the traced requests only")
	assert.Zero(t, opik.OrphanScores(), "scores on ids Opik shows no trace of")

	// The access log: every request, with its span's ids; no body.
	var lines []map[string]any
	require.Eventually(t, func() bool {
		lines = readAccessLog(t, s.dataDir)
		return len(lines) >= len(cases)+1
	}, 10*time.Second, 100*time.Millisecond)
	traced := map[string]bool{}
	for _, l := range lines {
		if id, ok := l["trace_id"].(string); ok {
			traced[id] = true
		}
		assert.NotContains(t, fmt.Sprint(l), "Say hello", "no body in the access log")
	}
	for _, c := range cases {
		assert.True(t, traced[ids[c.name]], "%s has its trace id in the access log", c.name)
	}
	assert.False(t, traced[untraced])
}

func readAccessLog(t *testing.T, dataDir string) []map[string]any {
	return readLogFile(dataDir, "access.jsonl")
}

func scrapeURL(t *testing.T, url string) *promtext.Scrape {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	sc, err := promtext.Parse(b)
	require.NoError(t, err)
	return sc
}
