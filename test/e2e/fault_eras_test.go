//go:build e2e && fault

package e2e

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

// A request the engine's sampler cannot take kills its generation thread
// in both mlx-lm eras; what differs is what shows it. Under 0.31.3 only
// the log does (its traceback; /health stays 200 and the request waits):
// the supervisor reads it and names it python_error. Under 0.32.0
// /health answers 503 (#1791) and the log has no "Exception in thread"
// line (the simulator's guess of #1837's wrapper): the supervisor
// restarts on the 503. Either way at once, not after hang_after (2 s
// here, so a restart as hung would show as reason "hung"), and the engine
// then serves again. The request goes straight to the engine: it is the
// engine's reaction under test, whatever the proxy lets through.
func TestFaultGenerationThreadDeathByMLXLMVersion(t *testing.T) {
	for era, poison := range map[string]string{
		// ml-explore/mlx-lm#1257: XTC at a temperature above 0.
		"0.31.3": `{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 5, "temperature": 1.0, "xtc_probability": 0.5, "xtc_threshold": 0.1}`,
		// apply_top_k: top_k of the whole vocabulary.
		"0.32.0": `{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 5, "temperature": 0.7, "top_k": 151936}`,
	} {
		t.Run("mlx-lm "+era, func(t *testing.T) {
			f := startFaultCollector(t, collectorOptions{
				configs: append(demoConfigs, engineOverlay(t, "--sim-load-delay", "0s", "--sim-mlx-lm-version", era)),
				sets:    append([]string{quickRestart}, fastProbes...),
			})
			waitEngineReady(f.stack)
			f.mark()

			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.engineURL("/v1/chat/completions"), strings.NewReader(poison))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			// The request that killed the thread is never answered; it ends
			// when the supervisor stops the engine.
			if resp, err := http.DefaultClient.Do(req); err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				t.Errorf("the poisoned request was answered: %d %s", resp.StatusCode, b)
			}

			sc := f.waitFor("prometheus/supervisor", 30*time.Second, "the engine restarted and ready", func(sc *promtext.Scrape) bool {
				r, _ := sc.Value("mlx_server_restarts_total")
				ready, _ := sc.Value("mlx_server_ready")
				return r >= 1 && ready == 1
			})
			assert.Equal(t, 1.0, value(t, sc, "mlx_server_crashes_total", "reason", "python_error"))
			assert.Equal(t, 0.0, value(t, sc, "mlx_server_crashes_total", "reason", "hung"), "restarted at once, not as hung")
			assert.Equal(t, 1.0, value(t, sc, "mlx_server_last_crash_reason", "reason", "python_error"))
			out := f.out.String()
			if era == "0.31.3" {
				assert.Contains(t, out, "A thread of the engine died", "read from the log")
			} else {
				assert.Contains(t, out, "/health answers 503", "read from /health")
				assert.NotContains(t, out, "A thread of the engine died")
			}
			log, err := os.ReadFile(f.serverLog())
			require.NoError(t, err)
			assert.Contains(t, string(log), "Traceback (most recent call last):")

			status, body := askProxy(t, f, `{"messages": [{"role": "user", "content": "Hello again"}], "max_tokens": 8}`)
			assert.Equal(t, http.StatusOK, status, string(body))
			f.finish(t, faultRow{name: "generation thread death (mlx-lm " + era + ")", sent: 2, failed: 1, hasFailed: true,
				note: "failed: the request that killed the thread"})
		})
	}
}
