package judge

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// Client asks an OpenAI-compatible endpoint to judge, as the original
// post_chat did: one user message, temperature 0, not streamed, and
// X-Mlx-Trace: 0 so the judge's own requests are not traced (and so are
// never judged).
type Client struct {
	c     openai.Client
	model string
}

// NewClient talks to baseURL (http://127.0.0.1:8080/v1). Retries are off:
// a failed judgement is counted and the trace waits for the next pass.
func NewClient(baseURL, model, apiKey string, timeout time.Duration, more ...option.RequestOption) *Client {
	return &Client{model: model, c: openai.NewClient(append([]option.RequestOption{
		option.WithBaseURL(strings.TrimRight(baseURL, "/") + "/"),
		option.WithAPIKey(apiKey),
		option.WithHeader("X-Mlx-Trace", "0"),
		option.WithMaxRetries(0),
		option.WithRequestTimeout(timeout),
	}, more...)...)}
}

// judgeMaxTokens is the room a judgement has. mlx_lm's default is 512
// (--max-tokens), and a reasoning model that thinks despite
// enable_thinking: false (a template that ignores it) can spend all of it
// in `reasoning`, leaving content null with finish_reason "length".
const judgeMaxTokens = 2048

// Ask sends the prompt and returns the answer's content, the final answer
// only: a thinking model's reasoning comes in `reasoning` (mlx_lm), never
// in content. Thinking is turned off for the judge's own requests
// (chat_template_kwargs.enable_thinking: false, which the proxy lets
// through): mlx_lm >= 0.31.2 turns it on for any tokenizer with <think>
// (tokenizer_utils.py HEAD L333-334), Qwen3 among them.
func (c *Client) Ask(ctx context.Context, prompt string) (string, error) {
	resp, err := c.c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:       c.model,
		Messages:    []openai.ChatCompletionMessageParamUnion{openai.UserMessage(prompt)},
		Temperature: openai.Float(0),
		MaxTokens:   openai.Int(judgeMaxTokens),
	}, option.WithJSONSet("chat_template_kwargs", map[string]any{"enable_thinking": false}))
	if err != nil {
		return "", err
	}
	if len(resp.Choices) == 0 {
		return "", nil
	}
	ch := resp.Choices[0]
	if ch.Message.Content == "" && ch.FinishReason == "length" {
		return "", fmt.Errorf("the judge's answer ran out of tokens (max_tokens %d) before its content, reasoning for all of it", judgeMaxTokens)
	}
	return ch.Message.Content, nil
}
