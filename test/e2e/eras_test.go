//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

// mlxLMEras are the mlx-lm versions the simulator follows within the
// default MLX pair (standins/mlxsim/versions.go): 0.31.3, the newest
// release, and 0.32.0, main.
var mlxLMEras = []string{"0.31.3", "0.32.0"}

// A tool call's message has no text: mlx-lm 0.31.3 leaves "content" out,
// 0.32.0 sends "content": null (#1739). Through the proxy (logprobs
// injected, scored, stripped) an OpenAI client gets the call either way,
// and the request is counted and scored as any other.
func TestEmptyContentReachesAnOpenAIClientInBothEras(t *testing.T) {
	for _, era := range mlxLMEras {
		t.Run("mlx-lm "+era, func(t *testing.T) {
			s := startCollector(t, collectorOptions{configs: append(demoConfigs, engineOverlay(t, "--sim-load-delay", "0s", "--sim-mlx-lm-version", era))})
			waitEngineReady(s)

			// Without reasoning (the demo's model reasons by default, and its
			// answer then keeps the text after </think>).
			tools := `[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]`
			resp, b := postJSON(t, s.proxyURL("/v1/chat/completions"), `{"messages": [{"role": "user", "content": "Use get_weather for Oslo"}], "tools": `+tools+`, "chat_template_kwargs": {"enable_thinking": false}}`)
			require.Equal(t, 200, resp.StatusCode, string(b))
			if era == "0.32.0" {
				assert.Contains(t, string(b), `"message": {"role": "assistant", "content": null, "tool_calls": [`)
			} else {
				assert.Contains(t, string(b), `"message": {"role": "assistant", "tool_calls": [`)
			}
			assert.NotContains(t, string(b), `"logprobs": {`, "the injected logprobs are stripped")

			client := openai.NewClient(option.WithBaseURL(s.proxyURL("/v1/")), option.WithAPIKey("sk-e2e"), option.WithMaxRetries(0))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
				Model:    "default_model",
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Please call get_weather for Paris")},
				Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
					Name:       "get_weather",
					Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}},
				})},
			}, option.WithJSONSet("chat_template_kwargs", map[string]any{"enable_thinking": false}))
			require.NoError(t, err)
			require.Len(t, c.Choices, 1)
			msg := c.Choices[0].Message
			assert.Equal(t, "tool_calls", c.Choices[0].FinishReason)
			assert.Empty(t, msg.Content)
			require.Len(t, msg.ToolCalls, 1)
			assert.Equal(t, "get_weather", msg.ToolCalls[0].Function.Name)
			assert.Contains(t, msg.ToolCalls[0].Function.Arguments, "city")

			sc := s.waitFor("mlx_proxy", 10*time.Second, "both answers counted", func(sc *promtext.Scrape) bool {
				n, _ := sc.Value("mlx_requests_total", "streaming", "false", "kind", "chat", "origin", "user")
				return n == 2
			})
			assert.Equal(t, 2.0, value(t, sc, "mlx_tool_calls_total", "tool", "get_weather", "type", "function"))
			// Scored from the injected logprobs, content or none.
			assert.Equal(t, 2.0, value(t, sc, "mlx_confidence_scored_total", "source", "injected"))
			assert.Equal(t, 1.0, value(t, sc, "mlx_up"))
		})
	}
}
