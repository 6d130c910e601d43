package span

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The metadata attribute was a marshalled map: the struct that replaced it
// writes the same bytes (members in name order), and leaves out what is
// absent.
func TestSpanMetadataIsTheMapItReplaced(t *testing.T) {
	full := spanMetadata{
		ConfidenceMean: ptr(0.9), ConfidenceMin: ptr(0.1), ConfidenceStd: ptr(0.2), GenerationSeconds: 1.5,
		HallucinationFlagged: ptr(false), HallucinationRisk: ptr(0.25), LogprobsSource: "injected",
		LowConfidenceTokenRatio: ptr(0.05), Node: "rank0", OtelSpanID: "0102030405060708",
		OtelTraceID: "0102030405060708090a0b0c0d0e0f10", Perplexity: ptr(1.2), ScoredTokens: ptr(27),
		TokenEntropyNats: ptr(0.3), TokenMarginMean: ptr(0.4), TTFTSeconds: ptr(0.01),
	}
	asMap := map[string]any{
		"confidence_mean": 0.9, "confidence_min": 0.1, "confidence_std": 0.2, "generation_seconds": 1.5,
		"hallucination_flagged": false, "hallucination_risk": 0.25, "logprobs_source": "injected",
		"low_confidence_token_ratio": 0.05, "node": "rank0", "otel_span_id": "0102030405060708",
		"otel_trace_id": "0102030405060708090a0b0c0d0e0f10", "perplexity": 1.2, "scored_tokens": 27,
		"token_entropy_nats": 0.3, "token_margin_mean": 0.4, "ttft_seconds": 0.01,
	}
	got, err := json.Marshal(&full)
	require.NoError(t, err)
	want, err := json.Marshal(asMap)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))

	got, err = json.Marshal(&spanMetadata{Node: "", GenerationSeconds: 0.5})
	require.NoError(t, err)
	assert.JSONEq(t, `{"node": "", "generation_seconds": 0.5}`, string(got))

	_, err = json.Marshal(&spanMetadata{Perplexity: ptr(math.Inf(1))})
	assert.Error(t, err, "an infinite perplexity cannot be written: metadata() leaves it out")
}

func ptr[T any](v T) *T { return &v }
