package mlxsim

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// The real OpenAI Go client must parse what the simulator sends, as it
// parses what mlx_lm.server sends.

func openaiClient(ts *testServer) openai.Client {
	return openai.NewClient(
		option.WithBaseURL(ts.srv.URL+"/v1/"),
		option.WithAPIKey("not-needed"),
		option.WithMaxRetries(0),
	)
}

func TestOpenAIClientChat(t *testing.T) {
	ts := newTestServer(t, Options{Model: "mlx-community/Qwen3-4B-4bit"})
	client := openaiClient(ts)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	resp, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model: "mlx-community/Qwen3-4B-4bit",
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage("You are terse."),
			openai.UserMessage("Say something about caches."),
		},
		MaxTokens:   openai.Int(30),
		Logprobs:    openai.Bool(true),
		TopLogprobs: openai.Int(2),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(resp.ID, "chatcmpl-") || resp.Object != "chat.completion" || resp.Model != "mlx-community/Qwen3-4B-4bit" {
		t.Errorf("response %+v", resp)
	}
	if len(resp.Choices) != 1 || resp.Choices[0].Message.Content == "" || resp.Choices[0].Message.Role != "assistant" {
		t.Fatalf("choices %+v", resp.Choices)
	}
	if fr := resp.Choices[0].FinishReason; fr != "length" && fr != "stop" {
		t.Errorf("finish_reason %q", fr)
	}
	u := resp.Usage
	if u.PromptTokens == 0 || u.CompletionTokens == 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Errorf("usage %+v", u)
	}
	lp := resp.Choices[0].Logprobs.Content
	if int64(len(lp)) != u.CompletionTokens || len(lp[0].TopLogprobs) != 2 || lp[0].Token == "" {
		t.Errorf("logprobs %+v", lp)
	}
	if resp.SystemFingerprint == "" {
		t.Errorf("no system_fingerprint")
	}
}

func TestOpenAIClientStreamWithUsage(t *testing.T) {
	ts := newTestServer(t, Options{PrefillStepSize: 8})
	client := openaiClient(ts)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model:         "default_model",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage(strings.Repeat("Tell me a story about a server. ", 5))},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	acc := openai.ChatCompletionAccumulator{}
	chunks := 0
	for stream.Next() {
		acc.AddChunk(stream.Current())
		chunks++
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if chunks < 5 {
		t.Errorf("%d chunks", chunks)
	}
	if len(acc.Choices) != 1 || acc.Choices[0].Message.Content == "" || acc.Choices[0].FinishReason != "stop" {
		t.Errorf("accumulated %+v", acc.Choices)
	}
	if acc.Usage.TotalTokens == 0 || acc.Usage.TotalTokens != acc.Usage.PromptTokens+acc.Usage.CompletionTokens {
		t.Errorf("usage %+v", acc.Usage)
	}
	// Same answer as the non-streamed request.
	resp, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:    "default_model",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(strings.Repeat("Tell me a story about a server. ", 5))},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Message.Content != acc.Choices[0].Message.Content {
		t.Errorf("stream %q vs %q", acc.Choices[0].Message.Content, resp.Choices[0].Message.Content)
	}
	if resp.Usage.PromptTokensDetails.CachedTokens == 0 {
		t.Errorf("cached_tokens not parsed: %+v", resp.Usage)
	}
}

func TestOpenAIClientToolCall(t *testing.T) {
	ts := newTestServer(t, Options{})
	client := openaiClient(ts)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tools := []openai.ChatCompletionToolUnionParam{
		openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:        "get_weather",
			Description: openai.String("Current weather for a city"),
			Parameters: shared.FunctionParameters{
				"type": "object",
				"properties": map[string]any{
					"city": map[string]any{"type": "string"},
					"days": map[string]any{"type": "integer"},
				},
				"required": []string{"city", "days"},
			},
		}),
	}
	params := openai.ChatCompletionNewParams{
		Model:    "default_model",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Call get_weather for Lisbon")},
		Tools:    tools,
	}
	resp, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	ch := resp.Choices[0]
	if ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) != 1 {
		t.Fatalf("choice %+v", ch)
	}
	call := ch.Message.ToolCalls[0]
	var args map[string]any
	if call.Function.Name != "get_weather" || call.Type != "function" || call.ID == "" || json.Unmarshal([]byte(call.Function.Arguments), &args) != nil {
		t.Errorf("call %+v", call)
	}
	if _, ok := args["city"].(string); !ok {
		t.Errorf("arguments %s", call.Function.Arguments)
	}
	if _, ok := args["days"].(float64); !ok {
		t.Errorf("arguments %s", call.Function.Arguments)
	}

	// Streamed, through the accumulator.
	stream := client.Chat.Completions.NewStreaming(ctx, params)
	acc := openai.ChatCompletionAccumulator{}
	finished := 0
	for stream.Next() {
		acc.AddChunk(stream.Current())
		if tc, ok := acc.JustFinishedToolCall(); ok && tc.Name == "get_weather" {
			finished++
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(acc.Choices[0].Message.ToolCalls) != 1 || acc.Choices[0].Message.ToolCalls[0].Function.Arguments != call.Function.Arguments {
		t.Errorf("accumulated tool calls %+v", acc.Choices[0].Message.ToolCalls)
	}
	if finished != 1 || acc.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("finished %d, finish_reason %q", finished, acc.Choices[0].FinishReason)
	}
}
