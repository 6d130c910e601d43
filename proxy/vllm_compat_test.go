package proxy

import (
	"bytes"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The Gateway API Inference Extension's endpoint picker reads a vLLM
// server with these defaults (its model server protocol,
// docs/proposals/003-model-server-protocol/README.md, v1.x: TotalQueued,
// TotalRunning and KVCacheUtilization, gauges, vLLM's names); llm-d's
// router uses the same picker. Its scraper is not a dependency here (it
// brings Kubernetes' client libraries), so the page is parsed as it
// parses it: Prometheus' text format with expfmt, a gauge family by name.
var pickerDefaults = map[string]string{
	"TotalQueuedRequests":  "vllm:num_requests_waiting",
	"TotalRunningRequests": "vllm:num_requests_running",
	"KVCacheUtilization":   "vllm:kv_cache_usage_perc",
}

// pickerRead is what the picker reads from a page: each default's gauge
// value, for the one model the server serves (by vLLM's model_name; the
// proxy's node label beside it); absent when the family is missing.
func pickerRead(t *testing.T, page []byte) map[string]float64 {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(page))
	require.NoError(t, err)
	// The request gauges are served from the start under compat: a missing
	// one reads NaN, so no comparison with it can pass.
	out := map[string]float64{"TotalQueuedRequests": math.NaN(), "TotalRunningRequests": math.NaN()}
	for metric, name := range pickerDefaults {
		f, ok := families[name]
		if !ok {
			continue
		}
		require.Equal(t, dto.MetricType_GAUGE, f.GetType(), name)
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			require.Contains(t, labels, "model_name", "vLLM's label on %s", name)
			if labels["model_name"] == testModel {
				out[metric] = m.GetGauge().GetValue()
			}
		}
	}
	return out
}

// heldEngine answers streams only once admit is closed (mlx_lm sends a
// stream's headers when its batch admits the request), then sends a chunk
// and ends once finish is closed; a non-streamed request is answered whole
// once finish is closed.
func heldEngine(admit, finish <-chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			return
		}
		body, _ := io.ReadAll(r.Body)
		if !strings.Contains(string(body), `"stream": true`) {
			<-finish
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"id": "c1", "object": "chat.completion", "model": "`+testModel+`", "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]}`)
			return
		}
		<-admit
		w.Header().Set("Content-Type", "text/event-stream")
		flush(w, chunk)
		<-finish
		flush(w, "data: [DONE]\n\n")
	}
}

func (r *rig) pickerReads() map[string]float64 {
	r.t.Helper()
	resp := r.do(r.url, http.MethodGet, "/metrics", "")
	require.Equal(r.t, http.StatusOK, resp.status)
	return pickerRead(r.t, resp.body)
}

// The picker's three defaults: waiting while the engine has not admitted
// a stream, running once it has (and a non-streamed request once sent),
// KV usage as the KV-cache receiver last gave it.
func TestVLLMGaugesAsThePickerReadsThem(t *testing.T) {
	admit, finish := make(chan struct{}), make(chan struct{})
	r := rigWithUpstream(t, heldEngine(admit, finish), served(func(c *Config) { c.Compat = []string{CompatVLLM} }))
	// Run before the rig's cleanups (last registered, first run): a failed
	// assertion releases the held requests rather than hang the shutdown.
	var admitOnce, finishOnce sync.Once
	admitNow := func() { admitOnce.Do(func() { close(admit) }) }
	finishNow := func() { finishOnce.Do(func() { close(finish) }) }
	t.Cleanup(func() { admitNow(); finishNow() })
	assert.Equal(t, map[string]float64{"TotalQueuedRequests": 0, "TotalRunningRequests": 0}, r.pickerReads(),
		"no KV usage before the receiver gives one")

	var wg sync.WaitGroup
	send := func(body string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.post(chatPath, body)
		}()
	}
	send(streamBody)
	send(streamBody)
	require.Eventually(t, func() bool {
		got := r.pickerReads()
		return got["TotalQueuedRequests"] == 2 && got["TotalRunningRequests"] == 0
	}, 5*time.Second, 5*time.Millisecond, "two streams waiting for the engine's headers")
	send(`{"messages": [{"role": "user", "content": "hi"}]}`)
	require.Eventually(t, func() bool {
		got := r.pickerReads()
		return got["TotalQueuedRequests"] == 2 && got["TotalRunningRequests"] == 1
	}, 5*time.Second, 5*time.Millisecond, "a non-streamed request runs once sent")

	admitNow()
	require.Eventually(t, func() bool {
		got := r.pickerReads()
		return got["TotalQueuedRequests"] == 0 && got["TotalRunningRequests"] == 3
	}, 5*time.Second, 5*time.Millisecond, "the admitted streams run")

	r.proxy.SetKVCacheUsage(0.375, true)
	assert.Equal(t, 0.375, r.pickerReads()["KVCacheUtilization"])

	finishNow()
	wg.Wait()
	settle(r.proxy)
	assert.Equal(t, map[string]float64{"TotalQueuedRequests": 0, "TotalRunningRequests": 0, "KVCacheUtilization": 0.375}, r.pickerReads())

	r.proxy.SetKVCacheUsage(0, false)
	_, ok := r.pickerReads()["KVCacheUtilization"]
	assert.False(t, ok, "no cache state known: no series, not a 0")
}

// An engine that refuses a stream before admitting it (an error with its
// headers) leaves neither gauge raised.
func TestVLLMGaugesAfterAnEngineError(t *testing.T) {
	r := rigWithUpstream(t, func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/health" {
			return
		}
		http.Error(w, `{"error": "Only 'text' content type is supported."}`, http.StatusNotFound)
	}, served(func(c *Config) { c.Compat = []string{CompatVLLM} }))
	r.post(chatPath, streamBody)
	settle(r.proxy)
	assert.Equal(t, map[string]float64{"TotalQueuedRequests": 0, "TotalRunningRequests": 0}, r.pickerReads())
}

// Without compat the scrape has no vllm: family, and compat takes only
// names it knows.
func TestVLLMGaugesAreOptIn(t *testing.T) {
	r := newRig(t)
	r.post(chatPath, `{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}`)
	for _, name := range r.scrape().Names() {
		assert.False(t, strings.HasPrefix(name, "vllm:"), name)
	}
	cfg := DefaultConfig()
	cfg.Compat = []string{"sglang"}
	assert.ErrorContains(t, cfg.Validate(), `compat: "sglang" is not one of [vllm]`)
}
