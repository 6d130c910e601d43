//go:build e2e && picker

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/loadgen"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

// pickerReading is what test/gie (the Gateway API Inference Extension's
// own endpoint picker code, v1.5.0: its HTTP metrics data source and core
// metrics extractor with the built-in vLLM defaults) read from a page.
type pickerReading struct {
	WaitingQueueSize    int     `json:"waiting_queue_size"`
	RunningRequestsSize int     `json:"running_requests_size"`
	KVCacheUsagePercent float64 `json:"kv_cache_usage_percent"`
	Updated             bool    `json:"updated"`
	ExtractError        string  `json:"extract_error"`
}

func pickerRead(t *testing.T, picker, hostPort string) pickerReading {
	t.Helper()
	out, err := exec.Command(picker, "-endpoint", hostPort).Output()
	if ee, ok := err.(*exec.ExitError); ok {
		t.Fatalf("gie-picker: %v: %s", err, ee.Stderr)
	}
	require.NoError(t, err)
	var r pickerReading
	require.NoError(t, json.Unmarshal(out, &r))
	return r
}

// With compat [vllm], the endpoint picker's own scraper and extractor
// read the proxy's /metrics as a vLLM server's: requests waiting for the
// engine, running, and the KV-cache usage the mlx_kvcache receiver saw.
// Its vLLM defaults also name vllm:lora_requests_info and
// vllm:cache_config_info, which an mlx_lm has no equivalent of (no LoRA
// adapters served by name, no paged blocks): the extractor reports them
// missing and keeps the rest, as it does for any server without them.
func TestVLLMGaugesAsTheEndpointPickerReadsThem(t *testing.T) {
	picker := os.Getenv("GIE_PICKER")
	require.NotEmpty(t, picker, "GIE_PICKER: the picker built from test/gie (make e2e-picker)")

	overlay := engineOverlay(t, "--sim-load-delay", "0s", "--sim-decode-tokens-per-second", "5")
	s := startCollector(t, collectorOptions{
		configs: append(demoConfigs, overlay),
		env:     map[string]string{"HF_HUB_CACHE": hubCacheWithModel(t)},
		sets: []string{
			"extensions::mlx_proxy::compat=[vllm]",
			"receivers::mlx_supervisor::health_check::interval=1h",
			"receivers::mlx_kvcache::collection_interval=250ms",
		},
	})
	s.waitFor("prometheus/supervisor", 30*time.Second, "mlx_server_ready 1", func(sc *promtext.Scrape) bool {
		v, _ := sc.Value("mlx_server_ready")
		return v == 1
	})
	endpoint := fmt.Sprintf("127.0.0.1:%d", s.ports["mlx_proxy"])
	idle := pickerRead(t, picker, endpoint)
	assert.True(t, idle.Updated)
	assert.Equal(t, 0, idle.WaitingQueueSize)
	assert.Equal(t, 0, idle.RunningRequestsSize)

	gauge := func(sc *promtext.Scrape, name string) float64 { return value(t, sc, name, "model_name", demoModel) }
	url := fmt.Sprintf("http://%s/v1/chat/completions", endpoint)
	client := &http.Client{Timeout: 3 * time.Minute}
	const queued = 2
	var wg sync.WaitGroup
	errs := make(chan error, queued+1)
	send := func(body string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- loadgen.Post(client, url, body)()
		}()
	}
	// mlx_lm serves a seeded request alone; the streams behind it wait.
	send(fmt.Sprintf(`{"model": %q, "messages": [{"role": "user", "content": "Tell a story."}], "max_tokens": 40, "seed": 3, "stream": true}`, demoModel))
	s.waitFor("mlx_proxy", 30*time.Second, "the seeded request running", func(sc *promtext.Scrape) bool {
		return gauge(sc, "vllm:num_requests_running") == 1
	})
	for i := range queued {
		send(fmt.Sprintf(`{"model": %q, "messages": [{"role": "user", "content": "Question %d: what is a queue?"}], "max_tokens": 40, "stream": true}`, demoModel, i))
	}
	s.waitFor("mlx_proxy", 30*time.Second, "the streams behind it waiting", func(sc *promtext.Scrape) bool {
		return gauge(sc, "vllm:num_requests_waiting") == queued
	})
	busy := pickerRead(t, picker, endpoint)
	assert.Equal(t, queued, busy.WaitingQueueSize, "the picker's queue")
	assert.Equal(t, 1, busy.RunningRequestsSize, "the picker's running requests")

	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	var receiver float64
	s.waitFor("mlx_proxy", 30*time.Second, "the KV usage the receiver saw, idle gauges", func(sc *promtext.Scrape) bool {
		kv, err := s.scrape("prometheus/kv")
		if err != nil {
			return false
		}
		u, okU := kv.Value("mlx_kv_cache_utilization")
		v, okV := sc.Value("vllm:kv_cache_usage_perc", "model_name", demoModel)
		receiver = u
		return okU && okV && u > 0 && v == u && gauge(sc, "vllm:num_requests_running") == 0
	})
	done := pickerRead(t, picker, endpoint)
	assert.Equal(t, 0, done.WaitingQueueSize)
	assert.Equal(t, 0, done.RunningRequestsSize)
	assert.InDelta(t, receiver, done.KVCacheUsagePercent, 1e-9, "the picker's KV-cache usage is the receiver's")
	assert.Contains(t, done.ExtractError, "vllm:lora_requests_info")
	assert.Contains(t, done.ExtractError, "vllm:cache_config_info")
	assert.NotContains(t, done.ExtractError, "num_requests")
	assert.NotContains(t, done.ExtractError, "kv_cache_usage_perc")
}
