package proxy

import (
	"context"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/span"
	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

// vLLM's bucket boundaries, as its source gives them
// (vllm/v1/metrics/buckets.py: REQUEST_LATENCY_BUCKETS,
// TIME_TO_FIRST_TOKEN_BUCKETS, INTER_TOKEN_LATENCY_BUCKETS, and
// build_1_2_5_buckets for the token counts; the same lists inline in
// vllm/v1/metrics/loggers.py of v0.11).
var (
	vllmRequestLatencyBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
	vllmTTFTBuckets           = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	vllmITLBuckets            = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
)

// build125 is vLLM's build_1_2_5_buckets(max_value).
func build125(maxValue float64) []float64 {
	var out []float64
	for exp := 1.0; ; exp *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if m*exp > maxValue {
				return out
			}
			out = append(out, m*exp)
		}
	}
}

func compatRig(t *testing.T, opts ...rigOption) *rig {
	return newRig(t, append([]rigOption{func(c *Config, _ *mlxsim.Options) { c.Compat = []string{CompatVLLM} }}, opts...)...)
}

func TestVLLMRequestBucketsAreVLLMs(t *testing.T) {
	want := map[string][]float64{
		"vllm:e2e_request_latency_seconds":           vllmRequestLatencyBuckets,
		"vllm:request_queue_time_seconds":            vllmRequestLatencyBuckets,
		"vllm:request_prefill_time_seconds":          vllmRequestLatencyBuckets,
		"vllm:request_decode_time_seconds":           vllmRequestLatencyBuckets,
		"vllm:request_inference_time_seconds":        vllmRequestLatencyBuckets,
		"vllm:time_to_first_token_seconds":           vllmTTFTBuckets,
		"vllm:inter_token_latency_seconds":           vllmITLBuckets,
		"vllm:request_time_per_output_token_seconds": vllmITLBuckets,
		// vLLM ends the series at max_model_len; the proxy's runs on to
		// 1,000,000 (metadata.yaml says why).
		"vllm:request_prompt_tokens":     build125(1e6),
		"vllm:request_generation_tokens": build125(1e6),
	}
	assert.Equal(t, []float64{1, 2, 5, 10, 20, 50, 100}, build125(100), "vLLM's own example")
	sc := compatRig(t).scrape()
	for name, buckets := range want {
		f := sc.Families[name]
		require.NotNil(t, f, name)
		require.Len(t, f.GetMetric(), 1, "the configured model's series, from the start: %s", name)
		var got []float64
		for _, b := range f.GetMetric()[0].GetHistogram().GetBucket() {
			if !math.IsInf(b.GetUpperBound(), 1) {
				got = append(got, b.GetUpperBound())
			}
		}
		assert.Equal(t, buckets, got, name)
	}
}

// vllmHist is a histogram's count and sum for the test model.
func vllmHist(t *testing.T, sc *promtext.Scrape, name string) (count, sum float64) {
	t.Helper()
	f := sc.Families[name]
	require.NotNil(t, f, name)
	for _, m := range f.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "model_name" && l.GetValue() == testModel {
				return float64(m.GetHistogram().GetSampleCount()), m.GetHistogram().GetSampleSum()
			}
		}
	}
	require.Failf(t, "no series", "%s{model_name=%q}", name, testModel)
	return 0, 0
}

// sumOf adds every series of a family (counters, or histograms' counts)
// whose labels include these.
func sumOf(t *testing.T, sc *promtext.Scrape, name string, labels ...string) float64 {
	t.Helper()
	f := sc.Families[name]
	require.NotNil(t, f, name)
	total := 0.0
	for _, m := range f.GetMetric() {
		ok := true
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, l := range m.GetLabel() {
				found = found || (l.GetName() == labels[i] && l.GetValue() == labels[i+1])
			}
			ok = ok && found
		}
		if !ok {
			continue
		}
		switch {
		case m.Counter != nil:
			total += m.GetCounter().GetValue()
		case m.Histogram != nil:
			total += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return total
}

// One stream, as vLLM times a finished request: its phases add up, its
// time per output token is its decode over the tokens after the first,
// its tokens are the answer's usage.
func TestVLLMRequestSeriesOfAStream(t *testing.T) {
	r := compatRig(t, func(_ *Config, o *mlxsim.Options) { o.DecodeTPS = 200 })
	require.Equal(t, http.StatusOK, r.post(chatPath, `{"messages": [{"role": "user", "content": "Tell me a story"}], "max_tokens": 12, "stream": true}`).status)
	sc := r.scrape()

	generated := sumOf(t, sc, "mlx_tokens_completion_total")
	require.Greater(t, generated, 1.0, "a stream of several tokens")
	assert.Equal(t, generated, sumOf(t, sc, "vllm:generation_tokens_total", "model_name", testModel))
	assert.Equal(t, sumOf(t, sc, "mlx_tokens_prompt_total"), sumOf(t, sc, "vllm:prompt_tokens_total", "model_name", testModel))
	n, s := vllmHist(t, sc, "vllm:request_generation_tokens")
	assert.Equal(t, []float64{1, generated}, []float64{n, s})

	for _, name := range []string{"vllm:e2e_request_latency_seconds", "vllm:time_to_first_token_seconds", "vllm:request_queue_time_seconds",
		"vllm:request_prefill_time_seconds", "vllm:request_decode_time_seconds", "vllm:request_inference_time_seconds",
		"vllm:request_time_per_output_token_seconds", "vllm:request_prompt_tokens"} {
		n, _ := vllmHist(t, sc, name)
		assert.Equal(t, 1.0, n, name)
	}
	_, e2e := vllmHist(t, sc, "vllm:e2e_request_latency_seconds")
	_, queue := vllmHist(t, sc, "vllm:request_queue_time_seconds")
	_, prefill := vllmHist(t, sc, "vllm:request_prefill_time_seconds")
	_, decode := vllmHist(t, sc, "vllm:request_decode_time_seconds")
	_, inference := vllmHist(t, sc, "vllm:request_inference_time_seconds")
	_, tpot := vllmHist(t, sc, "vllm:request_time_per_output_token_seconds")
	assert.InDelta(t, inference, prefill+decode, 1e-6, "RUNNING is prefill and decode")
	assert.LessOrEqual(t, queue+inference, e2e+1e-6, "the engine's phases lie within the request")
	assert.InDelta(t, decode/(generated-1), tpot, 1e-9, "decode over the tokens after the first")
	assert.Greater(t, decode, 0.0)

	// One gap per pair of chunks with text, as the proxy's own histogram.
	gaps, _ := vllmHist(t, sc, "vllm:inter_token_latency_seconds")
	assert.Equal(t, sumOf(t, sc, "mlx_inter_token_latency_seconds"), gaps)
	assert.Positive(t, gaps)

	assert.Equal(t, 1.0, sumOf(t, sc, "vllm:request_success_total", "model_name", testModel))
	assert.Equal(t, sumOf(t, sc, "mlx_finish_reason_total", "reason", "length"), sumOf(t, sc, "vllm:request_success_total", "finished_reason", "length"))
}

// A non-streamed answer comes whole: its latency, tokens and finish, no
// phases; a text completion counts as a chat does.
func TestVLLMRequestSeriesOfWholeAnswers(t *testing.T) {
	r := compatRig(t)
	require.Equal(t, http.StatusOK, r.post(chatPath, `{"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 4}`).status)
	require.Equal(t, http.StatusOK, r.post("/v1/completions", `{"prompt": "Once", "max_tokens": 4}`).status)
	sc := r.scrape()
	n, _ := vllmHist(t, sc, "vllm:e2e_request_latency_seconds")
	assert.Equal(t, 2.0, n)
	for _, name := range []string{"vllm:time_to_first_token_seconds", "vllm:request_queue_time_seconds", "vllm:request_prefill_time_seconds",
		"vllm:request_decode_time_seconds", "vllm:request_inference_time_seconds", "vllm:request_time_per_output_token_seconds", "vllm:inter_token_latency_seconds"} {
		n, _ := vllmHist(t, sc, name)
		assert.Zero(t, n, name)
	}
	assert.Equal(t, 2.0, sumOf(t, sc, "vllm:request_success_total"))
	_, prompt := vllmHist(t, sc, "vllm:request_prompt_tokens")
	assert.Equal(t, sumOf(t, sc, "mlx_tokens_prompt_total"), prompt)
	assert.Equal(t, prompt, sumOf(t, sc, "vllm:prompt_tokens_total"))
}

// vllmFinish names each way a request ends as vLLM does, and leaves out
// what the engine never took.
func TestVLLMFinish(t *testing.T) {
	sent := time.Unix(1, 0)
	for _, c := range []struct {
		rec    Record
		reason string
		took   bool
	}{
		{Record{Sent: sent, Outcome: OutcomeComplete, Choices: []*Choice{{FinishReason: "stop"}}, Facts: span.Facts{Status: 200}}, vllmFinishStop, true},
		{Record{Sent: sent, Outcome: OutcomeComplete, Choices: []*Choice{{FinishReason: "tool_calls"}}, Facts: span.Facts{Status: 200}}, vllmFinishStop, true},
		{Record{Sent: sent, Outcome: OutcomeComplete, Choices: []*Choice{{FinishReason: "length"}}, Facts: span.Facts{Status: 200}}, vllmFinishLength, true},
		{Record{Sent: sent, Outcome: OutcomeClientGone, Facts: span.Facts{Status: 200}}, vllmFinishAbort, true},
		{Record{Sent: sent, Outcome: OutcomeIncomplete, Facts: span.Facts{Status: 200}}, vllmFinishError, true},
		{Record{Sent: sent, Outcome: OutcomeComplete, Stalled: "engine", Facts: span.Facts{Status: 200}}, vllmFinishError, true},
		{Record{Sent: sent, Outcome: OutcomeComplete, Facts: span.Facts{Status: 404}}, "", false},
		{Record{Sent: sent, Outcome: OutcomeUnavailable}, "", false},
		{Record{Outcome: OutcomeRefused, Facts: span.Facts{Status: 200}}, "", false},
	} {
		reason, took := vllmFinish(&c.rec)
		assert.Equal(t, c.reason, reason, "%+v", c.rec)
		assert.Equal(t, c.took, took, "%+v", c.rec)
	}
}

// A client that goes away mid-stream is vLLM's abort; an engine's error
// answer is no finished request at all.
func TestVLLMRequestSeriesOfAnAbortAndAnError(t *testing.T) {
	admit, finish := make(chan struct{}), make(chan struct{})
	close(admit)
	r := rigWithUpstream(t, heldEngine(admit, finish), served(func(c *Config) { c.Compat = []string{CompatVLLM} }))
	// Run before the rig's cleanups (last registered, first run): the
	// held engine lets go before its server closes.
	t.Cleanup(func() { close(finish) })
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url+chatPath, strings.NewReader(streamBody))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, err = resp.Body.Read(make([]byte, 16))
	require.NoError(t, err, "the first chunk came")
	cancel()
	_ = resp.Body.Close()
	sc := r.scrape()
	assert.Equal(t, 1.0, sumOf(t, sc, "vllm:request_success_total", "finished_reason", "abort"))
	assert.Equal(t, 1.0, sumOf(t, sc, "vllm:request_success_total"))
	n, _ := vllmHist(t, sc, "vllm:e2e_request_latency_seconds")
	assert.Equal(t, 1.0, n)

	e := rigWithUpstream(t, func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/health" {
			return
		}
		http.Error(w, `{"error": "Only 'text' content type is supported."}`, http.StatusNotFound)
	}, served(func(c *Config) { c.Compat = []string{CompatVLLM} }))
	e.post(chatPath, streamBody)
	sc = e.scrape()
	assert.Zero(t, sumOf(t, sc, "vllm:request_success_total"))
	n, _ = vllmHist(t, sc, "vllm:e2e_request_latency_seconds")
	assert.Zero(t, n)
}
