//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/standins/opiktest"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

// userSeries are what a judged pass must leave as users left them: users'
// requests, and every series without an origin label (the "last answer"
// gauges and the quality series the scorer sets), but mlx_in_flight and
// the per-caller mlx_client_* which count every origin.
func userSeries(sc *promtext.Scrape) map[string]float64 {
	out := map[string]float64{}
	for name, f := range sc.Families {
		// mlx_agent_*: the proxy role's own liveness (its uptime moves with
		// the clock), no series of users' requests.
		if strings.HasPrefix(name, "mlx_client_") || strings.HasPrefix(name, "mlx_agent_") || name == "mlx_in_flight" || name == "mlx_up" {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			origin := ""
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
				if l.GetName() == "origin" {
					origin = l.GetValue()
				}
			}
			if origin != "" && origin != "user" {
				continue
			}
			key := name + fmt.Sprint(labels)
			switch {
			case m.Counter != nil:
				out[key] = m.GetCounter().GetValue()
			case m.Gauge != nil:
				out[key] = m.GetGauge().GetValue()
			case m.Histogram != nil:
				out[key] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

// A judged pass through the built binary: the judge's requests are
// counted under origin="judge", and mlx_requests_total{origin="user"},
// every quality gauge and every other user series stay as the users'
// requests left them.
func TestAJudgedPassLeavesUserSeriesAlone(t *testing.T) {
	j := startJaeger(t)
	opik := startOpik(t)
	s := startCollector(t, collectorOptions{configs: demoConfigs,
		sets: append(traceSets(j, opik), judgeSets("500ms", "receivers::mlx_judge::opik::endpoint="+opik.URL())...),
		env:  map[string]string{"MLXSIM_LOAD_DELAY": "0s"}})
	waitEngineReady(s)

	for _, q := range judgeQuestions {
		askTraced(t, s, q)
	}
	// Once the users' answers are scored, and before the judge has asked
	// anything (its first pass waits for the traces to reach Opik).
	before := s.waitFor("mlx_proxy", 10*time.Second, "the users' answers scored", func(sc *promtext.Scrape) bool {
		n, _ := sc.Value("mlx_requests_total", "origin", "user", "streaming", "false", "kind", "chat")
		risk := sc.Series("mlx_hallucination_risk")
		return n == float64(len(judgeQuestions)) && len(risk) > 0
	})
	judgedBefore, _ := before.Value("mlx_requests_total", "origin", "judge", "streaming", "false", "kind", "chat")
	require.Zero(t, judgedBefore, "the judge asked before the users' series were read")

	scoredThenSkipped(s, len(judgeQuestions), len(judgeQuestions))
	after := s.waitFor("mlx_proxy", 10*time.Second, "the judge's requests counted apart", func(sc *promtext.Scrape) bool {
		n, _ := sc.Value("mlx_requests_total", "origin", "judge", "streaming", "false", "kind", "chat")
		return n >= float64(len(judgeQuestions))
	})
	// mlx_confidence_scored_total and the quality gauges among them: the
	// judge's answers are never scored.
	assert.Equal(t, userSeries(before), userSeries(after), "a judged pass moved a user series")
	tokens, _ := after.Value("mlx_tokens_completion_total", "origin", "judge")
	assert.Positive(t, tokens, "the judge's tokens are counted, apart")
}

// Feedback from a person through the built binary: the trace id the
// answer carries names it, the score reaches Opik's stand-in on that
// request's trace (through the logs/feedback pipeline and the opik
// exporter), the counter counts it once, and the event is in judge.jsonl.
func TestFeedbackReachesOpikAndTheCounter(t *testing.T) {
	j := startJaeger(t)
	opik := startOpik(t)
	s := startCollector(t, collectorOptions{configs: demoConfigs, sets: traceSets(j, opik),
		env: map[string]string{"MLXSIM_LOAD_DELAY": "0s"}})
	waitEngineReady(s)

	resp, err := http.Post(s.proxyURL("/v1/chat/completions"), "application/json",
		strings.NewReader(`{"model": "mlx-community/Qwen3-4B-4bit", "messages": [{"role": "user", "content": "Name a long river."}], "max_tokens": 16}`))
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	traceID := resp.Header.Get("X-Mlx-Trace-Id")
	require.Len(t, traceID, 32, "the answer names its trace")

	var tr opiktest.Trace
	require.Eventually(t, func() bool {
		for _, x := range opik.Traces("mlx") {
			if x.OTelTraceID == traceID {
				tr = x
				return true
			}
		}
		return false
	}, 30*time.Second, 100*time.Millisecond, "the request's trace in Opik")

	body := `{"trace_id": "` + traceID + `", "score": "down", "comment": "that river is short"}`
	for range 2 { // twice: counted once
		fb, err := http.Post(s.proxyURL("/v1/feedback"), "application/json", strings.NewReader(body))
		require.NoError(t, err)
		out, _ := io.ReadAll(fb.Body)
		fb.Body.Close()
		require.Equal(t, http.StatusOK, fb.StatusCode, string(out))
	}
	var got opiktest.Score
	require.Eventually(t, func() bool {
		for _, sc := range opik.Scores(tr.ID) {
			if sc.Name == "user_feedback" {
				got = sc
				return true
			}
		}
		return false
	}, 30*time.Second, 100*time.Millisecond, "user_feedback on the request's Opik trace")
	assert.Equal(t, 0.0, got.Value)
	assert.Equal(t, "ui", got.Source, "a person's score")
	assert.Equal(t, "that river is short", got.Reason)
	assert.Zero(t, opik.OrphanScores(), "no score on a trace Opik does not show")

	sc := s.waitFor("mlx_proxy", 10*time.Second, "the feedback counted", func(sc *promtext.Scrape) bool {
		v, _ := sc.Value("mlx_user_feedback_total", "value", "down")
		return v == 1
	})
	assert.Equal(t, 0.0, value(t, sc, "mlx_user_feedback_total", "value", "up"))

	// The event, in the request's trace context.
	require.Eventually(t, func() bool {
		for _, rec := range readLogFile(s.dataDir, "judge.jsonl") {
			if strings.Contains(fmt.Sprint(rec), "user_feedback") {
				return true
			}
		}
		return false
	}, 10*time.Second, 100*time.Millisecond, "the evaluation event in judge.jsonl")
	var events int
	for _, rec := range readLogFile(s.dataDir, "judge.jsonl") {
		raw, _ := json.Marshal(rec)
		if strings.Contains(string(raw), "user_feedback") {
			events++
			assert.Contains(t, string(raw), traceID)
		}
	}
	assert.Equal(t, 1, events, "one event, however often it was sent")

	// An unknown trace is 404 in OpenAI's shape.
	fb, err := http.Post(s.proxyURL("/v1/feedback"), "application/json",
		strings.NewReader(`{"trace_id": "0123456789abcdef0123456789abcdef", "score": "up"}`))
	require.NoError(t, err)
	out, _ := io.ReadAll(fb.Body)
	fb.Body.Close()
	assert.Equal(t, http.StatusNotFound, fb.StatusCode)
	assert.Contains(t, string(out), `"code":"trace_not_found"`)
}
