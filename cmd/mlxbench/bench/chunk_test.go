package bench

import (
	"reflect"
	"testing"
)

func TestParseChunk(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want Chunk
		out  bool
	}{
		{"mlx_lm content", `{"id": "chatcmpl-1", "system_fingerprint": "0.31.3-x", "object": "chat.completion.chunk", "model": "m", "created": 1, "choices": [{"index": 0, "finish_reason": null, "delta": {"role": "assistant", "content": "Hi"}}]}`,
			Chunk{ID: "chatcmpl-1", Fingerprint: "0.31.3-x", Content: "Hi"}, true},
		{"mlx_lm final", `{"id": "c", "choices": [{"index": 0, "finish_reason": "stop", "delta": {"role": "assistant"}}]}`,
			Chunk{ID: "c", FinishReason: "stop"}, false},
		{"usage chunk", `{"id": "c", "object": "chat.completion", "choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17, "prompt_tokens_details": {"cached_tokens": 8}}}`,
			Chunk{ID: "c", Usage: &Usage{PromptTokens: 12, CompletionTokens: 5, CachedTokens: 8}}, false},
		{"role-only first chunk (vLLM, OpenAI)", `{"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}`,
			Chunk{}, false},
		{"mlx_lm reasoning", `{"choices": [{"index": 0, "finish_reason": null, "delta": {"role": "assistant", "reasoning": "hmm"}}]}`,
			Chunk{Reasoning: "hmm"}, true},
		{"reasoning_content", `{"choices": [{"index": 0, "delta": {"reasoning_content": "hmm"}}]}`,
			Chunk{Reasoning: "hmm"}, true},
		{"mlx_lm tool call", `{"choices": [{"index": 0, "finish_reason": null, "delta": {"role": "assistant", "tool_calls": [{"function": {"name": "calculator", "arguments": "{\"a\": 1}"}, "type": "function", "id": "u1", "index": 0}]}}]}`,
			Chunk{ToolCalls: []ToolCallDelta{{Index: 0, ID: "u1", Name: "calculator", Arguments: `{"a": 1}`}}}, true},
		{"non-streamed completion", `{"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null, "tool_calls": [{"function": {"name": "f", "arguments": "{}"}, "type": "function", "id": "u"}]}}], "usage": {"prompt_tokens": 3, "completion_tokens": 4}}`,
			Chunk{FinishReason: "tool_calls", ToolCalls: []ToolCallDelta{{Index: 0, ID: "u", Name: "f", Arguments: "{}"}}, Usage: &Usage{PromptTokens: 3, CompletionTokens: 4}}, true},
		{"text completion", `{"choices": [{"index": 0, "text": "abc", "finish_reason": null}]}`, Chunk{Content: "abc"}, true},
		{"in-band error object", `{"error": {"message": "boom", "type": "x"}}`, Chunk{Error: "boom"}, false},
		{"in-band error string", `{"error": "boom"}`, Chunk{Error: "boom"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseChunk([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if got.HasOutput() != tc.out {
				t.Errorf("HasOutput %v", got.HasOutput())
			}
		})
	}
	if _, err := ParseChunk([]byte(`{"trunc`)); err == nil {
		t.Error("a broken chunk must be an error")
	}
}

func TestToolCallAccumulator(t *testing.T) {
	var a ToolCallAccumulator
	a.Add([]ToolCallDelta{{Index: 1, ID: "b", Name: "g", Arguments: "{"}})
	a.Add([]ToolCallDelta{{Index: 0, ID: "a", Name: "f", Arguments: `{"x": 1}`}})
	a.Add([]ToolCallDelta{{Index: 1, Arguments: `"y": 2}`}})
	want := []ToolCall{{ID: "a", Name: "f", Arguments: `{"x": 1}`}, {ID: "b", Name: "g", Arguments: `{"y": 2}`}}
	if got := a.Calls(); !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v", got)
	}
}
