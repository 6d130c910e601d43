package span

import (
	"time"

	"go.opentelemetry.io/otel/attribute"
)

// Facts is everything a span is made of: the request's facts, timings and
// answer. The proxy's record embeds it and sets each fact where it learns
// it; when the request has ended the span takes a copy (the record does
// not outlive it) with what is derived then (proxy/span.go, factsOf), so
// that the attributes can be built off the request path. Nothing here
// reads the proxy's record.
type Facts struct {
	// Operation is gen_ai.operation.name: OpChat or OpTextCompletion.
	Operation string
	Path      string
	// Model is the model the request is for: the request's `model`, or
	// the configured model when it leaves it out or says "default_model"
	// (not bounded: Build and the metrics bound it). AnswerModel is the
	// model that answered: the answer's, else (none, or mlx_lm's
	// "default_model") the request's. ResponseModel is the answer's own,
	// "" when it had none.
	Model, AnswerModel, ResponseModel string
	Kind                              string // chat or reasoning
	// LogprobsSource says why the answer carries logprobs (client,
	// injected, destreamed, streamed; "" when nobody asked).
	LogprobsSource        string
	Streaming, Destreamed bool
	ToolsOffered          bool
	// Temperature is the request's temperature, or the configured default
	// when it has none; HasTemperature is false when it was not a number.
	HasTemperature bool
	Temperature    float64
	Start, End     time.Time // arrival; the last byte to the client, or the failure
	// Headers: the engine's response headers arrived; zero when it never
	// answered. mlx_lm sends them when it admits a streamed request, and
	// only with the whole body for a non-streamed one.
	Headers                  time.Time
	FirstChunk, FirstContent time.Time // first streamed chunk with any text or a tool call; with content
	Status                   int       // the HTTP status the client got (0: none)
	ErrorType, ErrorMessage  string    // error.type and the span's status message; "" when it did not fail
	EngineError              string    // the engine's error message, "" when it sent none
	Usage                    *Usage    // nil when the engine sent none
	ResponseID               string
	Outputs                  []Output // every choice, by index
	Request                  Request
	Session                  string // X-Session-Id, "" without one (then the span reads the body's metadata.session_id)
	// Upstream, UpstreamNode and Chosen say which of several engines served
	// the request and how it was chosen; ServerAddress and ServerPort are
	// its own (empty with one engine: Config.Server says).
	Upstream, UpstreamNode, Chosen string
	ServerAddress                  string
	ServerPort                     int
	// Client is the caller's client label: its API key's name, or the
	// local or anonymous label without a key ("" when refused before the
	// caller was known).
	Client string
	Origin string // user, judge, probe, bench; never "" (user from arrival until the caller is known)
}

// The operations (gen_ai.operation.name).
const (
	OpChat           = "chat"
	OpTextCompletion = "text_completion"
)

// Output is one choice of the answer.
type Output struct {
	Text, Reasoning string
	FinishReason    string // "" when the engine gave none
	ToolCalls       []ToolCall
	Truncated       bool // the text was cut at the proxy's cap
}

// ToolCall is one tool call of a choice.
type ToolCall struct {
	ID, Type, Name, Arguments string
	// ArgumentsCut: streamed pieces would have made Arguments longer than
	// the proxy's bound; the rest was not kept.
	ArgumentsCut bool
}

// Usage is the answer's token accounting.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	TotalTokens      int
	// CachedTokens is prompt_tokens_details.cached_tokens: prompt tokens the
	// engine found in its prompt cache. HasCached is false when absent.
	CachedTokens int
	HasCached    bool
	// ReasoningTokens is completion_tokens_details.reasoning_tokens (OpenAI's;
	// mlx_lm 0.31 does not send it). HasReasoning is false when absent.
	ReasoningTokens int
	HasReasoning    bool
}

// Config is what every span of one proxy shares.
type Config struct {
	// CaptureContent puts prompts, answers and tool definitions on the span.
	CaptureContent bool
	// Hide is OpenInference's redaction settings.
	Hide Hide
	// MaxContentBytes bounds the bytes of content one span carries.
	MaxContentBytes int
	// Node names the node in the metadata attribute.
	Node string
	// Server is server.address and server.port of the engine.
	Server []attribute.KeyValue
}

// Hide is OpenInference's configuration of what a span hides
// (spec/configuration.md, the OPENINFERENCE_HIDE_* variables).
type Hide struct {
	Inputs, Outputs               bool // input.value and input messages; output.value and output messages
	InputMessages, OutputMessages bool // llm.input_messages.*, llm.output_messages.*
	InputText, OutputText         bool // the text of messages
	InputImages                   bool // the image parts of input messages
	InvocationParameters          bool // llm.invocation_parameters
	LLMTools                      bool // llm.tools.*
	Prompts                       bool // llm.prompts.* (a text completion's prompts)
	Choices                       bool // llm.choices.* (a text completion's answers)
	// Base64ImageMaxLength: a base64 data URL of an image longer than this
	// is redacted (OPENINFERENCE_BASE64_IMAGE_MAX_LENGTH; 0 is the default,
	// 32,000).
	Base64ImageMaxLength int
}

// DefaultBase64ImageMaxLength is OpenInference's default.
const DefaultBase64ImageMaxLength = 32_000

// Redacted stands for a hidden value, as OpenInference's instrumentations
// write it.
const Redacted = "__REDACTED__"

// Provider is gen_ai.provider.name and llm.provider of the proxy's spans
// (the original's llm.provider).
const Provider = "mlx"

// System is llm.system: the API the proxy speaks.
const System = "openai"

// Name is a span's name as GenAI names it, "{gen_ai.operation.name}
// {gen_ai.request.model}" (semantic conventions v1.41.0,
// gen-ai-spans.md, "Inference"), or the operation alone when the model
// is unknown.
func Name(op, model string) string {
	if model = Ident(model); model != "" {
		return op + " " + model
	}
	return op
}

// MaxAttributes bounds the attributes of one span (a conversation of
// about 300 messages with their roles and text).
const MaxAttributes = 1024
