//go:build e2e && stack

package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// kubernetes-sigs/inference-perf (v0.6.1 and main at 7de5ef2) reads a vLLM
// server's series from Prometheus after a run: its vLLM client names them
// (inference_perf/client/modelserver/vllm_client.py,
// get_prometheus_metric_metadata, filtered by model_name), and each kind
// of metric has its PromQL (inference_perf/client/modelserver/metrics/
// {counter,gauge,histogram}/base.py, get_queries), evaluated at one
// instant over the run's duration; the first result's value, rounded to 6
// places, is the number, and a query with no result reads as 0
// (inference_perf/client/server_metrics/prometheus_client/base.py,
// execute_query). inference-perf is Python; its queries are rebuilt here
// word for word and run against a real VictoriaMetrics scraping the built
// collector, so what the test reads is what inference-perf would report.

// ipKind is inference-perf's metric class.
type ipKind int

const (
	ipCounter ipKind = iota
	ipGauge
	ipHistogram
)

// ipQueries is get_queries of inference-perf's CounterMetric, GaugeMetric
// and HistogramMetric, in their order.
func ipQueries(kind ipKind, metric string, duration float64, filters string) []string {
	d := fmt.Sprintf("%.0fs", duration)
	switch kind {
	case ipCounter:
		s := metric + "{" + filters + "}"
		if strings.HasPrefix(metric, "{") && strings.HasSuffix(metric, "}") {
			s = "{" + metric[1:len(metric)-1] + "," + filters + "}"
		}
		return []string{
			fmt.Sprintf("sum(increase(%s[%s]))", s, d),
			fmt.Sprintf("avg_over_time(rate(%s[%s])[%s:%s])", s, d, d, d),
			fmt.Sprintf("sum(rate(%s[%s]))", s, d),
		}
	case ipGauge:
		sel := metric + "{" + filters + "}"
		return []string{
			fmt.Sprintf("avg_over_time(%s[%s])", sel, d),
			fmt.Sprintf("quantile_over_time(0.5, %s[%s])", sel, d),
			fmt.Sprintf("quantile_over_time(0.9, %s[%s])", sel, d),
			fmt.Sprintf("quantile_over_time(0.99, %s[%s])", sel, d),
		}
	default:
		f, m := filters, metric
		return []string{
			fmt.Sprintf("sum(rate(%s_sum{%s}[%s])) / (sum(rate(%s_count{%s}[%s])) > 0)", m, f, d, m, f, d),
			fmt.Sprintf("histogram_quantile(0.5, sum(rate(%s_bucket{%s}[%s])) by (le))", m, f, d),
			fmt.Sprintf("histogram_quantile(0.9, sum(rate(%s_bucket{%s}[%s])) by (le))", m, f, d),
			fmt.Sprintf("histogram_quantile(0.99, sum(rate(%s_bucket{%s}[%s])) by (le))", m, f, d),
			fmt.Sprintf("sum(rate(%s_count{%s}[%s]))", m, f, d),
		}
	}
}

// ipMetric is one entry of the vLLM client's metadata: the report field
// and its series.
type ipMetric struct {
	field, name string
	kind        ipKind
}

// What vllm_client.py reads, named fields first, then custom_metrics.
var ipVLLM = []ipMetric{
	{"prompt_tokens", "vllm:prompt_tokens", ipCounter},
	{"output_tokens", "vllm:generation_tokens", ipCounter},
	{"requests", `{__name__=~"vllm:request_success(_total)?"}`, ipCounter},
	{"request_latency", "vllm:e2e_request_latency_seconds", ipHistogram},
	{"queue_length", "vllm:num_requests_waiting", ipGauge},
	{"time_per_output_token", "vllm:request_time_per_output_token_seconds", ipHistogram},
	{"num_requests_running", "vllm:num_requests_running", ipGauge},
	{"time_to_first_token", "vllm:time_to_first_token_seconds", ipHistogram},
	{"inter_token_latency", "vllm:inter_token_latency_seconds", ipHistogram},
	{"request_success_count", `{__name__=~"vllm:request_success(_total)?"}`, ipCounter},
	{"kv_cache_usage", "vllm:kv_cache_usage_perc", ipGauge},
	{"request_queue_time", "vllm:request_queue_time_seconds", ipHistogram},
	{"request_inference_time", "vllm:request_inference_time_seconds", ipHistogram},
	{"request_prefill_time", "vllm:request_prefill_time_seconds", ipHistogram},
	{"request_decode_time", "vllm:request_decode_time_seconds", ipHistogram},
	{"request_prompt_tokens", "vllm:request_prompt_tokens", ipHistogram},
	{"request_generation_tokens", "vllm:request_generation_tokens", ipHistogram},
}

// What the vLLM client also reads and an mlx_lm behind the proxy cannot
// give: inference-perf reads these as 0, as it does for a vLLM without
// them. Preemption, prefix-cache block and multimodal-cache counters, the
// engine step's token histogram and the NaN check are the engine's
// internals; the request parameter histograms (max_tokens, n) are not
// served either.
var ipVLLMNotServed = []string{
	"vllm:num_preemptions", "vllm:prefix_cache_hits", "vllm:prefix_cache_queries",
	"vllm:request_max_num_generation_tokens", "vllm:request_params_n", "vllm:request_params_max_tokens",
	"vllm:iteration_tokens_total", "vllm:prompt_tokens_cached", "vllm:external_prefix_cache_hits",
	"vllm:external_prefix_cache_queries", "vllm:mm_cache_hits", "vllm:mm_cache_queries",
	"vllm:corrupted_requests", "vllm:request_prefill_kv_computed_tokens",
	"vllm:kv_block_idle_before_evict_seconds", "vllm:kv_block_lifetime_seconds", "vllm:kv_block_reuse_gap_seconds",
}

// ipRun is one client request as the benchmark's client saw it.
type ipRun struct {
	prompt, completion int
	finish             string
	e2e, ttft          float64 // seconds; ttft 0 for a whole answer
}

// ipPost sends one completion and reads it as a client does: the whole
// answer, or the stream with its usage chunk (stream_options).
func ipPost(client *http.Client, url, body string, stream bool) (ipRun, error) {
	start := time.Now()
	resp, err := client.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return ipRun{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return ipRun{}, fmt.Errorf("status %d", resp.StatusCode)
	}
	type usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	}
	var run ipRun
	if !stream {
		var a struct {
			Choices []struct {
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
			Usage *usage `json:"usage"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
			return ipRun{}, err
		}
		if a.Usage == nil || len(a.Choices) == 0 {
			return ipRun{}, fmt.Errorf("an answer without usage or choices")
		}
		run.prompt, run.completion, run.finish = a.Usage.PromptTokens, a.Usage.CompletionTokens, a.Choices[0].FinishReason
		run.e2e = time.Since(start).Seconds()
		return run, nil
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	done := false
	for sc.Scan() {
		data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
		if !ok {
			continue
		}
		if string(data) == "[DONE]" {
			done = true
			break
		}
		var c struct {
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					Reasoning string `json:"reasoning"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *usage `json:"usage"`
		}
		if err := json.Unmarshal(data, &c); err != nil {
			return ipRun{}, err
		}
		for _, ch := range c.Choices {
			if run.ttft == 0 && (ch.Delta.Content != "" || ch.Delta.Reasoning != "") {
				run.ttft = time.Since(start).Seconds()
			}
			if ch.FinishReason != nil {
				run.finish = *ch.FinishReason
			}
		}
		if c.Usage != nil {
			run.prompt, run.completion = c.Usage.PromptTokens, c.Usage.CompletionTokens
		}
	}
	if err := sc.Err(); err != nil {
		return ipRun{}, err
	}
	if !done || run.completion == 0 {
		return ipRun{}, fmt.Errorf("a stream without [DONE] or usage")
	}
	run.e2e = time.Since(start).Seconds()
	return run, nil
}

// With compat [vllm], a benchmark run against the proxy reads in
// inference-perf what the run was: its requests, its tokens exactly, its
// latencies within what the client measured, every series it reads from
// vLLM that the proxy can know present.
func TestStackInferencePerfReadsTheVLLMSeries(t *testing.T) {
	s := startVLLMCompat(t, "40")
	proxy := fmt.Sprintf("127.0.0.1:%d", s.ports["mlx_proxy"])
	dir := t.TempDir()
	scrape := filepath.Join(dir, "scrape.yml")
	require.NoError(t, os.WriteFile(scrape, []byte(fmt.Sprintf(`global:
  scrape_interval: 1s
scrape_configs:
  - job_name: mlx_proxy
    static_configs:
      - targets: [%q]
`, proxy)), 0o644))
	vm := startVM(t, "victoria-metrics (inference-perf)", freePort(t), scrape)

	// The run starts once VictoriaMetrics holds the series at their
	// starting 0, as inference-perf's run starts against a running server.
	require.Eventually(t, func() bool {
		r, err := vm.query(fmt.Sprintf(`vllm:request_success_total{model_name=%q,finished_reason="stop"}`, demoModel))
		return err == nil && len(r) == 1
	}, 30*time.Second, 250*time.Millisecond, "the vllm: series scraped before the run")
	start := time.Now()

	// A bounded run: streams with their usage chunk and whole answers,
	// three at a time.
	url := "http://" + proxy + "/v1/chat/completions"
	client := &http.Client{Timeout: 2 * time.Minute}
	const streams, whole = 6, 3
	var (
		mu   sync.Mutex
		runs []ipRun
		errs []error
		wg   sync.WaitGroup
	)
	slots := make(chan struct{}, 3)
	for i := range streams + whole {
		stream := i < streams
		body := fmt.Sprintf(`{"model": %q, "messages": [{"role": "user", "content": "Benchmark question %d: say something about queues."}], "max_tokens": %d, "stream": %t%s}`,
			demoModel, i, 16+2*i, stream, map[bool]string{true: `, "stream_options": {"include_usage": true}`}[stream])
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			run, err := ipPost(client, url, body, stream)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			runs = append(runs, run)
		}()
	}
	wg.Wait()
	require.Empty(t, errs)
	require.Len(t, runs, streams+whole)

	var prompt, completion int
	var e2eSum, ttftMax float64
	finishes := map[string]int{}
	for _, r := range runs {
		prompt += r.prompt
		completion += r.completion
		e2eSum += r.e2e
		ttftMax = math.Max(ttftMax, r.ttft)
		finishes[r.finish]++
	}
	require.Positive(t, ttftMax, "the streams' first tokens")

	// inference-perf waits for the last scrape; here, until the store
	// holds every request.
	require.Eventually(t, func() bool {
		r, err := vm.query(fmt.Sprintf(`sum(vllm:request_success_total{model_name=%q})`, demoModel))
		return err == nil && len(r) == 1 && r[0].value() == strconv.Itoa(streams+whole)
	}, 30*time.Second, 250*time.Millisecond, "every request of the run in VictoriaMetrics")
	duration := time.Since(start).Seconds() + 1

	filters := fmt.Sprintf("model_name='%s'", demoModel)
	read := map[string][]float64{}
	for _, m := range ipVLLM {
		if m.field == "prompt_tokens" || m.field == "output_tokens" {
			// vllm_client.py names these two bare (vllm:prompt_tokens),
			// where vLLM's prometheus_client counter serves
			// vllm:prompt_tokens_total, as the proxy does: inference-perf
			// reads them as 0 from a stock vLLM too (its own e2e test,
			// e2e/tests/test_vllm_cpu_token_mismatch.py, reads /metrics
			// directly and accepts both names). The proxy serves vLLM's
			// name; the totals are held below with the query inference-perf
			// uses for its other counters, the (_total)? selector.
			for _, q := range ipQueries(m.kind, m.name, duration, filters) {
				r, err := vm.query(q)
				require.NoError(t, err, q)
				assert.Empty(t, r, "as from a stock vLLM: %s", q)
			}
			m.name = fmt.Sprintf(`{__name__=~"%s(_total)?"}`, m.name)
		}
		var got []float64
		for _, q := range ipQueries(m.kind, m.name, duration, filters) {
			r, err := vm.query(q)
			require.NoError(t, err, q)
			require.NotEmpty(t, r, "%s: inference-perf would read a missing series as 0: %s", m.field, q)
			v, err := strconv.ParseFloat(r[0].value(), 64)
			require.NoError(t, err, q)
			got = append(got, math.Round(v*1e6)/1e6)
		}
		read[m.field] = got
		t.Logf("inference-perf %s: %v", m.field, got)
	}
	for _, name := range ipVLLMNotServed {
		r, err := vm.query(fmt.Sprintf(`{__name__=~"%s(_total|_sum|_count|_bucket)?"}`, name))
		require.NoError(t, err)
		assert.Empty(t, r, "%s is not served (inference-perf reads 0)", name)
	}

	// Counters: totals are the run's, to the token.
	n := float64(streams + whole)
	assert.Equal(t, float64(prompt), read["prompt_tokens"][0], "prompt tokens, total")
	assert.Equal(t, float64(completion), read["output_tokens"][0], "output tokens, total")
	assert.Equal(t, n, read["requests"][0], "requests, total")
	assert.Equal(t, n, read["request_success_count"][0])

	// Histograms: the means of the token counts are the run's; the
	// latencies lie within what the client measured around them.
	assert.InDelta(t, float64(prompt)/n, read["request_prompt_tokens"][0], 1e-5, "mean prompt length")
	assert.InDelta(t, float64(completion)/n, read["request_generation_tokens"][0], 1e-5, "mean answer length")
	e2eMean := read["request_latency"][0]
	assert.Positive(t, e2eMean)
	assert.LessOrEqual(t, e2eMean, e2eSum/n, "the proxy's end-to-end mean within the client's")
	ttftP50 := read["time_to_first_token"][1]
	assert.Positive(t, ttftP50)
	assert.LessOrEqual(t, ttftP50, ttftUpperBucket(ttftMax), "the TTFT median within the bucket of the slowest first token")
	for _, field := range []string{"time_per_output_token", "inter_token_latency", "request_queue_time", "request_inference_time", "request_prefill_time", "request_decode_time"} {
		assert.GreaterOrEqual(t, read[field][0], 0.0, field)
		assert.LessOrEqual(t, read[field][0], e2eMean*n, field)
	}
	assert.Positive(t, read["request_decode_time"][0], "the streams decoded")
	assert.Positive(t, read["inter_token_latency"][4], "inter-token gaps per second")
	assert.Positive(t, read["request_latency"][4], "requests per second")
	assert.Positive(t, read["request_queue_time"][4], "streams per second (only streams show phases)")

	// The run's finishes, by vLLM's finished_reason.
	for reason, count := range finishes {
		want := "stop"
		if reason == "length" {
			want = "length"
		}
		r, err := vm.query(fmt.Sprintf(`sum(vllm:request_success_total{model_name=%q,finished_reason=%q})`, demoModel, want))
		require.NoError(t, err)
		require.Len(t, r, 1, want)
		assert.Equal(t, strconv.Itoa(count), r[0].value(), "requests that ended with %s", reason)
	}
	// Gauges: present, within what the run could reach.
	assert.LessOrEqual(t, read["queue_length"][3], n)
	assert.LessOrEqual(t, read["num_requests_running"][3], n)
	assert.Positive(t, read["kv_cache_usage"][0], "the KV-cache receiver's utilisation")
}

// ttftUpperBucket is the upper bound of vLLM's TTFT bucket holding v
// (vllm/v1/metrics/buckets.py, TIME_TO_FIRST_TOKEN_BUCKETS): a quantile
// from the buckets can be no more.
func ttftUpperBucket(v float64) float64 {
	for _, b := range []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560} {
		if v <= b {
			return b
		}
	}
	return math.Inf(1)
}
