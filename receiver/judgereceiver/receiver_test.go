package judgereceiver

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap/zaptest"
	"go.yaml.in/yaml/v3"

	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet"
	"github.com/mlx-otelcol/mlx-otelcol/internal/judge"
	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
	"github.com/mlx-otelcol/mlx-otelcol/standins/opiktest"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/doccheck"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/fleettest"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/metrictest"
)

// sendTrace creates a proxy request's trace in Opik's stand-in through
// REST, as the opik exporter does.
func sendTrace(t *testing.T, opik *opiktest.Server, p opiktest.ProxyTrace) {
	t.Helper()
	if p.Model == "" {
		p.Model = "mlx-community/Qwen3-4B-4bit"
	}
	body, err := json.Marshal(map[string]any{"traces": []any{p.Trace("mlx")}})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, opik.URL()+"/v1/private/traces/batch", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

// engine is the simulated mlx_lm.server, fast, as the judge.
func engine(t *testing.T, noise bool) *httptest.Server {
	e := mlxsim.New(mlxsim.Options{PrefillTPS: 1e6, DecodeTPS: 1e5, JudgeNoise: noise}, io.Discard)
	srv := httptest.NewServer(e.Handler())
	t.Cleanup(func() { e.Close(); srv.Close() })
	return srv
}

type running struct {
	t       *testing.T
	logs    *consumertest.LogsSink
	metrics *consumertest.MetricsSink
}

// start runs the receiver's logs and metrics halves on one config, as the
// collector does when both pipelines name it.
func start(t *testing.T, cfg *Config) running {
	t.Helper()
	f := NewFactory()
	set := receivertest.NewNopSettings(componentType)
	set.Logger = zaptest.NewLogger(t)
	r := running{t: t, logs: new(consumertest.LogsSink), metrics: new(consumertest.MetricsSink)}
	lr, err := f.CreateLogs(context.Background(), set, cfg, r.logs)
	require.NoError(t, err)
	mr, err := f.CreateMetrics(context.Background(), set, cfg, r.metrics)
	require.NoError(t, err)
	host := componenttest.NewNopHost()
	require.NoError(t, lr.Start(context.Background(), host))
	require.NoError(t, mr.Start(context.Background(), host))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		assert.NoError(t, mr.Shutdown(ctx))
		assert.NoError(t, lr.Shutdown(ctx))
	})
	return r
}

func fastConfig(opik *opiktest.Server, judgeURL string) *Config {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.Interval = 50 * time.Millisecond
	cfg.CollectionInterval = 50 * time.Millisecond
	cfg.Judge.Endpoint = judgeURL + "/v1"
	cfg.Opik.Endpoint = opik.URL()
	return cfg
}

// lastValue is the newest value of a series, keyed as metrictest keys it,
// the metrics sink got.
func (r running) lastValue(key string) (float64, bool) {
	all := r.metrics.AllMetrics()
	for i := len(all) - 1; i >= 0; i-- {
		if v, ok := metrictest.Points(r.t, all[i], metrictest.Without("node", fleet.NodeName("")))[key]; ok {
			return v, true
		}
	}
	return 0, false
}

func events(sink *consumertest.LogsSink) []plog.LogRecord {
	var out []plog.LogRecord
	for _, ld := range sink.AllLogs() {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			sls := ld.ResourceLogs().At(i).ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				for k := 0; k < sls.At(j).LogRecords().Len(); k++ {
					out = append(out, sls.At(j).LogRecords().At(k))
				}
			}
		}
	}
	return out
}

// The loop against Opik's stand-in and the simulated engine as judge:
// the trace gets the three scores the engine gave, on its Opik id; each
// score is an evaluation event in the span's trace context, with
// metadata.yaml's keys and types; the next passes skip it; the counts are
// in the metrics.
func TestJudgesOpikTracesAndEmitsEvents(t *testing.T) {
	opik := opiktest.New()
	require.NoError(t, opik.Listen(freeAddr(t)))
	t.Cleanup(opik.Close)
	tr := opiktest.ProxyTrace{TraceID: pcommon.TraceID{1, 2, 3}, SpanID: pcommon.SpanID{4, 5}, Start: time.Now().Add(-time.Minute),
		Question: "What is a prompt cache?", Answer: "It keeps the KV state of earlier prompts."}
	sendTrace(t, opik, tr)
	cfg := fastConfig(opik, engine(t, false).URL)
	r := start(t, cfg)

	require.Eventually(t, func() bool { return len(opik.Scores(tr.OpikID())) == 3 }, 10*time.Second, 20*time.Millisecond)
	prompt, err := judge.Render(judge.DefaultPrompt, tr.Question, tr.Answer)
	require.NoError(t, err)
	for _, s := range opik.Scores(tr.OpikID()) {
		assert.Equal(t, mlxsim.JudgeScore(prompt, s.Name), s.Value, s.Name)
		assert.Equal(t, "judge", s.CategoryName)
		assert.Equal(t, "sdk", s.Source)
		assert.Equal(t, judge.ReasonFor("default_model", cfg.Judge.Endpoint), s.Reason, "the judge model cited")
		assert.Contains(t, s.Reason, "judge model default_model at 127.0.0.1:")
	}

	require.Eventually(t, func() bool { return len(events(r.logs)) == 3 }, 5*time.Second, 20*time.Millisecond)
	held := 0
	for _, ld := range r.logs.AllLogs() {
		held += checkEvents(t, ld)
	}
	assert.Equal(t, 3, held, "every event was held against metadata.yaml")
	names := map[string]bool{}
	for _, ev := range events(r.logs) {
		assert.Equal(t, eventName, ev.EventName())
		assert.Equal(t, tr.TraceID, ev.TraceID())
		assert.Equal(t, tr.SpanID, ev.SpanID())
		at := ev.Attributes().AsRaw()
		name := at["gen_ai.evaluation.name"].(string)
		names[name] = true
		assert.Equal(t, mlxsim.JudgeScore(prompt, name), at["gen_ai.evaluation.score.value"])
		assert.Equal(t, tr.OpikID(), at["opik.trace_id"])
		assert.Equal(t, "mlx-community/Qwen3-4B-4bit", at["gen_ai.request.model"])
	}
	assert.Len(t, names, 3)

	// Later passes skip it, and nothing is judged twice.
	require.Eventually(t, func() bool { v, _ := r.lastValue("mlx_judge_traces_total{result=skipped}"); return v >= 2 },
		5*time.Second, 20*time.Millisecond)
	v, _ := r.lastValue("mlx_judge_traces_total{result=scored}")
	assert.Equal(t, 1.0, v)
	n, _ := r.lastValue("mlx_judge_score_count{model=mlx-community/Qwen3-4B-4bit,name=correctness}")
	assert.Equal(t, 1.0, n)
	assert.Len(t, events(r.logs), 3)
}

// A judge that answers prose: parse_failed, asked in judge.ParseTries
// passes (one bad reply does not exempt a trace), then not again, and
// nothing is written.
func TestUnparseableRepliesWriteNothing(t *testing.T) {
	opik := opiktest.New()
	require.NoError(t, opik.Listen(freeAddr(t)))
	t.Cleanup(opik.Close)
	tr := opiktest.ProxyTrace{TraceID: pcommon.TraceID{9}, SpanID: pcommon.SpanID{9}, Start: time.Now(), Question: "q?", Answer: "a."}
	sendTrace(t, opik, tr)
	r := start(t, fastConfig(opik, engine(t, true).URL))
	require.Eventually(t, func() bool { v, _ := r.lastValue("mlx_judge_traces_total{result=skipped}"); return v >= 2 },
		5*time.Second, 20*time.Millisecond, "later passes skip it")
	v, _ := r.lastValue("mlx_judge_traces_total{result=parse_failed}")
	assert.Equal(t, float64(judge.ParseTries), v, "asked ParseTries times")
	assert.Empty(t, opik.Scores(tr.OpikID()))
	assert.Empty(t, events(r.logs))
}

// Opik down for a while, then back: passes fail and are counted, and the
// trace is judged once Opik answers again. The judge engine down: each
// trace is a judge_error, and nothing is written.
func TestFaultsAreCountedAndTheLoopGoesOn(t *testing.T) {
	opik := opiktest.New()
	require.NoError(t, opik.Listen(freeAddr(t)))
	t.Cleanup(opik.Close)
	tr := opiktest.ProxyTrace{TraceID: pcommon.TraceID{7}, SpanID: pcommon.SpanID{7}, Start: time.Now(), Question: "q?", Answer: "a."}
	sendTrace(t, opik, tr)
	opik.Down()
	r := start(t, fastConfig(opik, engine(t, false).URL))
	require.Eventually(t, func() bool { v, _ := r.lastValue("mlx_judge_passes_total{result=read_failed}"); return v >= 3 },
		5*time.Second, 20*time.Millisecond)
	require.NoError(t, opik.Up())
	require.Eventually(t, func() bool { return len(opik.Scores(tr.OpikID())) == 3 }, 10*time.Second, 20*time.Millisecond)

	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	opik2 := opiktest.New()
	require.NoError(t, opik2.Listen(freeAddr(t)))
	t.Cleanup(opik2.Close)
	sendTrace(t, opik2, tr)
	r2 := start(t, fastConfig(opik2, deadURL))
	require.Eventually(t, func() bool { v, _ := r2.lastValue("mlx_judge_traces_total{result=judge_error}"); return v >= 2 },
		5*time.Second, 20*time.Millisecond)
	assert.Empty(t, opik2.Scores(tr.OpikID()))
}

// Shutdown returns within a second even while a judgement hangs.
func TestShutdownCutsAHungJudge(t *testing.T) {
	opik := opiktest.New()
	require.NoError(t, opik.Listen(freeAddr(t)))
	t.Cleanup(opik.Close)
	sendTrace(t, opik, opiktest.ProxyTrace{TraceID: pcommon.TraceID{5}, SpanID: pcommon.SpanID{5}, Start: time.Now(), Question: "q?", Answer: "a."})
	asked := make(chan struct{}, 1)
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // so the server sees the client go
		select {
		case asked <- struct{}{}:
		default:
		}
		<-r.Context().Done()
	}))
	t.Cleanup(hung.Close)
	cfg := fastConfig(opik, hung.URL)
	f := NewFactory()
	set := receivertest.NewNopSettings(componentType)
	set.Logger = zaptest.NewLogger(t)
	lr, err := f.CreateLogs(context.Background(), set, cfg, new(consumertest.LogsSink))
	require.NoError(t, err)
	require.NoError(t, lr.Start(context.Background(), componenttest.NewNopHost()))
	select {
	case <-asked:
	case <-time.After(10 * time.Second):
		t.Fatal("the judge was never asked")
	}
	began := time.Now()
	require.NoError(t, lr.Shutdown(context.Background()))
	assert.Less(t, time.Since(began), time.Second)
}

func TestShutdownWithoutStart(t *testing.T) {
	f := NewFactory()
	cfg := f.CreateDefaultConfig()
	lr, err := f.CreateLogs(context.Background(), receivertest.NewNopSettings(componentType), cfg, new(consumertest.LogsSink))
	require.NoError(t, err)
	assert.NoError(t, lr.Shutdown(context.Background()))
	mr, err := f.CreateMetrics(context.Background(), receivertest.NewNopSettings(componentType), cfg, new(consumertest.MetricsSink))
	require.NoError(t, err)
	assert.NoError(t, mr.Shutdown(context.Background()))
}

// Without judge.endpoint the receiver needs the proxy extension.
func TestStartWithoutTheProxyExtension(t *testing.T) {
	f := NewFactory()
	lr, err := f.CreateLogs(context.Background(), receivertest.NewNopSettings(componentType), f.CreateDefaultConfig(), new(consumertest.LogsSink))
	require.NoError(t, err)
	err = lr.Start(context.Background(), componenttest.NewNopHost())
	require.ErrorContains(t, err, `extension "mlx_proxy" is not a running mlx_proxy`)
	assert.NoError(t, lr.Shutdown(context.Background()))
}

// The series emitted are those documentation.md and metadata.yaml list.
func TestEmittedMetricsAreThoseDocumented(t *testing.T) {
	s := newStats(nil)
	now := time.Now()
	s.record(&judge.Pass{Start: now, End: now.Add(time.Second), Judgements: []judge.Judgement{
		{Candidate: judge.Candidate{Model: "m"}, Result: judge.ResultScored, Scores: map[string]float64{"correctness": 0.9}},
	}})
	md := fleettest.AddRole(buildMetrics(s.snapshot(), now, now), fleet.RoleJudge)
	emitted := metrictest.Names(md)
	documented, err := doccheck.MetadataNames("metadata.yaml")
	require.NoError(t, err)
	assert.Equal(t, documented, emitted)
	assert.NoError(t, doccheck.CheckMetrics("metadata.yaml", md), "types, help texts, labels and buckets are metadata.yaml's")

	raw, err := os.ReadFile("metadata.yaml")
	require.NoError(t, err)
	var meta struct {
		Metrics map[string]struct {
			Histogram *struct {
				Buckets []float64 `yaml:"buckets"`
			} `yaml:"histogram"`
		} `yaml:"metrics"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &meta))
	var listed []string
	for name := range meta.Metrics {
		listed = append(listed, name)
	}
	sort.Strings(listed)
	assert.Equal(t, documented, listed)
	assert.Equal(t, scoreBounds, meta.Metrics["mlx_judge_score"].Histogram.Buckets)
	assert.Equal(t, passBounds, meta.Metrics["mlx_judge_pass_seconds"].Histogram.Buckets)
}

// A client's made-up model names cannot grow the model label.
func TestModelLabelIsBounded(t *testing.T) {
	s := newStats(nil)
	for i := range 50 {
		s.record(&judge.Pass{Judgements: []judge.Judgement{{Candidate: judge.Candidate{Model: fmt.Sprint("junk-", i)},
			Result: judge.ResultScored, Scores: map[string]float64{"correctness": 1}}}})
	}
	models := map[string]bool{}
	for k := range s.snapshot().scores {
		models[k.model] = true
	}
	assert.Len(t, models, maxModels+1)
	assert.True(t, models["other"])
	assert.False(t, strings.Contains(fmt.Sprint(models), "junk-49"))
}

// A model name of megabytes, or one the proxy does not serve when models
// is set, takes no label slot; the events carry it cut to 200 bytes.
func TestModelLabelIsBoundedInLengthAndToServedModels(t *testing.T) {
	huge := strings.Repeat("m", 1<<20)
	scored := func(model string) judge.Judgement {
		return judge.Judgement{Candidate: judge.Candidate{Model: model}, Result: judge.ResultScored, Scores: map[string]float64{"correctness": 1}}
	}
	labels := func(s *stats) map[string]bool {
		out := map[string]bool{}
		for k := range s.snapshot().scores {
			out[k.model] = true
		}
		return out
	}

	s := newStats(nil)
	s.record(&judge.Pass{Judgements: []judge.Judgement{scored(huge), scored("served")}})
	assert.Equal(t, map[string]bool{"other": true, "served": true}, labels(s))

	s = newStats([]string{"served"})
	s.record(&judge.Pass{Judgements: []judge.Judgement{scored("made-up"), scored("served"), scored("")}})
	assert.Equal(t, map[string]bool{"other": true, "served": true, "unknown": true}, labels(s))

	ld := evaluationEvents(&judge.Pass{Judgements: []judge.Judgement{scored(huge)}}, []string{"correctness"}, "default_model", judge.Reason, time.Now())
	v, ok := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes().Get(attrGenAiRequestModel)
	require.True(t, ok)
	assert.Len(t, v.Str(), maxModelLen)
}

// Suspected injections are counted on :9105, from 0.
func TestSuspectedInjectionsAreCounted(t *testing.T) {
	s := newStats(nil)
	assert.Equal(t, 0.0, s.snapshot().injections)
	s.record(&judge.Pass{Judgements: []judge.Judgement{
		{Result: judge.ResultScored, SuspectedInjection: true},
		{Result: judge.ResultParseFailed, SuspectedInjection: true},
		{Result: judge.ResultScored},
	}})
	assert.Equal(t, 2.0, s.snapshot().injections)
}
