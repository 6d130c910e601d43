//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A burst of requests with large prompts within one batch interval: every
// span reaches Jaeger. One batch of the burst (up to 128 spans, the bound
// of config/mlx.yaml's batch/traces; here about 64 spans of some 200 KiB
// each with their content) is more than the 4 MiB a gRPC server takes by
// default, and a refused batch loses every span in it
// (otelcol_exporter_send_failed_spans). The shipped Jaeger takes 64 MiB;
// without that line this test fails.
func TestABurstOfLargeSpansReachesJaeger(t *testing.T) {
	j := startJaeger(t)
	telemetry := freePort(t)
	s := startCollector(t, collectorOptions{
		configs: append(append([]string{}, demoConfigs...), telemetryOverlay(t, telemetry),
			engineOverlay(t, "--sim-prefill-tokens-per-second", "1000000", "--sim-decode-tokens-per-second", "100000")),
		sets: append(traceSets(j, startOpik(t)), "service::telemetry::metrics::level=normal"),
		env:  map[string]string{"MLXSIM_LOAD_DELAY": "0s"},
	})
	waitEngineReady(s)
	url := s.proxyURL("/v1/chat/completions")
	prompt := strings.Repeat("The owls of the northern forest hunt at night. ", 2200) // about 100 KiB
	const requests = 64
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	began := time.Now()
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < requests/8; i++ {
				body := fmt.Sprintf(`{"messages": [{"role": "user", "content": %q}], "max_tokens": 4}`, fmt.Sprint(i, w, prompt))
				resp, err := http.Post(url, "application/json", strings.NewReader(body))
				if err != nil {
					continue
				}
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					mu.Lock()
					ok++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d requests answered in %s", ok, time.Since(began).Round(time.Millisecond))
	require.Equal(t, requests, ok)

	col := fmt.Sprintf("http://127.0.0.1:%d/metrics", telemetry)
	var sent, failed float64
	require.Eventually(t, func() bool {
		sc := scrapeURL(t, col)
		sent = sum(sc, "otelcol_exporter_sent_spans", "exporter", "otlp_grpc/jaeger")
		failed = sum(sc, "otelcol_exporter_send_failed_spans", "exporter", "otlp_grpc/jaeger")
		return sent+failed >= requests
	}, 60*time.Second, 500*time.Millisecond, "the burst's spans exported or failed")
	assert.Zero(t, failed, "spans Jaeger refused")
	assert.GreaterOrEqual(t, sent, float64(requests))
}
