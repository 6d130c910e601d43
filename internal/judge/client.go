package judge

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// Client asks an OpenAI-compatible endpoint to judge, as the original
// post_chat did: one user message, temperature 0, not streamed, and
// X-Mlx-Trace: 0 so the judge's own requests are not traced (and so are
// never judged), and X-Mlx-Origin: judge so the proxy counts them apart
// from users' (origin="judge") and never scores them.
type Client struct {
	c     openai.Client
	model string
	// ThinkingOff sends chat_template_kwargs.enable_thinking: false, which
	// mlx_lm (and vLLM, SGLang, llama.cpp's server) pass to the chat
	// template; OpenAI's own API refuses an unknown field, so a hosted
	// judge goes without (NewClient: on).
	ThinkingOff bool
	// MaxTokens is the room a judgement has (NewClient: judgeMaxTokens).
	MaxTokens int64
}

// NewClient talks to baseURL (http://127.0.0.1:8080/v1). Retries are off:
// a failed judgement is counted and the trace waits for the next pass.
func NewClient(baseURL, model, apiKey string, timeout time.Duration, more ...option.RequestOption) *Client {
	return &Client{model: model, ThinkingOff: true, MaxTokens: judgeMaxTokens, c: openai.NewClient(append([]option.RequestOption{
		option.WithBaseURL(strings.TrimRight(baseURL, "/") + "/"),
		option.WithAPIKey(apiKey),
		option.WithHeader("X-Mlx-Trace", "0"),
		option.WithHeader("X-Mlx-Origin", "judge"),
		option.WithMaxRetries(0),
		option.WithRequestTimeout(timeout),
	}, more...)...)}
}

// judgeMaxTokens is the default room a judgement has. mlx_lm's default is 512
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
	var opts []option.RequestOption
	if c.ThinkingOff {
		opts = append(opts, option.WithJSONSet("chat_template_kwargs", map[string]any{"enable_thinking": false}))
	}
	resp, err := c.c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:       c.model,
		Messages:    []openai.ChatCompletionMessageParamUnion{openai.UserMessage(prompt)},
		Temperature: openai.Float(0),
		MaxTokens:   openai.Int(c.MaxTokens),
	}, opts...)
	if err != nil {
		return "", err
	}
	if len(resp.Choices) == 0 {
		return "", nil
	}
	ch := resp.Choices[0]
	if ch.Message.Content == "" && ch.FinishReason == "length" {
		return "", fmt.Errorf("the judge's answer ran out of tokens (max_tokens %d) before its content, reasoning for all of it", c.MaxTokens)
	}
	return ch.Message.Content, nil
}

// LocalEndpoint says whether an OpenAI API base is on this machine or the
// local network (loopback, a private address, a .local or dotless name):
// an engine of one's own (mlx_lm, vLLM, llama.cpp's server), which takes
// chat_template_kwargs, rather than a hosted API, which may refuse it.
func LocalEndpoint(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if ip := net.ParseIP(h); ip != nil {
		return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast()
	}
	return h == "localhost" || strings.HasSuffix(h, ".local") || (h != "" && !strings.Contains(h, "."))
}
