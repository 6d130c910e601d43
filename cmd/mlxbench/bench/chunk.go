package bench

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Chunk is what a load run needs from one streamed chat completion chunk
// (or a whole non-streamed completion): the text, reasoning and tool call
// deltas, the finish reason and the usage. Both mlx_lm's "reasoning" and
// the "reasoning_content" other servers use are read.
type Chunk struct {
	ID           string
	Fingerprint  string
	Content      string
	Reasoning    string
	ToolCalls    []ToolCallDelta
	FinishReason string
	Usage        *Usage
	// Error is an in-band {"error": ...} object some servers send
	// instead of a chunk.
	Error string
}

// ToolCallDelta is one entry of delta.tool_calls: OpenAI streams a call's
// arguments in pieces under one index; mlx_lm sends the whole call at once.
type ToolCallDelta struct {
	Index     int
	ID        string
	Name      string
	Arguments string
}

// Usage is the usage object, from the usage chunk of a stream asked for
// with stream_options.include_usage, or from a whole completion.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	CachedTokens     int `json:"cached_tokens"`
}

// HasOutput says whether the chunk carries generated output: the chunks
// that count for TTFT and inter-token latency. mlx_lm sends no role-only
// first chunk, but other servers do, and that one must not count.
func (c Chunk) HasOutput() bool {
	return c.Content != "" || c.Reasoning != "" || len(c.ToolCalls) > 0
}

type wireChunk struct {
	ID          string `json:"id"`
	Fingerprint string `json:"system_fingerprint"`
	Choices     []struct {
		Index        int     `json:"index"`
		FinishReason *string `json:"finish_reason"`
		Text         *string `json:"text"`
		Delta        *wireMsg
		Message      *wireMsg
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		PromptTokensDetails *struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

type wireMsg struct {
	Content          *string `json:"content"`
	Reasoning        *string `json:"reasoning"`
	ReasoningContent *string `json:"reasoning_content"`
	ToolCalls        []struct {
		Index    *int   `json:"index"`
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// ParseChunk decodes one chunk (the data of an SSE event) or a whole
// non-streamed completion. Only the first choice is read: the rigs ask for
// one (n is never set).
func ParseChunk(data []byte) (Chunk, error) {
	var w wireChunk
	if err := json.Unmarshal(data, &w); err != nil {
		return Chunk{}, fmt.Errorf("chunk is not JSON: %w", err)
	}
	c := Chunk{ID: w.ID, Fingerprint: w.Fingerprint}
	if len(w.Error) > 0 && string(w.Error) != "null" {
		c.Error = errorText(w.Error)
	}
	if w.Usage != nil {
		c.Usage = &Usage{PromptTokens: w.Usage.PromptTokens, CompletionTokens: w.Usage.CompletionTokens}
		if w.Usage.PromptTokensDetails != nil {
			c.Usage.CachedTokens = w.Usage.PromptTokensDetails.CachedTokens
		}
	}
	if len(w.Choices) == 0 {
		return c, nil
	}
	ch := w.Choices[0]
	c.FinishReason = str(ch.FinishReason)
	c.Content = str(ch.Text)
	m := ch.Delta
	if m == nil {
		m = ch.Message
	}
	if m != nil {
		c.Content += str(m.Content)
		c.Reasoning = str(m.Reasoning) + str(m.ReasoningContent)
		for i, tc := range m.ToolCalls {
			idx := i
			if tc.Index != nil {
				idx = *tc.Index
			}
			c.ToolCalls = append(c.ToolCalls, ToolCallDelta{Index: idx, ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
	}
	return c, nil
}

// errorText is the message of an in-band error: a string, or an object
// with a "message".
func errorText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &o) == nil && o.Message != "" {
		return o.Message
	}
	return strings.TrimSpace(string(raw))
}

// ToolCall is one whole tool call, its arguments as the model wrote them.
type ToolCall struct {
	ID        string `json:"id,omitempty"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolCallAccumulator joins streamed tool call deltas by index.
type ToolCallAccumulator struct {
	calls map[int]*ToolCall
}

// Add merges deltas: the first non-empty id and name win, arguments are
// appended.
func (a *ToolCallAccumulator) Add(ds []ToolCallDelta) {
	if a.calls == nil {
		a.calls = map[int]*ToolCall{}
	}
	for _, d := range ds {
		c := a.calls[d.Index]
		if c == nil {
			c = &ToolCall{}
			a.calls[d.Index] = c
		}
		if c.ID == "" {
			c.ID = d.ID
		}
		if c.Name == "" {
			c.Name = d.Name
		}
		c.Arguments += d.Arguments
	}
}

// Calls returns the calls in index order.
func (a *ToolCallAccumulator) Calls() []ToolCall {
	idx := make([]int, 0, len(a.calls))
	for i := range a.calls {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	out := make([]ToolCall, 0, len(idx))
	for _, i := range idx {
		out = append(out, *a.calls[i])
	}
	return out
}
