package proxy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
)

// At 50 tokens/s an engine's chunks come at least 20 ms apart: a streamed
// request gets an inter-token gap between each two chunks, a time per
// output token, a prefill and a decode time, and the lengths are the
// usage's. The engine's timer sleeps only run late, so its settings bound
// the times from below (20 tokens take 400 ms at least from the request);
// the rest is how the figures add up: the gaps lie within the decode time,
// which is the time per output token times the tokens after the first,
// and the latency holds the time to the first token and the decode time.
func TestLatencyDistributionsOfAStream(t *testing.T) {
	r := newRig(t, func(_ *Config, o *mlxsim.Options) { o.DecodeTPS = 50 })
	resp := r.post("/v1/chat/completions", `{"messages": [{"role": "user", "content": "Tell me a story"}], "max_tokens": 20, "stream": true, "stream_options": {"include_usage": true}}`)
	require.Equal(t, 200, resp.status)
	sc := r.scrape()
	fam := func(name string) (count uint64, sum float64) {
		f := sc.Families[name]
		require.NotNil(t, f, name)
		require.Len(t, f.GetMetric(), 1, name)
		h := f.GetMetric()[0].GetHistogram()
		return h.GetSampleCount(), h.GetSampleSum()
	}
	n, sum := fam("mlx_generation_tokens")
	assert.Equal(t, uint64(1), n)
	assert.Equal(t, 20.0, sum, "max_tokens 20, all used")
	n, sum = fam("mlx_prompt_tokens")
	assert.Equal(t, uint64(1), n)
	assert.Positive(t, sum)
	sums := map[string]float64{}
	for _, name := range []string{"mlx_prefill_seconds", "mlx_decode_seconds", "mlx_request_latency_seconds", "mlx_time_to_first_token_seconds", "mlx_time_per_output_token_seconds"} {
		n, sums[name] = fam(name)
		assert.Equal(t, uint64(1), n, name)
	}
	n, gaps := fam("mlx_inter_token_latency_seconds")
	assert.GreaterOrEqual(t, n, uint64(15), "a gap between each two of ~20 chunks")
	assert.LessOrEqual(t, n, uint64(19))
	const tick = 1e-6 // clock readings a microsecond apart at most
	decode := sums["mlx_decode_seconds"]
	assert.LessOrEqual(t, gaps, decode+tick, "the gaps lie within the decode time")
	assert.InDelta(t, decode, sums["mlx_time_per_output_token_seconds"]*19, tick, "(end - first output) / (20 - 1)")
	ttft, latency := sums["mlx_time_to_first_token_seconds"], sums["mlx_request_latency_seconds"]
	assert.GreaterOrEqual(t, ttft, 0.02, "the first token takes a token time")
	assert.GreaterOrEqual(t, latency, 20*0.02, "20 tokens at 50 tokens/s")
	assert.LessOrEqual(t, ttft+decode, latency+tick)
	assert.LessOrEqual(t, sums["mlx_prefill_seconds"], ttft+tick, "the engine's part of the time to the first token")
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
