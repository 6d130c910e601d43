// Package wire holds the OpenAI wire types the proxy reads from the
// engine's answers and stream chunks (only the fields it reads), and
// their decoders: goccy/go-json for any answer, and for the chunks mlx_lm
// streams, one per token, a decoder on jsonedit's strict Reader that
// neither copies nor allocates. The proxy (the request path) imports it;
// it imports nothing of the proxy's.
package wire

import "encoding/json"

// The shapes of mlx_lm's answers, only the fields the proxy reads.
// Pointers tell "absent or null" from a zero value.

// Completion is a non-streamed response or one streamed chunk; the
// usage chunk is one with no choices.
type Completion struct {
	ID      string   `json:"id"`
	Model   string   `json:"model"`
	Choices []Choice `json:"choices"`
	Usage   *Usage   `json:"usage"`
	// LogprobsLent: the choices' Logprobs are slices of the stream tap's
	// buffer (DecodeStripped), which the record copies to keep.
	LogprobsLent bool
}

type Choice struct {
	Index        int             `json:"index"`
	FinishReason *string         `json:"finish_reason"`
	Text         *string         `json:"text"`    // text completion
	Delta        *Message        `json:"delta"`   // streamed chat chunk
	Message      *Message        `json:"message"` // non-streamed chat
	Logprobs     json.RawMessage `json:"logprobs"`
}

type Message struct {
	Content   *string    `json:"content"`
	Reasoning *string    `json:"reasoning"`
	ToolCalls []ToolCall `json:"tool_calls"`
}

type ToolCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type Usage struct {
	PromptTokens            int                `json:"prompt_tokens"`
	CompletionTokens        int                `json:"completion_tokens"`
	TotalTokens             int                `json:"total_tokens"`
	PromptTokensDetails     *PromptDetails     `json:"prompt_tokens_details"`
	CompletionTokensDetails *CompletionDetails `json:"completion_tokens_details"`
}

type PromptDetails struct {
	CachedTokens *int `json:"cached_tokens"`
}

type CompletionDetails struct {
	ReasoningTokens *int `json:"reasoning_tokens"`
}

// IsUsageChunk: the chunk mlx_lm sends after the last one when
// include_usage is set, with usage and no choices.
func (c *Completion) IsUsageChunk() bool {
	return c.Usage != nil && len(c.Choices) == 0
}
