package proxy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
)

// At 50 tokens/s an engine's chunks come 20 ms apart: the inter-token
// latency and the time per output token say so, a streamed request gets
// a prefill and a decode time, and the lengths are the usage's.
func TestLatencyDistributionsOfAStream(t *testing.T) {
	r := newRig(t, func(_ *Config, o *mlxsim.Options) { o.DecodeTPS = 50 })
	resp := r.post("/v1/chat/completions", `{"messages": [{"role": "user", "content": "Tell me a story"}], "max_tokens": 20, "stream": true, "stream_options": {"include_usage": true}}`)
	require.Equal(t, 200, resp.status)
	sc := r.scrape()
	fam := func(name string) (count uint64, sum float64) {
		f := sc.Families[name]
		require.NotNil(t, f, name)
		h := f.GetMetric()[0].GetHistogram()
		return h.GetSampleCount(), h.GetSampleSum()
	}
	n, sum := fam("mlx_inter_token_latency_seconds")
	require.GreaterOrEqual(t, n, uint64(15), "a gap between each two of ~20 chunks")
	assert.InDelta(t, 0.02, sum/float64(n), 0.015, "mean gap at 50 tokens/s")
	n, sum = fam("mlx_time_per_output_token_seconds")
	require.Equal(t, uint64(1), n)
	assert.InDelta(t, 0.02, sum, 0.015)
	for _, name := range []string{"mlx_prefill_seconds", "mlx_decode_seconds", "mlx_request_latency_seconds", "mlx_time_to_first_token_seconds"} {
		n, _ := fam(name)
		assert.Equal(t, uint64(1), n, name)
	}
	n, sum = fam("mlx_generation_tokens")
	assert.Equal(t, uint64(1), n)
	assert.Equal(t, 20.0, sum, "max_tokens 20, all used")
	n, sum = fam("mlx_prompt_tokens")
	assert.Equal(t, uint64(1), n)
	assert.Positive(t, sum)
}

// A model that thinks by default reasons without the request asking: the
// answer's reasoning makes the request kind="reasoning".
func TestAnAnswerWithReasoningIsAReasoningRequest(t *testing.T) {
	r := newRig(t, func(_ *Config, o *mlxsim.Options) { o.ThinkByDefault = true })
	for _, stream := range []string{"false", "true"} {
		resp := r.post("/v1/chat/completions", `{"messages": [{"role": "user", "content": "Think"}], "max_tokens": 40, "stream": `+stream+`}`)
		require.Equal(t, 200, resp.status)
	}
	sc := r.scrape()
	assert.Equal(t, 1.0, value(t, sc, "mlx_requests_total", "model", testModel, "streaming", "false", "kind", KindReasoning))
	assert.Equal(t, 1.0, value(t, sc, "mlx_requests_total", "model", testModel, "streaming", "true", "kind", KindReasoning))
	assert.Equal(t, 0.0, value(t, sc, "mlx_requests_total", "model", testModel, "streaming", "false", "kind", KindChat))
}
