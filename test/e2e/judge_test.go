//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/internal/judge"
	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
	"github.com/mlx-otelcol/mlx-otelcol/standins/opiktest"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/otlptest"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

var judgeQuestions = []string{"What is a prompt cache?", "Why do caches help?", "Name one use of a token."}

// askTraced sends a chat through the proxy in a trace of its own and
// returns the trace id and the answer's text.
func askTraced(t *testing.T, s *stack, question string) (traceID, answer string) {
	t.Helper()
	traceID = newTraceID(t)
	body := fmt.Sprintf(`{"model": "mlx-community/Qwen3-4B-4bit", "messages": [{"role": "user", "content": %q}], "max_tokens": 24}`, question)
	status, out := tracedPost(t, s.proxyURL("/v1/chat/completions"), traceID, body)
	require.Equal(t, http.StatusOK, status, out)
	var resp struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &resp))
	require.NotEmpty(t, resp.Choices)
	return traceID, resp.Choices[0].Message.Content
}

// wantScores are the scores the simulated judge gives an answer.
func wantScores(t *testing.T, question, answer string) map[string]float64 {
	prompt, err := judge.Render(judge.DefaultPrompt, question, strings.TrimSpace(answer))
	require.NoError(t, err)
	out := map[string]float64{}
	for _, n := range judge.DefaultScores {
		out[n] = mlxsim.JudgeScore(prompt, n)
	}
	return out
}

// readLogFile reads the records of one of the data directory's JSONL files.
func readLogFile(dataDir, name string) []map[string]any {
	b, err := os.ReadFile(filepath.Join(dataDir, "logs", name))
	if err != nil {
		return nil
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// evaluations are the judge's events in logs/judge.jsonl, by trace id and
// score name.
func evaluations(dataDir string) map[string]map[string]float64 {
	out := map[string]map[string]float64{}
	for _, r := range readLogFile(dataDir, "judge.jsonl") {
		if r["event_name"] != "gen_ai.evaluation.result" {
			continue
		}
		at, _ := r["attributes"].(map[string]any)
		tid, _ := r["trace_id"].(string)
		name, _ := at["gen_ai.evaluation.name"].(string)
		v, _ := at["gen_ai.evaluation.score.value"].(float64)
		if out[tid] == nil {
			out[tid] = map[string]float64{}
		}
		out[tid][name] = v
	}
	return out
}

func judgeSets(interval string, more ...string) []string {
	return append([]string{"receivers::mlx_judge::interval=" + interval}, more...)
}

// Real traffic through the built binary, traced to Jaeger and Opik's
// stand-in: the judge loop (the engine, through the proxy, as judge) puts
// the three scores on each trace's Opik id, emits them as evaluation
// events in the trace's context, counts them on :9105, and skips the
// traces afterwards. Its own requests make no trace. With Opik down the
// passes fail and are counted, and users are served.
func TestJudgeScoresRealTracesInOpik(t *testing.T) {
	j := startJaeger(t)
	opik := startOpik(t)
	s := startCollector(t, collectorOptions{configs: demoConfigs,
		sets: append(traceSets(j, opik), judgeSets("500ms", "receivers::mlx_judge::opik::endpoint="+opik.URL())...),
		env:  map[string]string{"MLXSIM_LOAD_DELAY": "0s"}})
	waitEngineReady(s)

	answers := map[string][2]string{} // trace id -> question, answer
	for _, q := range judgeQuestions {
		id, a := askTraced(t, s, q)
		answers[id] = [2]string{q, a}
	}
	byTraceID := func() map[string]opiktest.Trace {
		out := map[string]opiktest.Trace{}
		for _, tr := range opik.Traces("mlx") {
			out[tr.OTelTraceID] = tr
		}
		return out
	}
	judged := func(tr opiktest.Trace) bool {
		n := 0
		for _, sc := range tr.FeedbackScores {
			if sc.CategoryName == judge.Category {
				n++
			}
		}
		return n == 3
	}
	require.Eventually(t, func() bool {
		got := byTraceID()
		for id := range answers {
			if !judged(got[id]) {
				return false
			}
		}
		return true
	}, 60*time.Second, 200*time.Millisecond, "every trace has the judge's three scores in Opik")

	traces := byTraceID()
	assert.Len(t, traces, len(answers), "Opik has the users' traces only: the judge's requests are not traced")
	// Each request is one readable trace carrying the proxy's scores and
	// the judge's, and no score names a trace Opik does not show.
	assert.Zero(t, opik.OrphanScores(), "scores on ids Opik shows no trace of")
	for id, qa := range answers {
		names := map[string]bool{}
		for _, sc := range traces[id].FeedbackScores {
			names[sc.Name] = true
		}
		assert.True(t, names["hallucination_quality"] && names["hallucination_flagged"], "%s: the proxy's scores: %v", id, names)
		assert.Contains(t, fmt.Sprint(traces[id].Input), qa[0], "%s: the question in the input", id)
		assert.Contains(t, fmt.Sprint(traces[id].Output), qa[1], "%s: the answer in the output", id)
	}
	for id, qa := range answers {
		want := wantScores(t, qa[0], qa[1])
		for _, sc := range traces[id].FeedbackScores {
			if sc.CategoryName == judge.Category {
				assert.Equal(t, want[sc.Name], sc.Value, "%s %s", id, sc.Name)
				assert.Equal(t, judge.ReasonFor("default_model", ""), sc.Reason, "the judge model cited")
			}
		}
	}
	for _, tr := range opik.Traces("mlx") {
		assert.NotContains(t, fmt.Sprint(tr.Input), mlxsim.JudgeMarker, "a judge request was traced")
	}

	// The events, in the judged traces' context, with the same values.
	require.Eventually(t, func() bool { return len(evaluations(s.dataDir)) == len(answers) }, 10*time.Second, 100*time.Millisecond)
	for id, scores := range evaluations(s.dataDir) {
		qa, ok := answers[id]
		require.True(t, ok, "event for unknown trace %s", id)
		assert.Equal(t, wantScores(t, qa[0], qa[1]), scores)
	}

	// Later passes skip them; the counts are on :9105.
	sc := scoredThenSkipped(s, len(answers), 2*len(answers))
	assert.Equal(t, float64(len(answers)), value(t, sc, "mlx_judge_traces_total", "result", "scored"))
	assert.Equal(t, float64(len(answers)), value(t, sc, "mlx_judge_score", "name", "correctness", "model", "mlx-community/Qwen3-4B-4bit"))
	assert.Equal(t, 0.0, value(t, sc, "mlx_judge_traces_total", "result", "judge_error"))
	assert.Equal(t, len(answers)*3, len(readLogFile(s.dataDir, "judge.jsonl")), "no trace judged twice")

	// Opik down: passes fail and are counted; every user request is served
	// and, once Opik is back, judged.
	opik.Down()
	failedBefore := value(t, sc, "mlx_judge_passes_total", "result", "read_failed")
	for range 5 {
		_, _ = askTraced(t, s, "Is the store down?")
	}
	s.waitFor("prometheus/supervisor", 20*time.Second, "failed passes counted", func(sc *promtext.Scrape) bool {
		v, _ := sc.Value("mlx_judge_passes_total", "result", "read_failed")
		return v >= failedBefore+2
	})
	require.NoError(t, opik.Up())
	id, a := askTraced(t, s, "Is the store back?")
	require.Eventually(t, func() bool { return judged(byTraceID()[id]) }, 60*time.Second, 200*time.Millisecond, "judged after Opik came back")
	want := wantScores(t, "Is the store back?", a)
	for _, sc := range byTraceID()[id].FeedbackScores {
		if sc.CategoryName == judge.Category {
			assert.Equal(t, want[sc.Name], sc.Value)
		}
	}
}

// The judge reads the traces from Jaeger and writes the scores to Opik: it
// derives each trace's Opik id from what Jaeger holds, and the scores land
// on the traces the Opik exporter stamped, so the two agree on the id.
func TestJudgeFromJaegerScoresTheExportersOpikIDs(t *testing.T) {
	j := startJaeger(t)
	opik := startOpik(t)
	s := startCollector(t, collectorOptions{configs: demoConfigs,
		sets: append(traceSets(j, opik), judgeSets("500ms", "receivers::mlx_judge::source=jaeger",
			"receivers::mlx_judge::jaeger::endpoint=http://"+j.query, "receivers::mlx_judge::opik::endpoint="+opik.URL())...),
		env: map[string]string{"MLXSIM_LOAD_DELAY": "0s"}})
	waitEngineReady(s)
	answers := map[string][2]string{}
	for _, q := range judgeQuestions {
		id, a := askTraced(t, s, q)
		answers[id] = [2]string{q, a}
	}
	require.Eventually(t, func() bool {
		n := 0
		for _, tr := range opik.Traces("mlx") {
			if _, ok := answers[tr.OTelTraceID]; ok && len(opik.Scores(tr.ID)) >= 3 {
				n++
			}
		}
		return n == len(answers)
	}, 60*time.Second, 200*time.Millisecond, "the judge's scores are on the traces the exporter stamped")
	for _, tr := range opik.Traces("mlx") {
		qa := answers[tr.OTelTraceID]
		want := wantScores(t, qa[0], qa[1])
		for _, sc := range opik.Scores(tr.ID) {
			if sc.CategoryName == judge.Category {
				assert.Equal(t, want[sc.Name], sc.Value, "%s %s", tr.OTelTraceID, sc.Name)
			}
		}
	}
}

// bin/mlxjudge --once --dry-run judges through the real proxy and writes
// nothing; without --dry-run it writes the scores.
func TestMlxjudgeOnceAndDryRun(t *testing.T) {
	opik := startOpik(t)
	s := startCollector(t, collectorOptions{configs: demoConfigs, env: map[string]string{"MLXSIM_LOAD_DELAY": "0s"}})
	waitEngineReady(s)
	tr := opiktest.ProxyTrace{Start: time.Now(), Model: "mlx-community/Qwen3-4B-4bit", Question: "What is a cache?", Answer: "It keeps values."}
	_, _ = hex.Decode(tr.TraceID[:], []byte(newTraceID(t)))
	tr.SpanID = [8]byte{1, 2, 3}
	opik.Put(tr.Trace("offline"))
	run := func(args ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, binary(t, "MLXJUDGE"), append([]string{"--opik-base", strings.TrimSuffix(opik.URL(), "/api"),
			"--project", "offline", "--judge-url", s.proxyURL("/v1"), "--once"}, args...)...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		return string(out)
	}
	out := run("--dry-run")
	assert.Contains(t, out, "scored "+tr.OpikID()[:12])
	assert.Contains(t, out, "dry run: nothing written")
	assert.Empty(t, opik.Scores(tr.OpikID()), "a dry run wrote scores")
	out = run()
	assert.Contains(t, out, "wrote 3 feedback scores")
	want := wantScores(t, tr.Question, tr.Answer)
	for _, sc := range opik.Scores(tr.OpikID()) {
		assert.Equal(t, want[sc.Name], sc.Value)
	}
}

// Without Opik, the judge reads the proxy's spans from Jaeger; the events
// land in logs/judge.jsonl in the traces' context.
func TestJudgeReadsJaegerWithoutOpik(t *testing.T) {
	j := startJaeger(t)
	sink := otlptest.NewLogsDestination(t)
	s := startCollector(t, collectorOptions{configs: demoConfigs,
		sets: judgeSets("500ms", "exporters::otlp_grpc/jaeger::endpoint="+j.otlp, "receivers::mlx_judge::jaeger::endpoint=http://"+j.query,
			"exporters::mlx_otlp_http/judge::endpoint="+sink.URL),
		env: map[string]string{"MLXSIM_LOAD_DELAY": "0s"}})
	waitEngineReady(s)
	answers := map[string][2]string{}
	for _, q := range judgeQuestions {
		id, a := askTraced(t, s, q)
		answers[id] = [2]string{q, a}
	}
	require.Eventually(t, func() bool { return len(evaluations(s.dataDir)) == len(answers) }, 60*time.Second, 200*time.Millisecond,
		"an evaluation event for every trace")
	for id, scores := range evaluations(s.dataDir) {
		qa, ok := answers[id]
		require.True(t, ok, "event for unknown trace %s", id)
		assert.Equal(t, wantScores(t, qa[0], qa[1]), scores)
	}
	sc := scoredThenSkipped(s, len(answers), len(answers))
	assert.Equal(t, float64(len(answers)), value(t, sc, "mlx_judge_traces_total", "result", "scored"))
	// The judge's own requests are not in Jaeger.
	for id := range answers {
		spans, _ := j.waitTrace(t, id)
		assert.Len(t, spans, 1)
	}
	assert.Len(t, jaegerTraceIDs(t, j), len(answers), "Jaeger holds the users' traces only")

	// The same events reached the OTLP sink.
	require.Eventually(t, func() bool { return len(sink.Records()) >= 3*len(answers) }, 30*time.Second, 200*time.Millisecond)
	for _, r := range sink.Records() {
		assert.Equal(t, "gen_ai.evaluation.result", r.EventName)
		assert.Contains(t, []any{"correctness", "helpfulness", "hallucination_free"}, r.Attributes["gen_ai.evaluation.name"])
		assert.Contains(t, r.Attributes, "gen_ai.evaluation.score.value")
	}
	assert.Len(t, sink.Records(), 3*len(answers), "three events a trace, once each")
}

// jaegerTraceIDs lists the proxy's traces of the last hour.
func jaegerTraceIDs(t *testing.T, j *jaeger) []string {
	resp, err := http.Get("http://" + j.query + "/api/traces?service=mlx-metrics-proxy&limit=100&lookback=1h")
	require.NoError(t, err)
	defer resp.Body.Close()
	var body struct {
		Data []struct {
			TraceID string `json:"traceID"`
		} `json:"data"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	var out []string
	for _, d := range body.Data {
		out = append(out, d.TraceID)
	}
	return out
}

// A judge that answers prose, then a judge that is gone: each is counted
// (parse_failed, judge_error), nothing is written, and users are served.
func TestJudgeFaultsAreCounted(t *testing.T) {
	j := startJaeger(t)
	port := freePort(t)
	noisy := startSimEngine(t, port, "--sim-judge-noise", "--sim-decode-tokens-per-second", "2000")
	s := startCollector(t, collectorOptions{configs: demoConfigs,
		sets: judgeSets("500ms", "exporters::otlp_grpc/jaeger::endpoint="+j.otlp, "receivers::mlx_judge::jaeger::endpoint=http://"+j.query,
			fmt.Sprintf("receivers::mlx_judge::judge::endpoint=http://127.0.0.1:%d/v1", port)),
		env: map[string]string{"MLXSIM_LOAD_DELAY": "0s"}})
	waitEngineReady(s)
	_, _ = askTraced(t, s, "What is noise?")
	s.waitFor("prometheus/supervisor", 30*time.Second, "a parse failure counted", func(sc *promtext.Scrape) bool {
		v, _ := sc.Value("mlx_judge_traces_total", "result", "parse_failed")
		return v >= 1
	})
	assert.Empty(t, evaluations(s.dataDir), "an unparsed reply made an event")

	noisy.kill()
	for range 3 {
		_, _ = askTraced(t, s, "Is the judge gone?")
	}
	sc := s.waitFor("prometheus/supervisor", 30*time.Second, "judge errors counted", func(sc *promtext.Scrape) bool {
		v, _ := sc.Value("mlx_judge_traces_total", "result", "judge_error")
		return v >= 3
	})
	assert.Equal(t, 0.0, value(t, sc, "mlx_judge_traces_total", "result", "scored"))
	assert.Empty(t, evaluations(s.dataDir))
}

// scoredThenSkipped waits until :9105 counts at least scored traces scored
// and skipped skips (later passes over judged traces). Skipped counts every
// pass, so it can pass its mark in a collection before the one that counts
// the last score: the wait holds both.
func scoredThenSkipped(s *stack, scored, skipped int) *promtext.Scrape {
	s.t.Helper()
	return s.waitFor("prometheus/supervisor", 20*time.Second, "judged traces scored, then skipped", func(sc *promtext.Scrape) bool {
		sk, _ := sc.Value("mlx_judge_traces_total", "result", "skipped")
		sd, _ := sc.Value("mlx_judge_traces_total", "result", "scored")
		return sk >= float64(skipped) && sd >= float64(scored)
	})
}

// keyedJudge is another OpenAI-compatible model (the simulated engine in
// this process) that wants its own key, as a bigger local model or a
// hosted one does; it records what the judge sent.
type keyedJudge struct {
	srv   *httptest.Server
	mu    sync.Mutex
	asked []map[string]any
	keys  []string
}

func startKeyedJudge(t *testing.T, key string) *keyedJudge {
	e := mlxsim.New(mlxsim.Options{Model: "big-judge", PrefillTPS: 1e6, DecodeTPS: 1e5}, io.Discard)
	engine := httptest.NewServer(e.Handler())
	target, err := url.Parse(engine.URL)
	require.NoError(t, err)
	relay := httputil.NewSingleHostReverseProxy(target)
	k := &keyedJudge{}
	k.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(body, &m)
		k.mu.Lock()
		k.asked, k.keys = append(k.asked, m), append(k.keys, r.Header.Get("Authorization"))
		k.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+key {
			http.Error(w, `{"error": {"message": "bad key"}}`, http.StatusUnauthorized)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		relay.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { k.srv.Close(); engine.Close(); e.Close() })
	return k
}

// The judge is another model at an endpoint of its own, with its key: it
// grades with that key, the scores in Opik cite it, and past
// max_per_minute the traces are counted rate_limited and left, not
// queued, while users are served.
func TestJudgeIsAnotherModelWithItsKeyAndARate(t *testing.T) {
	j := startJaeger(t)
	opik := startOpik(t)
	other := startKeyedJudge(t, "sk-judge")
	s := startCollector(t, collectorOptions{configs: demoConfigs,
		sets: append(traceSets(j, opik), judgeSets("500ms", "receivers::mlx_judge::opik::endpoint="+opik.URL(),
			"receivers::mlx_judge::judge::endpoint="+other.srv.URL+"/v1", "receivers::mlx_judge::judge::model=big-judge",
			"receivers::mlx_judge::judge::api_key=${env:MLX_JUDGE_API_KEY}", "receivers::mlx_judge::max_per_minute=2")...),
		env: map[string]string{"MLXSIM_LOAD_DELAY": "0s", "MLX_JUDGE_API_KEY": "sk-judge"}})
	waitEngineReady(s)

	questions := []string{"What is a prompt cache?", "Why do caches help?", "Name one use of a token.", "What is a KV cache?"}
	for _, q := range questions {
		askTraced(t, s, q)
	}
	sc := s.waitFor("prometheus/supervisor", 60*time.Second, "two scored, two past the rate", func(sc *promtext.Scrape) bool {
		scored, _ := sc.Value("mlx_judge_traces_total", "result", "scored")
		limited, _ := sc.Value("mlx_judge_traces_total", "result", "rate_limited")
		return scored == 2 && limited == 2
	})
	assert.Equal(t, 0.0, value(t, sc, "mlx_judge_traces_total", "result", "judge_error"))
	assert.Equal(t, 0.0, value(t, sc, "mlx_judge_traces_total", "result", "filtered"), "the users' traces pass the default origin filter")

	judged := 0
	for _, tr := range opik.Traces("mlx") {
		n := 0
		for _, fs := range tr.FeedbackScores {
			if fs.CategoryName == judge.Category {
				n++
				assert.Equal(t, "LLM-as-judge, judge model big-judge at "+strings.TrimPrefix(other.srv.URL, "http://")+" (0..1, higher is better)", fs.Reason)
			}
		}
		if n > 0 {
			assert.Equal(t, 3, n, "one score per rubric")
			judged++
		}
	}
	assert.Equal(t, 2, judged, "two traces judged in the minute")

	other.mu.Lock()
	defer other.mu.Unlock()
	require.Len(t, other.asked, 2, "the excess was not queued")
	for i, m := range other.asked {
		assert.Equal(t, "Bearer sk-judge", other.keys[i])
		assert.Equal(t, "big-judge", m["model"])
		assert.Equal(t, map[string]any{"enable_thinking": false}, m["chat_template_kwargs"], "a judge on this machine takes chat_template_kwargs")
	}
}
