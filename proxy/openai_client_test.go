package proxy

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

// The official Go client runs a streaming chat with tools through the
// proxy: it parses every chunk, gets the tool call whole, and sees no
// usage it did not ask for; the proxy still counts the tokens. The same
// holds when the proxy destreams the request (runs it non-streamed to
// score its logprobs and re-emits the answer as a stream), which records
// no TTFT, and when the engine streams logprobs and the proxy takes the
// ones it asked for out of each chunk (the client sees none).
func TestOpenAIClientStreamsToolCallsThroughTheProxy(t *testing.T) {
	for _, mode := range []string{"relayed", "destreamed", "scored"} {
		t.Run(mode, func(t *testing.T) {
			testOpenAIClientStreamsToolCalls(t, mode)
		})
	}
}

func testOpenAIClientStreamsToolCalls(t *testing.T, mode string) {
	destream := mode == "destreamed"
	r := newRig(t, func(c *Config, so *mlxsim.Options) {
		if destream {
			c.DestreamFraction = 1
		}
		so.StreamLogprobs = mode == "scored"
	})
	client := openai.NewClient(
		option.WithBaseURL(r.url+"/v1/"),
		option.WithAPIKey("sk-test-not-logged"),
		option.WithHTTPClient(r.client),
		option.WithMaxRetries(0),
	)
	stream := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model:    testModel,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Please call get_weather for Paris")},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:        "get_weather",
			Description: openai.String("Weather for a city"),
			Parameters: shared.FunctionParameters{
				"type":       "object",
				"properties": map[string]any{"city": map[string]any{"type": "string"}},
				"required":   []string{"city"},
			},
		})},
	})
	var acc openai.ChatCompletionAccumulator
	var finished []openai.FinishedChatCompletionToolCall
	chunks := 0
	for stream.Next() {
		chunks++
		for _, c := range stream.Current().Choices {
			assert.Empty(t, c.Logprobs.RawJSON(), "no logprobs the client did not ask for")
		}
		require.True(t, acc.AddChunk(stream.Current()), "chunk %d accumulates", chunks)
		if tc, ok := acc.JustFinishedToolCall(); ok {
			finished = append(finished, tc)
		}
	}
	require.NoError(t, stream.Err())
	require.NoError(t, stream.Close())

	assert.Len(t, finished, 1, "the client saw one finished tool call")
	require.Len(t, acc.Choices, 1)
	choice := acc.Choices[0]
	assert.Equal(t, "tool_calls", choice.FinishReason)
	require.Len(t, choice.Message.ToolCalls, 1)
	call := choice.Message.ToolCalls[0]
	assert.Equal(t, "get_weather", call.Function.Name)
	var args map[string]any
	require.NoError(t, json.Unmarshal([]byte(call.Function.Arguments), &args), "arguments arrive whole: %q", call.Function.Arguments)
	assert.Zero(t, acc.Usage.TotalTokens, "no usage chunk reached a client that did not ask for one")

	// The request is accounted once its handler returns, which may be a
	// moment after the client has read [DONE].
	var sc *promtext.Scrape
	require.Eventually(t, func() bool {
		sc = r.scrape()
		v, _ := sc.Value("mlx_requests_total", "streaming", "true", "kind", "chat")
		return v == 1
	}, 5*time.Second, 10*time.Millisecond, "the request accounted")
	assert.Equal(t, 1.0, value(t, sc, "mlx_tool_calls_total", "tool", "get_weather", "type", "function"))
	assert.Equal(t, 1.0, value(t, sc, "mlx_requests_total", "streaming", "true", "kind", "chat"))
	assert.Equal(t, 1.0, value(t, sc, "mlx_finish_reason_total", "reason", "tool_calls"))
	assert.Positive(t, value(t, sc, "mlx_tokens_completion_total", "kind", "chat"), "tokens counted from the usage the proxy asked for")
	assert.Positive(t, value(t, sc, "mlx_tokens_prompt_total", "kind", "chat"))
	ttft := sc.Families["mlx_ttft_seconds"]
	sc = r.scrape()
	switch mode {
	case "destreamed":
		assert.Nil(t, ttft, "no TTFT for a destreamed request")
		assert.Equal(t, 1.0, value(t, sc, "mlx_confidence_scored_total", "source", "destreamed"))
		assert.Positive(t, value(t, sc, "mlx_output_perplexity"))
	case "scored":
		assert.Equal(t, 1.0, value(t, sc, "mlx_confidence_scored_total", "source", SourceStreamed))
		assert.Positive(t, value(t, sc, "mlx_output_perplexity"))
	default:
		assert.Equal(t, 0.0, value(t, sc, "mlx_confidence_scored_total", "source", "destreamed"))
		_, scored := sc.Value("mlx_output_perplexity")
		assert.False(t, scored, "a relayed stream from mlx_lm carries no logprobs to score")
	}
}
