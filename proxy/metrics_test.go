package proxy

import (
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mdgen/mdschema"
	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

// proxyMetadata is the proxy's metadata.yaml, the one schema of its series.
func proxyMetadata(t *testing.T) *mdschema.Component {
	t.Helper()
	c, err := mdschema.Load("../extension/proxyextension/metadata.yaml")
	require.NoError(t, err)
	return c
}

// answer is what the test itself reads from an engine's answer, to know
// what the metrics must say.
type answer struct {
	status        int
	usage         map[string]any
	finishReasons []string
	tools         []string
	content       bool
}

// readAnswer parses an answer with nothing but encoding/json, so the
// expectations do not come from the code under test.
func readAnswer(t *testing.T, resp response) answer {
	t.Helper()
	a := answer{status: resp.status}
	var objs []map[string]any
	if strings.HasPrefix(resp.header.Get("Content-Type"), "text/event-stream") {
		for _, line := range strings.Split(string(resp.body), "\n") {
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok || data == "[DONE]" {
				continue
			}
			var o map[string]any
			require.NoError(t, json.Unmarshal([]byte(data), &o))
			objs = append(objs, o)
		}
	} else if resp.status == http.StatusOK {
		var o map[string]any
		require.NoError(t, json.Unmarshal(resp.body, &o))
		objs = append(objs, o)
	}
	for _, o := range objs {
		if u, ok := o["usage"].(map[string]any); ok {
			a.usage = u
		}
		choices, _ := o["choices"].([]any)
		for _, c := range choices {
			c := c.(map[string]any)
			if fr, ok := c["finish_reason"].(string); ok {
				a.finishReasons = append(a.finishReasons, fr)
			}
			msg, _ := c["delta"].(map[string]any)
			if m, ok := c["message"].(map[string]any); ok {
				msg = m
			}
			if s, _ := c["text"].(string); s != "" {
				a.content = true
			}
			if s, _ := msg["content"].(string); s != "" {
				a.content = true
			}
			calls, _ := msg["tool_calls"].([]any)
			for _, tc := range calls {
				fn := tc.(map[string]any)["function"].(map[string]any)
				a.tools = append(a.tools, fn["name"].(string))
			}
		}
	}
	return a
}

func (a answer) tokens(key string) float64 {
	if a.usage == nil {
		return 0
	}
	v, _ := a.usage[key].(float64)
	return v
}

func (a answer) cached() float64 {
	d, _ := a.usage["prompt_tokens_details"].(map[string]any)
	v, _ := d["cached_tokens"].(float64)
	return v
}

// After a known sequence of requests every family has exactly the values
// that sequence implies.
func TestMetricsAfterAKnownSequence(t *testing.T) {
	r := newRig(t)
	type step struct {
		path, body string
		kind       string
		stream     bool
		model      string
	}
	withTemp := func(body, temp string) string {
		return strings.Replace(body, `{`, `{"temperature": `+temp+`, `, 1)
	}
	steps := []step{
		{"/v1/chat/completions", chatBody, KindChat, false, testModel},
		{"/v1/chat/completions", withTemp(chatStreamBody, "0.5"), KindChat, true, testModel},
		{"/v1/chat/completions", withTemp(reasoningBody, "0.6"), KindReasoning, true, testModel},
		{"/v1/chat/completions", toolStreamBody, KindChat, true, testModel},
		{"/v1/chat/completions", toolBody, KindChat, false, testModel},
		{"/v1/completions", textBody, KindChat, false, testModel},
		{"/v1/completions", withTemp(textStreamBody, "0.25"), KindChat, true, testModel},
		{"/v1/chat/completions", `{"messages": [`, KindChat, false, testModel},
		// Refused by the proxy (a body it cannot read, above; a model it
		// does not serve): counted in mlx_http_refusals_total and under
		// the caller, not as requests or errors; never sent to the engine.
		{"/v1/chat/completions", `{"model": "nobody/nothing", "messages": [{"role": "user", "content": "x"}], "temperature": 1.5}`, KindChat, false, otherLabel},
	}

	type key struct{ model, kind string }
	var (
		requests   = map[[3]string]float64{}
		prompt     = map[key]float64{}
		completion = map[key]float64{}
		cached     = map[key]float64{}
		finish     = map[[3]string]float64{}
		errs       = map[[3]string]float64{}
		temps      = map[key]float64{}
		ttft, gen  = 0, 0
		rates      = 0
		queued     = map[string]int{} // by model label
		admitted   = 0
		toolCalls  = map[string]float64{}
		last       answer
	)
	for _, s := range steps {
		// The twin engine, asked for usage the way the proxy asks, says
		// what the engine behind the proxy answered.
		twinBody := s.body
		if s.stream {
			twinBody, _ = withUsageRequestedString(s.body)
		}
		want := readAnswer(t, r.do(r.direct, http.MethodPost, s.path, twinBody))
		got := r.post(s.path, s.body)
		require.Equal(t, want.status, got.status, s.body)
		if s.model == otherLabel || !json.Valid([]byte(s.body)) {
			continue // refused by the proxy
		}

		requests[[3]string{s.model, boolString(s.stream), s.kind}]++
		queued[s.model]++ // every request the proxy passes on goes to the engine
		if want.status >= 400 {
			errs[[3]string{s.model, "4xx", s.kind}]++
		}
		var req map[string]any
		if json.Unmarshal([]byte(s.body), &req) == nil {
			temp, _ := req["temperature"].(float64)
			temps[key{s.model, s.kind}] = temp
		}
		if want.status != http.StatusOK {
			continue
		}
		k := key{s.model, s.kind}
		prompt[k] += want.tokens("prompt_tokens")
		completion[k] += want.tokens("completion_tokens")
		cached[k] += want.cached()
		for _, fr := range want.finishReasons {
			finish[[3]string{s.model, fr, s.kind}]++
		}
		for _, name := range want.tools {
			toolCalls[name]++
		}
		gen++
		if s.stream {
			admitted++
			if want.content {
				ttft++
			}
		}
		if n := want.tokens("completion_tokens"); (s.stream && n > 1) || (!s.stream && n > 0) {
			rates++
		}
		last = want
	}
	// Listing and health checks are relayed, not counted.
	r.do(r.url, http.MethodGet, "/v1/models", "")
	r.do(r.url, http.MethodGet, "/health", "")

	sc := r.scrape()
	// Every family of metadata.yaml but the fleet contract's (the
	// extension adds them), the vllm group's (compat [vllm] is off) and
	// the routing group's (one engine, no upstreams):
	// the scoring's too, as every answer gets the heuristics and the three
	// non-streamed answers (two chat, one text) injected logprobs.
	var families []string
	for _, e := range proxyMetadata(t).Metrics {
		if e.Value.Group != "vllm" && e.Value.Group != "routing" && !slices.Contains(fleet.Metrics, e.Key) {
			families = append(families, e.Key)
		}
	}
	assert.ElementsMatch(t, families, sc.Names(), "exactly the proxy's families")
	// Every request came from this machine without a key: "local".
	assert.Equal(t, float64(len(steps)-2), value(t, sc, "mlx_client_requests_total", "client", ClientLocal, "status", "2xx"))
	assert.Equal(t, 2.0, value(t, sc, "mlx_client_requests_total", "client", ClientLocal, "status", "4xx"))
	var promptSum float64
	for _, v := range prompt {
		promptSum += v
	}
	assert.Equal(t, promptSum, value(t, sc, "mlx_client_tokens_total", "client", ClientLocal, "type", "prompt"))

	// Counters: every series, and nothing else (the configured model's
	// series start at 0).
	wantSeries(t, sc, "mlx_requests_total", []string{"model", "streaming", "kind", "origin"}, func(l []string) float64 {
		return requests[[3]string{l[0], l[1], l[2]}]
	})
	wantSeries(t, sc, "mlx_error_total", []string{"model", "status", "kind", "origin"}, func(l []string) float64 {
		return errs[[3]string{l[0], l[1], l[2]}]
	})
	wantSeries(t, sc, "mlx_finish_reason_total", []string{"model", "reason", "kind", "origin"}, func(l []string) float64 {
		return finish[[3]string{l[0], l[1], l[2]}]
	})
	for name, m := range map[string]map[key]float64{"mlx_tokens_prompt_total": prompt, "mlx_tokens_completion_total": completion, "mlx_prompt_cached_tokens_total": cached} {
		wantSeries(t, sc, name, []string{"model", "kind", "origin"}, func(l []string) float64 { return m[key{l[0], l[1]}] })
	}
	wantSeries(t, sc, "mlx_tool_calls_total", []string{"model", "kind", "tool", "type", "origin"}, func(l []string) float64 {
		if l[0] != testModel || l[1] != KindChat || l[3] != "function" {
			return -1
		}
		return toolCalls[l[2]]
	})
	require.Equal(t, 2.0, toolCalls["get_weather"], "the test's tool requests made calls")
	wantSeries(t, sc, "mlx_temperature", []string{"model", "kind"}, func(l []string) float64 { return temps[key{l[0], l[1]}] })

	// Histograms: how many requests each observed, in the original buckets.
	wantHistogram(t, sc, "mlx_ttft_seconds", metricMlxTtftSecondsBuckets, ttft)
	wantHistogram(t, sc, "mlx_generation_seconds", metricMlxGenerationSecondsBuckets, gen)
	// The long-bucket twins count the same requests.
	wantHistogram(t, sc, "mlx_request_latency_seconds", metricMlxRequestLatencySecondsBuckets, gen)
	wantHistogram(t, sc, "mlx_time_to_first_token_seconds", metricMlxTimeToFirstTokenSecondsBuckets, ttft)
	wantHistogram(t, sc, "mlx_token_rate_tokens_per_second", metricMlxTokenRateTokensPerSecondBuckets, rates)
	assert.Equal(t, 1.0, value(t, sc, "mlx_http_refusals_total", "route", "chat_completions", "status", "404"))
	assert.Equal(t, 1.0, value(t, sc, "mlx_http_refusals_total", "route", "chat_completions", "status", "400"))
	// Queue wait: every request passed on, under its model's label.
	gotQueued := map[string]int{}
	for _, m := range sc.Families["mlx_queue_wait_seconds"].GetMetric() {
		gotQueued[labelValue(m, "model")] = int(m.GetHistogram().GetSampleCount())
	}
	assert.Equal(t, queued, gotQueued, "mlx_queue_wait_seconds by model")
	wantHistogram(t, sc, "mlx_admission_wait_seconds", metricMlxQueueWaitSecondsBuckets, admitted)
	wantHistogram(t, sc, "mlx_hallucination_risk_histogram", metricMlxHallucinationRiskHistogramBuckets, gen)
	wantHistogram(t, sc, "mlx_output_perplexity_histogram", metricMlxOutputPerplexityHistogramBuckets, 3)
	wantHistogram(t, sc, "mlx_token_entropy_histogram", metricMlxTokenEntropyHistogramBuckets, 3)
	wantSeries(t, sc, "mlx_confidence_scored_total", []string{"model", "source"}, func(l []string) float64 {
		if l[1] == SourceInjected {
			return 3
		}
		return 0
	})
	// The first stream asked mlx_lm for logprobs it does not stream: it
	// is not scored, and no later stream asks (stream_logprobs.go).
	wantSeries(t, sc, "mlx_confidence_unscored_total", []string{"model", "source"}, func(l []string) float64 {
		if l[0] == testModel && l[1] == SourceStreamed {
			return 1
		}
		return 0
	})
	assert.Equal(t, 0.0, value(t, sc, "mlx_scoring_dropped_total"))
	require.Positive(t, ttft, "some stream had content")

	// Gauges.
	assert.Equal(t, 1.0, value(t, sc, "mlx_up"))
	wantSeries(t, sc, "mlx_in_flight", []string{"model"}, func([]string) float64 { return 0 })
	used := last.tokens("prompt_tokens") + last.tokens("completion_tokens")
	require.Positive(t, used)
	wantSeries(t, sc, "mlx_context_used_tokens", []string{"model"}, func([]string) float64 { return used })
	wantSeries(t, sc, "mlx_context_utilization", []string{"model"}, func([]string) float64 { return used / 40960 })
	wantSeries(t, sc, "mlx_prompt_cache_ratio", []string{"model"}, func([]string) float64 {
		return last.cached() / last.tokens("prompt_tokens")
	})
	wantSeries(t, sc, "mlx_context_length_max_tokens", []string{"model"}, func([]string) float64 { return 40960 })
	wantSeries(t, sc, "mlx_kv_bytes_per_token", []string{"model"}, func([]string) float64 { return 36 * 2 * 8 * 128 * 2 })
	info := map[string]float64{
		"layer_count": 36, "kv_heads": 8, "head_dim": 128, "hidden_size": 2560, "attention_heads": 32,
		"vocab_size": 151936, "intermediate_size": 9728, "quant_bits": 4, "quant_group_size": 64,
		"tie_word_embeddings": 1, // Qwen3-4B has no linear-attention layers: no linear_* facts
	}
	wantSeries(t, sc, "mlx_model_info", []string{"model", "attr"}, func(l []string) float64 {
		if l[0] != testModel {
			return -1
		}
		return info[l[1]]
	})
	assert.Len(t, sc.Series("mlx_model_info"), len(info))
	assert.Equal(t, []string{`mlx_model_arch{arch="Qwen3ForCausalLM",dtype="bfloat16",model="mlx-community/Qwen3-4B-4bit",node="` + fleet.NodeName("") + `"}`}, sc.Series("mlx_model_arch"))
	assert.Equal(t, 1.0, value(t, sc, "mlx_model_arch"))
}

func withUsageRequestedString(body string) (string, bool) {
	b, ok := usageRequested([]byte(body))
	return string(b), ok
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func value(t *testing.T, sc *promtext.Scrape, name string, labels ...string) float64 {
	t.Helper()
	v, ok := sc.Value(name, labels...)
	require.True(t, ok, "%s%v in the scrape", name, labels)
	return v
}

// wantSeries checks every series of a family against want(label values in
// the given order); a model the test never used gets want 0 implicitly
// only when listed. want returning -1 marks a series that must not exist.
func wantSeries(t *testing.T, sc *promtext.Scrape, name string, labels []string, want func([]string) float64) {
	t.Helper()
	f := sc.Families[name]
	require.NotNil(t, f, name)
	for _, m := range f.GetMetric() {
		vals := make([]string, len(labels))
		for i, l := range labels {
			vals[i] = labelValue(m, l)
		}
		// And node, on every series (internal/fleet).
		require.Len(t, m.GetLabel(), len(labels)+1, "%s has labels %v and node", name, labels)
		require.Equal(t, fleet.NodeName(""), labelValue(m, "node"), name)
		if o := labelValue(m, "origin"); o != "" {
			require.Equal(t, OriginUser, o, "%s: every request of these tests is a user's", name)
		}
		w := want(vals)
		require.NotEqual(t, -1.0, w, "%s%v must not exist", name, vals)
		assert.InDelta(t, w, sampleValue(m), 1e-9, "%s%v", name, vals)
	}
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func sampleValue(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	}
	return 0
}

// wantHistogram checks one histogram of the configured model: its count
// and its buckets.
func wantHistogram(t *testing.T, sc *promtext.Scrape, name string, buckets []float64, count int) {
	t.Helper()
	f := sc.Families[name]
	require.NotNil(t, f, name)
	require.Equal(t, dto.MetricType_HISTOGRAM, f.GetType(), name)
	require.Len(t, f.GetMetric(), 1, name)
	m := f.GetMetric()[0]
	assert.Equal(t, testModel, labelValue(m, "model"))
	h := m.GetHistogram()
	assert.Equal(t, uint64(count), h.GetSampleCount(), name)
	var les []float64
	for _, b := range h.GetBucket() {
		les = append(les, b.GetUpperBound())
	}
	assert.Equal(t, append(append([]float64(nil), buckets...), math.Inf(1)), les, "%s buckets", name)
	if count > 0 {
		assert.Positive(t, h.GetSampleSum(), name)
	}
}
