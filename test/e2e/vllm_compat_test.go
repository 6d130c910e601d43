//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/loadgen"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

// With compat [vllm], the gauges a gateway balances on move with load:
// streams queued behind a seeded request (mlx_lm serves a seeded request
// alone, and sends a queued stream's headers only once it is admitted)
// are waiting, then running together once it is done; KV usage is the
// mlx_kvcache receiver's utilisation of the engine's prompt cache. The
// page is read as the Gateway API Inference Extension's endpoint picker
// reads a vLLM server with its defaults (its vLLM metric names, the
// model_name label).
func TestVLLMCompatGaugesMoveWithLoad(t *testing.T) {
	s := startVLLMCompat(t, "5")
	idle := s.waitFor("mlx_proxy", 10*time.Second, "the vllm gauges at 0", func(sc *promtext.Scrape) bool {
		w, okW := sc.Value("vllm:num_requests_waiting", "model_name", demoModel)
		r, okR := sc.Value("vllm:num_requests_running", "model_name", demoModel)
		return okW && okR && w == 0 && r == 0
	})
	assert.Equal(t, "GAUGE", idle.Families["vllm:num_requests_waiting"].GetType().String())

	const queued = 3
	waiting, finish := queueBehindSeeded(t, s, queued)
	assert.Equal(t, 1.0, vllmGauge(t, waiting, "vllm:num_requests_running"), "the seeded request alone runs")
	assert.Equal(t, float64(queued+1), value(t, waiting, "mlx_in_flight", "model", demoModel), "waiting and running add up to the requests in flight")

	s.waitFor("mlx_proxy", 60*time.Second, "the queued streams running together", func(sc *promtext.Scrape) bool {
		return vllmGauge(t, sc, "vllm:num_requests_running") == queued && vllmGauge(t, sc, "vllm:num_requests_waiting") == 0
	})
	finish()
	s.waitFor("mlx_proxy", 10*time.Second, "the gauges back at 0", func(sc *promtext.Scrape) bool {
		return vllmGauge(t, sc, "vllm:num_requests_running") == 0 && vllmGauge(t, sc, "vllm:num_requests_waiting") == 0
	})

	// KV usage follows the engine's cache as the mlx_kvcache receiver
	// reads it from the engine's log (a cache of 10 sequences, mlx_lm's
	// default, holding the conversations just served).
	sc, receiver := kvUsageAsTheReceiver(t, s)
	assert.Equal(t, "GAUGE", sc.Families["vllm:kv_cache_usage_perc"].GetType().String())
	assert.LessOrEqual(t, receiver, 1.0, "a handful of conversations in a cache of 10")
}

// startVLLMCompat runs the built collector with compat [vllm], an engine
// decoding decodeTPS tokens a second and a KV-cache receiver collecting
// every 250 ms, and waits for the engine.
func startVLLMCompat(t *testing.T, decodeTPS string) *stack {
	t.Helper()
	overlay := engineOverlay(t, "--sim-load-delay", "0s", "--sim-decode-tokens-per-second", decodeTPS)
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
	return s
}

func vllmGauge(t *testing.T, sc *promtext.Scrape, name string) float64 {
	return value(t, sc, name, "model_name", demoModel)
}

// queueBehindSeeded sends a seeded stream (mlx_lm serves a seeded request
// alone, and sends a queued stream's headers only once it is admitted)
// and, once it runs, queued streams behind it. It returns the scrape that
// shows them waiting, and finish, which waits for every request to end
// and fails the test on an error.
func queueBehindSeeded(t *testing.T, s *stack, queued int) (*promtext.Scrape, func()) {
	t.Helper()
	url := fmt.Sprintf("http://127.0.0.1:%d/v1/chat/completions", s.ports["mlx_proxy"])
	client := &http.Client{Timeout: 3 * time.Minute}
	var wg sync.WaitGroup
	errs := make(chan error, queued+1)
	send := func(body string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- loadgen.Post(client, url, body)()
		}()
	}
	send(fmt.Sprintf(`{"model": %q, "messages": [{"role": "user", "content": "Tell a story."}], "max_tokens": 40, "seed": 3, "stream": true}`, demoModel))
	s.waitFor("mlx_proxy", 30*time.Second, "the seeded request running", func(sc *promtext.Scrape) bool {
		return vllmGauge(t, sc, "vllm:num_requests_running") == 1
	})
	for i := range queued {
		send(fmt.Sprintf(`{"model": %q, "messages": [{"role": "user", "content": "Question %d: what is a queue?"}], "max_tokens": 40, "stream": true}`, demoModel, i))
	}
	waiting := s.waitFor("mlx_proxy", 30*time.Second, "the streams behind it waiting", func(sc *promtext.Scrape) bool {
		return vllmGauge(t, sc, "vllm:num_requests_waiting") == float64(queued)
	})
	return waiting, func() {
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
	}
}

// kvUsageAsTheReceiver waits until vllm:kv_cache_usage_perc is the
// mlx_kvcache receiver's mlx_kv_cache_utilization, and returns the scrape
// and the value.
func kvUsageAsTheReceiver(t *testing.T, s *stack) (*promtext.Scrape, float64) {
	t.Helper()
	var receiver float64
	sc := s.waitFor("mlx_proxy", 30*time.Second, "vllm:kv_cache_usage_perc equal to the receiver's mlx_kv_cache_utilization", func(sc *promtext.Scrape) bool {
		kv, err := s.scrape("prometheus/kv")
		if err != nil {
			return false
		}
		u, okU := kv.Value("mlx_kv_cache_utilization")
		v, okV := sc.Value("vllm:kv_cache_usage_perc", "model_name", demoModel)
		receiver = u
		return okU && okV && u > 0 && v == u
	})
	return sc, receiver
}
