package proxy

import (
	"math"
	"net/http"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
)

// The GenAI histograms' boundaries are the spec's explicit bucket
// boundaries (semantic conventions v1.41.0, gen-ai-metrics.md), in the
// generated constants and
// in a real scrape.
func TestGenAIBucketsAreTheSpecs(t *testing.T) {
	var duration []float64 // 0.01 s doubling to 81.92 s
	for b := 0.01; b <= 81.92+1e-9; b *= 2 {
		duration = append(duration, b)
	}
	spec := map[string][]float64{
		"gen_ai_server_request_duration_seconds":      duration,
		"gen_ai_server_time_to_first_token_seconds":   {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10},
		"gen_ai_server_time_per_output_token_seconds": {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5},
	}
	require.Len(t, duration, 14)
	assert.InDeltaSlice(t, spec["gen_ai_server_request_duration_seconds"], metricGenAiServerRequestDurationSecondsBuckets, 1e-9)
	assert.Equal(t, spec["gen_ai_server_time_to_first_token_seconds"], metricGenAiServerTimeToFirstTokenSecondsBuckets)
	assert.Equal(t, spec["gen_ai_server_time_per_output_token_seconds"], metricGenAiServerTimePerOutputTokenSecondsBuckets)

	r := newRig(t)
	require.Equal(t, http.StatusOK, r.post("/v1/chat/completions", `{"messages": [{"role": "user", "content": "Tell me a story"}], "max_tokens": 12, "stream": true}`).status)
	sc := r.scrape()
	for name, want := range spec {
		f := sc.Families[name]
		require.NotNil(t, f, name)
		var got []float64
		for _, b := range f.GetMetric()[0].GetHistogram().GetBucket() {
			if !math.IsInf(b.GetUpperBound(), 1) {
				got = append(got, b.GetUpperBound())
			}
		}
		require.Len(t, got, len(want), name)
		assert.InDeltaSlice(t, want, got, 1e-9, name)
	}
}

// One histogram series by its labels.
func genAIHistogram(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) *dto.Histogram {
	t.Helper()
	f := fams[name]
	require.NotNil(t, f, name)
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			// Prometheus reads an empty label as none; node is on every
			// series (the fleet contract's common attribute).
			if l.GetValue() != "" && l.GetName() != "node" {
				got[l.GetName()] = l.GetValue()
			}
		}
		if assert.ObjectsAreEqual(labels, got) {
			return m.GetHistogram()
		}
	}
	require.Failf(t, "no series", "%s%v", name, labels)
	return nil
}

// A stream, a non-streamed chat, a text completion and an engine's error
// answer, each where the GenAI conventions put it.
func TestGenAIServerMetrics(t *testing.T) {
	r := newRig(t, func(_ *Config, o *mlxsim.Options) { o.DecodeTPS = 200 })
	require.Equal(t, http.StatusOK, r.post("/v1/chat/completions", `{"messages": [{"role": "user", "content": "Tell me a story"}], "max_tokens": 12, "stream": true}`).status)
	require.Equal(t, http.StatusOK, r.post("/v1/chat/completions", `{"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 4}`).status)
	require.Equal(t, http.StatusOK, r.post("/v1/completions", `{"prompt": "Once", "max_tokens": 4}`).status)
	image := `{"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}]}]}`
	require.Equal(t, http.StatusNotFound, r.post("/v1/chat/completions", image).status)
	fams := r.scrape().Families

	chat := map[string]string{"gen_ai_operation_name": "chat", "gen_ai_provider_name": "mlx",
		"gen_ai_request_model": testModel, "gen_ai_response_model": testModel, "origin": OriginUser}
	text := map[string]string{"gen_ai_operation_name": "text_completion", "gen_ai_provider_name": "mlx",
		"gen_ai_request_model": testModel, "gen_ai_response_model": testModel, "origin": OriginUser}
	with := func(m map[string]string, k, v string) map[string]string {
		out := map[string]string{k: v}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	const duration = "gen_ai_server_request_duration_seconds"
	assert.Equal(t, uint64(2), genAIHistogram(t, fams, duration, chat).GetSampleCount(), "both chats, no error_type")
	assert.Equal(t, uint64(1), genAIHistogram(t, fams, duration, text).GetSampleCount())
	failed := with(chat, "error_type", "404")
	delete(failed, "gen_ai_response_model") // no answer: an empty label, which the text format leaves out
	assert.Equal(t, uint64(1), genAIHistogram(t, fams, duration, failed).GetSampleCount(), "the engine's 404, with error_type")

	// Only the relayed stream has a first token and a time per token.
	ttft := genAIHistogram(t, fams, "gen_ai_server_time_to_first_token_seconds", chat)
	assert.Equal(t, uint64(1), ttft.GetSampleCount())
	tpot := genAIHistogram(t, fams, "gen_ai_server_time_per_output_token_seconds", chat)
	assert.Equal(t, uint64(1), tpot.GetSampleCount())
	assert.Positive(t, tpot.GetSampleSum())
	assert.Len(t, fams["gen_ai_server_time_to_first_token_seconds"].GetMetric(), 1)
}
