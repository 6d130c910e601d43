package judge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client asks an OpenAI-compatible endpoint to judge, as the original
// post_chat did: one user message, temperature 0, not streamed, and
// X-Mlx-Trace: 0 so the judge's own requests are not traced (and so are
// never judged), and X-Mlx-Origin: judge so the proxy counts them apart
// from users' (origin="judge") and never scores them. It is one POST with
// net/http: openai-go's client was 37 MB of the collector's binary for
// this one call.
type Client struct {
	url, model, apiKey string
	timeout            time.Duration
	http               *http.Client
	// ThinkingOff sends chat_template_kwargs.enable_thinking: false, which
	// mlx_lm (and vLLM, SGLang, llama.cpp's server) pass to the chat
	// template; OpenAI's own API refuses an unknown field, so a hosted
	// judge goes without (NewClient: on).
	ThinkingOff bool
	// MaxTokens is the room a judgement has (NewClient: judgeMaxTokens).
	MaxTokens int64
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sends with hc instead of http.DefaultClient.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.http = hc } }

// NewClient talks to baseURL (http://127.0.0.1:8080/v1). Retries are off:
// a failed judgement is counted and the trace waits for the next pass.
func NewClient(baseURL, model, apiKey string, timeout time.Duration, more ...Option) *Client {
	c := &Client{url: strings.TrimRight(baseURL, "/") + "/chat/completions", model: model, apiKey: apiKey,
		timeout: timeout, http: http.DefaultClient, ThinkingOff: true, MaxTokens: judgeMaxTokens}
	for _, o := range more {
		o(c)
	}
	return c
}

// userAgent is the one the judge's requests have always had (they were
// sent by openai-go v3.99.0): the access log's user_agent of the judge.
const userAgent = "OpenAI/Go 3.99.0"

// APIError is an answer other than 2xx.
type APIError struct {
	StatusCode int
	Body       string // its start
}

func (e *APIError) Error() string {
	return fmt.Sprintf("POST chat/completions: %d %s", e.StatusCode, e.Body)
}

// judgeRequest is the judge's one request.
type judgeRequest struct {
	Messages           []judgeMessage `json:"messages"`
	Model              string         `json:"model"`
	MaxTokens          int64          `json:"max_tokens"`
	Temperature        float64        `json:"temperature"`
	ChatTemplateKwargs map[string]any `json:"chat_template_kwargs,omitempty"`
}

type judgeMessage struct {
	Content string `json:"content"`
	Role    string `json:"role"`
}

// judgeAnswer is what the judge reads of a chat completion.
type judgeAnswer struct {
	Choices []struct {
		FinishReason string `json:"finish_reason"`
		Message      struct {
			Content *string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
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
// (mlx_lm v0.31.3 tokenizer_utils.py, TokenizerWrapper.apply_chat_template
// defaults enable_thinking to has_thinking), Qwen3 among them.
func (c *Client) Ask(ctx context.Context, prompt string) (string, error) {
	req := judgeRequest{Messages: []judgeMessage{{Content: prompt, Role: "user"}}, Model: c.model, MaxTokens: c.MaxTokens}
	if c.ThinkingOff {
		req.ChatTemplateKwargs = map[string]any{"enable_thinking": false}
	}
	body, err := json.Marshal(req)
	if err != nil {
		return "", err
	}
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	hr.Header.Set("User-Agent", userAgent)
	hr.Header.Set("Authorization", "Bearer "+c.apiKey)
	hr.Header.Set("X-Mlx-Trace", "0")
	hr.Header.Set("X-Mlx-Origin", "judge")
	resp, err := c.http.Do(hr)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "", &APIError{StatusCode: resp.StatusCode, Body: string(b[:min(len(b), 512)])}
	}
	var a judgeAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		return "", fmt.Errorf("POST chat/completions: the answer: %w", err)
	}
	if len(a.Choices) == 0 {
		return "", nil
	}
	ch := a.Choices[0]
	content := ""
	if ch.Message.Content != nil {
		content = *ch.Message.Content
	}
	if content == "" && ch.FinishReason == "length" {
		return "", fmt.Errorf("the judge's answer ran out of tokens (max_tokens %d) before its content, reasoning for all of it", c.MaxTokens)
	}
	return content, nil
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
