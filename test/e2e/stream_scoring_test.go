//go:build e2e

package e2e

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

// A stream that did not ask for logprobs, through the built collector, from
// an engine that streams them (mlxsim --sim-stream-logprobs; mlx_lm 0.31.3
// does not, and behind it the proxy stops asking): it is scored from its
// chunks, as its span in Jaeger and mlx_token_confidence_* say, and the
// client gets the bytes the engine sends when asked directly. mlx_lm draws
// the ids (uuid4: the completion's and each tool call's) and created (the
// clock) anew for every request, so no two requests can share them; the
// text is a function of the prompt (the sim's, and mlx_lm's with a seed),
// so everything else is compared byte for byte.
func TestStreamScoredFromItsChunksAndTheClientBytesAreTheEngines(t *testing.T) {
	j := startJaeger(t)
	opik := startOpik(t)
	s := startCollector(t, collectorOptions{
		configs: append(slices.Clone(demoConfigs), engineOverlay(t, "--sim-load-delay", "0s", "--sim-stream-logprobs")),
		sets:    traceSets(j, opik),
	})
	waitEngineReady(s)

	const model = "mlx-community/Qwen3-4B-4bit"
	bodies := []string{
		`{"messages": [{"role": "user", "content": "Tell a story"}], "max_tokens": 24, "stream": true, "seed": 3}`,
		`{"messages": [{"role": "user", "content": "Use get_weather for Oslo"}], "stream": true, "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]}`,
	}
	var traces []string
	for _, body := range bodies {
		// The engine itself, twice: the first request puts the prompt in
		// its prompt cache, so that the second and the proxy's meet the
		// same cache (the keepalive comments count the prompt tokens not
		// found in it).
		var direct []byte
		for range 2 {
			resp, err := http.Post(fmt.Sprintf("http://127.0.0.1:%d/v1/chat/completions", s.enginePort), "application/json", strings.NewReader(body))
			require.NoError(t, err)
			direct, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, resp.StatusCode)
		}
		require.NotContains(t, string(direct), "logprobs", "the engine sends none unasked")

		id := newTraceID(t)
		traces = append(traces, id)
		status, got := tracedPost(t, s.proxyURL("/v1/chat/completions"), id, body)
		require.Equal(t, http.StatusOK, status)
		assert.Equal(t, withoutRunIDs(string(direct)), withoutRunIDs(got), "the client's bytes are the engine's")
		assert.NotContains(t, got, "logprobs")
	}

	sc := s.waitFor("mlx_proxy", 10*time.Second, "both streams scored", func(sc *promtext.Scrape) bool {
		v, _ := sc.Value("mlx_confidence_scored_total", "source", "streamed")
		return v == float64(len(bodies))
	})
	assert.Equal(t, 0.0, value(t, sc, "mlx_confidence_unscored_total", "model", model, "source", "streamed"))
	mean := value(t, sc, "mlx_token_confidence_mean", "model", model)
	assert.True(t, mean > 0 && mean <= 1, "confidence %v", mean)
	assert.LessOrEqual(t, value(t, sc, "mlx_token_confidence_min", "model", model), mean)
	assert.GreaterOrEqual(t, value(t, sc, "mlx_output_perplexity", "model", model), 1.0)

	for i, id := range traces {
		spans, _ := j.waitTrace(t, id)
		require.Len(t, spans, 1)
		src, _ := spans[0].tag("mlx.logprobs_source")
		assert.Equal(t, "streamed", src, "stream %d", i)
		c, ok := spans[0].tag("mlx.confidence_mean")
		require.True(t, ok, "stream %d: its confidence on the span", i)
		if i == len(traces)-1 {
			assert.InDelta(t, mean, c, 1e-4, "the span and the gauge say the same of the last answer")
		}
		n, _ := spans[0].tag("mlx.scored_tokens")
		assert.Positive(t, n)
	}
}

// runIDs are what mlx_lm draws anew for every request: ids (uuid4) and
// created (the clock).
var runIDs = regexp.MustCompile(`"id": "[^"]*"|"created": \d+`)

func withoutRunIDs(s string) string { return runIDs.ReplaceAllString(s, `"ID"`) }
