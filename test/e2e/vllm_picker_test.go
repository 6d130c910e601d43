//go:build e2e && picker

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

	s := startVLLMCompat(t, "5")
	endpoint := fmt.Sprintf("127.0.0.1:%d", s.ports["mlx_proxy"])
	idle := pickerRead(t, picker, endpoint)
	assert.True(t, idle.Updated)
	assert.Equal(t, 0, idle.WaitingQueueSize)
	assert.Equal(t, 0, idle.RunningRequestsSize)

	const queued = 2
	_, finish := queueBehindSeeded(t, s, queued)
	busy := pickerRead(t, picker, endpoint)
	assert.Equal(t, queued, busy.WaitingQueueSize, "the picker's queue")
	assert.Equal(t, 1, busy.RunningRequestsSize, "the picker's running requests")

	finish()
	s.waitFor("mlx_proxy", 10*time.Second, "the gauges back at 0", func(sc *promtext.Scrape) bool {
		return vllmGauge(t, sc, "vllm:num_requests_running") == 0 && vllmGauge(t, sc, "vllm:num_requests_waiting") == 0
	})
	_, receiver := kvUsageAsTheReceiver(t, s)
	done := pickerRead(t, picker, endpoint)
	assert.Equal(t, 0, done.WaitingQueueSize)
	assert.Equal(t, 0, done.RunningRequestsSize)
	assert.InDelta(t, receiver, done.KVCacheUsagePercent, 1e-9, "the picker's KV-cache usage is the receiver's")
	assert.Contains(t, done.ExtractError, "vllm:lora_requests_info")
	assert.Contains(t, done.ExtractError, "vllm:cache_config_info")
	assert.NotContains(t, done.ExtractError, "num_requests")
	assert.NotContains(t, done.ExtractError, "kv_cache_usage_perc")
}
