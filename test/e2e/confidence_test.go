//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

// The built collector, every stream destreamed: the official Go client
// streams a chat with tools through the proxy and gets the call whole;
// a non-streamed request gets no logprobs it did not ask for; both are
// scored, and the destreamed one records no TTFT.
func TestConfidenceScoredThroughTheCollector(t *testing.T) {
	s := startCollector(t, collectorOptions{
		configs: demoConfigs,
		env:     map[string]string{"MLXSIM_LOAD_DELAY": "0s"},
		sets:    []string{"extensions::mlx_proxy::confidence::destream_fraction=1"},
	})
	waitEngineReady(s)

	client := openai.NewClient(
		option.WithBaseURL(s.proxyURL("/v1/")),
		option.WithAPIKey("sk-e2e"),
		option.WithMaxRetries(0),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model:    "mlx-community/Qwen3-4B-4bit",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Use get_weather for Oslo")},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:       "get_weather",
			Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
		})},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	var acc openai.ChatCompletionAccumulator
	finished := 0
	for stream.Next() {
		require.True(t, acc.AddChunk(stream.Current()))
		if _, ok := acc.JustFinishedToolCall(); ok {
			finished++
		}
	}
	require.NoError(t, stream.Err())
	assert.Equal(t, 1, finished, "the client saw the tool call finish")
	require.Len(t, acc.Choices, 1)
	assert.Equal(t, "tool_calls", acc.Choices[0].FinishReason)
	require.Len(t, acc.Choices[0].Message.ToolCalls, 1)
	var args map[string]any
	require.NoError(t, json.Unmarshal([]byte(acc.Choices[0].Message.ToolCalls[0].Function.Arguments), &args))
	assert.Positive(t, acc.Usage.CompletionTokens, "usage, which the client asked for")

	resp, body := postJSON(t, s.proxyURL("/v1/chat/completions"), `{"messages": [{"role": "user", "content": "Say hello"}], "max_tokens": 16}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.NotContains(t, string(body), "logprobs")
	assert.Equal(t, strconv.Itoa(len(body)), resp.Header.Get("Content-Length"))

	sc := s.waitFor("mlx_proxy", 10*time.Second, "both answers scored", func(sc *promtext.Scrape) bool {
		d, _ := sc.Value("mlx_confidence_scored_total", "source", "destreamed")
		i, _ := sc.Value("mlx_confidence_scored_total", "source", "injected")
		return d == 1 && i == 1
	})
	_, ttft := sc.Value("mlx_ttft_seconds")
	assert.False(t, ttft, "a destreamed request has no first token to time")
	p := value(t, sc, "mlx_output_perplexity", "model", "mlx-community/Qwen3-4B-4bit")
	assert.GreaterOrEqual(t, p, 1.0)
	c := value(t, sc, "mlx_token_confidence_mean", "model", "mlx-community/Qwen3-4B-4bit")
	assert.True(t, c > 0 && c <= 1, "confidence %v", c)
	assert.Equal(t, 2.0, value(t, sc, "mlx_hallucination_risk_histogram"), "both answers checked")
}
