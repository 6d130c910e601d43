package judge

import (
	"context"
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

// Ask sends the prompt and returns the answer's content.
func (c *Client) Ask(ctx context.Context, prompt string) (string, error) {
	resp, err := c.c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:       c.model,
		Messages:    []openai.ChatCompletionMessageParamUnion{openai.UserMessage(prompt)},
		Temperature: openai.Float(0),
	})
	if err != nil {
		return "", err
	}
	if len(resp.Choices) == 0 {
		return "", nil
	}
	return resp.Choices[0].Message.Content, nil
}
