package proxy

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
)

// killGenerationThread sends the engine itself a stop value its batched
// path cannot tokenize (mlx_lm v0.31.3 server.py,
// ResponseGenerator._generate's _make_state_machine, outside any try):
// its generation thread dies. Under mlx-lm 0.31.3 that request waits for
// ever (the client gives up); under 0.32.0 it is failed with a 404.
func killGenerationThread(t *testing.T, r *rig) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.engine.URL+"/v1/chat/completions",
		strings.NewReader(`{"messages": [{"role": "user", "content": "hi"}], "stop": [1]}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
}

// mlx_up follows /health: mlx-lm 0.32.0 answers 503 once its generation
// thread is dead, and mlx_up falls to 0 at the next probe; the client of
// a completion then gets the engine's 404 {"error": ...} relayed, counted
// as a 4xx. mlx-lm 0.31.3 answers 200 all the same: mlx_up stays 1 (only
// the supervisor's log watch sees that death).
func TestMLXUpFollowsADeadGenerationThread(t *testing.T) {
	for _, era := range []string{"0.31.3", "0.32.0"} {
		t.Run(era, func(t *testing.T) {
			r := newRig(t, func(_ *Config, so *mlxsim.Options) { so.MLXLMVersion = era })
			r.proxy.probe(context.Background(), time.Second)
			require.Equal(t, 1.0, value(t, r.scrape(), "mlx_up"))
			killGenerationThread(t, r)
			r.proxy.probe(context.Background(), time.Second)
			if era == "0.31.3" {
				assert.Equal(t, 1.0, value(t, r.scrape(), "mlx_up"), "0.31.3's /health does not know")
				return
			}
			assert.Equal(t, 0.0, value(t, r.scrape(), "mlx_up"))
			resp := r.post("/v1/chat/completions", chatBody)
			assert.Equal(t, http.StatusNotFound, resp.status, string(resp.body))
			assert.Contains(t, string(resp.body), `"error"`)
			sc := r.scrape()
			assert.Equal(t, 1.0, value(t, sc, "mlx_error_total", "model", testModel, "status", "4xx", "kind", "chat"))
			assert.Equal(t, 0.0, value(t, sc, "mlx_in_flight", "model", testModel))
		})
	}
}
