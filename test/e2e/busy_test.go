//go:build e2e

package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/internal/promtext"
)

// fastProbes make the supervisor probe every 500 ms with a 500 ms timeout
// and call an engine hung after 2 s of failures.
var fastProbes = []string{
	"receivers::mlx_supervisor::health_check::interval=500ms",
	"receivers::mlx_supervisor::health_check::timeout=500ms",
	"receivers::mlx_supervisor::health_check::hang_after=2s",
}

// A long unbatchable request (a seed: mlx_lm's one generation thread
// serves it alone) makes every completion probe wait and fail for
// seconds. Its tokens flowing through the proxy prove the engine alive:
// no restart, and the client gets its whole answer. (Before, the
// supervisor killed the busy engine after hang_after, with the request in
// flight.)
func TestBusyEngineIsNotRestarted(t *testing.T) {
	s := startCollector(t, collectorOptions{configs: append(demoConfigs, engineOverlay(t, "--sim-decode-tokens-per-second", "6")),
		sets: fastProbes, env: map[string]string{"MLXSIM_LOAD_DELAY": "0s"}})
	waitEngineReady(s)
	resp, err := http.Post(s.proxyURL("/v1/chat/completions"), "application/json", strings.NewReader(
		`{"model": "mlx-community/Qwen3-4B-4bit", "messages": [{"role": "user", "content": "Write a long essay"}], "stream": true, "seed": 7, "chat_template_kwargs": {"enable_thinking": true}}`))
	require.NoError(t, err)
	// Reasoning and answer are 24 to 144 tokens: 4 to 24 s at 6 tokens/s,
	// all of it past hang_after.
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(string(body), "data: [DONE]\n\n"), "the whole stream reached the client")
	sc := s.waitFor("prometheus/supervisor", 10*time.Second, "ready again", func(sc *promtext.Scrape) bool {
		v, _ := sc.Value("mlx_server_ready")
		return v == 1
	})
	assert.Positive(t, value(t, sc, "mlx_server_health_checks_total", "result", "fail"), "the probes did fail while the engine was busy")
	assert.Equal(t, 0.0, value(t, sc, "mlx_server_restarts_total"))
	assert.Equal(t, 0.0, value(t, sc, "mlx_server_crashes_total", "reason", "hung"))
	assert.Contains(t, s.out.String(), "makes progress; not restarting it")
}

// A really hung engine (every request blocks, nothing is printed, nothing
// flows) is still restarted.
func TestHungEngineIsRestarted(t *testing.T) {
	s := startCollector(t, collectorOptions{configs: append(demoConfigs, engineOverlay(t, "--sim-hang-after", "3")),
		sets: fastProbes, env: map[string]string{"MLXSIM_LOAD_DELAY": "0s"}})
	s.waitFor("prometheus/supervisor", 60*time.Second, "a hung engine restarted", func(sc *promtext.Scrape) bool {
		v, _ := sc.Value("mlx_server_crashes_total", "reason", "hung")
		return v >= 1
	})
}
