package span

import (
	"encoding/json"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/confidence"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/heuristics"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/jsonedit"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/span/spankey"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/wire"
)

// OpenInference attributes (Arize-ai/openinference spec), so that Opik and
// Phoenix render the span as an LLM call. The message attributes follow
// the spec's flattened form: llm.input_messages.<i>.message.role, ...

// openInferenceAttrs adds the OpenInference attributes; content (inputs,
// outputs, messages, prompts, tools) only when CaptureContent is on, and
// as the OPENINFERENCE_HIDE_* settings allow.
func (bd *builder) openInferenceAttrs(b *attrs, h *heuristics.Result, sc *confidence.Score) {
	f := bd.f
	cfg := bd.cfg
	b.add(
		attribute.String(spankey.OpeninferenceSpanKind, "LLM"),
		attribute.String(spankey.LlmSystem, System),
		attribute.String(spankey.LlmProvider, Provider),
		attribute.String(spankey.LlmModelName, Ident(f.AnswerModel)),
	)
	if user, ok := f.Request.str("user"); ok && user != "" {
		b.add(attribute.String(spankey.UserId, Ident(user)))
	} else if f.Client != "" {
		// Who called, as the front door knows it: an API key's name,
		// local or anonymous.
		b.add(attribute.String(spankey.UserId, f.Client))
	}
	session := f.Session
	if session == "" {
		session = f.Request.sessionID()
	}
	if session != "" {
		// OpenInference's key (Opik's thread, Phoenix's session) and the
		// GenAI one, so that either kind of consumer groups the trace.
		b.add(attribute.String(spankey.SessionId, Ident(session)), attribute.String(spankey.GenAiConversationId, Ident(session)))
	}
	if bd.out != nil && bd.out.FinishReason != "" {
		b.add(attribute.String(spankey.LlmFinishReason, Ident(bd.out.FinishReason)))
	}
	if u := f.Usage; u != nil {
		total := u.TotalTokens
		if total == 0 {
			total = u.PromptTokens + u.CompletionTokens
		}
		b.add(attribute.Int(spankey.LlmTokenCountPrompt, u.PromptTokens),
			attribute.Int(spankey.LlmTokenCountCompletion, u.CompletionTokens),
			attribute.Int(spankey.LlmTokenCountTotal, total))
		if u.HasCached {
			b.add(attribute.Int(spankey.LlmTokenCountPromptDetailsCacheRead, u.CachedTokens))
		}
		if u.HasReasoning {
			b.add(attribute.Int(spankey.LlmTokenCountCompletionDetailsReasoning, u.ReasoningTokens))
		}
	}
	if params := invocationParameters(f.Request.params()); params != "" && !cfg.Hide.InvocationParameters {
		if len(params) > MaxParamsBytes {
			params, b.truncated = CutAt(params, MaxParamsBytes), true
		}
		b.add(attribute.String(spankey.LlmInvocationParameters, params))
	}
	b.add(attribute.String(spankey.Metadata, bd.metadata(h, sc)))
	if !cfg.CaptureContent {
		return
	}
	hide := cfg.Hide
	// Inputs.
	if raw := f.Request.input(); len(raw) > 0 {
		value := Redacted
		if !hide.Inputs {
			value = b.content(string(raw))
		}
		b.add(attribute.String(spankey.InputValue, value), attribute.String(spankey.InputMimeType, mimeOf(raw)))
	}
	if !hide.Inputs && !hide.InputMessages {
		inputMessages(b, f.Request.fields["messages"], hide)
	}
	// OpenInference governs prompts by HIDE_PROMPTS (and HIDE_INPUTS), not
	// by the message settings.
	if !hide.Inputs && !hide.Prompts && f.Operation == OpTextCompletion {
		for i, p := range stringOrStrings(f.Request.fields["prompt"]) {
			b.add(attribute.String(spankey.LlmPromptsPromptText(i), textOrRedacted(b, p, hide.InputText)))
		}
	}
	if !hide.Inputs && !hide.LLMTools {
		toolDefinitions(b, f.Request.fields["tools"])
	}
	// Outputs.
	if bd.out == nil {
		return
	}
	value := Redacted
	if !hide.Outputs {
		value = b.content(outputValue(bd.out))
	}
	b.add(attribute.String(spankey.OutputValue, value), attribute.String(spankey.OutputMimeType, "application/json"))
	switch {
	case hide.Outputs:
	case f.Operation == OpTextCompletion:
		// A text completion's answers are choices, not messages.
		if !hide.Choices {
			for c, o := range f.Outputs {
				b.add(attribute.String(spankey.LlmChoicesCompletionText(c), textOrRedacted(b, o.Text, hide.OutputText)))
			}
		}
	case !hide.OutputMessages:
		for c := range f.Outputs {
			outputMessage(b, c, &f.Outputs[c], hide.OutputText)
		}
	}
}

// outputMessage adds choice c as llm.output_messages.<c>: its role, text
// and tool calls, and, for a thinking model, its reasoning as a content
// part of type reasoning followed by the text as one of type text.
func outputMessage(b *attrs, c int, o *Output, hideText bool) {
	b.add(attribute.String(spankey.LlmOutputMessagesMessageRole(c), "assistant"))
	if o.Text != "" {
		b.add(attribute.String(spankey.LlmOutputMessagesMessageContent(c), textOrRedacted(b, o.Text, hideText)))
	}
	if o.Reasoning != "" {
		b.add(attribute.String(spankey.LlmOutputMessagesMessageContentsMessageContentType(c, 0), "reasoning"),
			attribute.String(spankey.LlmOutputMessagesMessageContentsMessageContentText(c, 0), textOrRedacted(b, o.Reasoning, hideText)))
		if o.Text != "" {
			b.add(attribute.String(spankey.LlmOutputMessagesMessageContentsMessageContentType(c, 1), "text"),
				attribute.String(spankey.LlmOutputMessagesMessageContentsMessageContentText(c, 1), textOrRedacted(b, o.Text, hideText)))
		}
	}
	for k, tc := range o.ToolCalls {
		keys := toolCallKeys{spankey.LlmOutputMessagesMessageToolCallsToolCallId(c, k),
			spankey.LlmOutputMessagesMessageToolCallsToolCallFunctionName(c, k),
			spankey.LlmOutputMessagesMessageToolCallsToolCallFunctionArguments(c, k)}
		toolCallAttrs(b, keys, tc.ID, tc.Name, tc.Arguments)
	}
}

// metadata is the original's metadata attribute (JSON): node, timings,
// risk, and the confidence details when the answer was scored. Ours adds
// the span's own trace and span id, so whoever reads the trace from Opik
// (where the trace id is Opik's, not OTel's) can link back to it: the
// judge loop puts them on its evaluation events.
func (bd *builder) metadata(h *heuristics.Result, sc *confidence.Score) string {
	f := bd.f
	m := &spanMetadata{Node: bd.cfg.Node, GenerationSeconds: round4(f.End.Sub(f.Start).Seconds())}
	if sc := bd.span.Context; sc.IsValid() {
		m.OtelTraceID, m.OtelSpanID = sc.TraceID().String(), sc.SpanID().String()
	}
	if ttft, ok := f.ttft(); ok {
		m.TTFTSeconds = m.float(round4(ttft))
	}
	if h != nil {
		m.HallucinationRisk, m.HallucinationFlagged = m.float(h.Risk), &h.Flagged
	}
	if sc != nil && sc.OK {
		m.LogprobsSource = f.LogprobsSource
		m.ScoredTokens = &sc.Tokens
		m.Perplexity = m.float(round4(sc.Perplexity))
		m.ConfidenceMean = m.float(round4(sc.ConfidenceMean))
		m.ConfidenceMin = m.float(round4(sc.ConfidenceMin))
		m.ConfidenceStd = m.float(round4(sc.ConfidenceStd))
		m.LowConfidenceTokenRatio = m.float(round4(sc.LowConfidenceRatio))
		if sc.HasEntropy() {
			m.TokenEntropyNats = m.float(round4(sc.EntropyMean))
		}
		if sc.HasMargin() {
			m.TokenMarginMean = m.float(round4(sc.MarginMean))
		}
	}
	b, err := json.Marshal(m)
	if err != nil { // an infinite perplexity
		m.Perplexity = nil
		b, _ = json.Marshal(m)
	}
	return string(b)
}

// spanMetadata is the span's metadata attribute. Its members are in the
// order of their names, as they were when it was a map, and an absent
// value is left out: the JSON is the same, without a map to sort per span.
type spanMetadata struct {
	ConfidenceMean          *float64 `json:"confidence_mean,omitempty"`
	ConfidenceMin           *float64 `json:"confidence_min,omitempty"`
	ConfidenceStd           *float64 `json:"confidence_std,omitempty"`
	GenerationSeconds       float64  `json:"generation_seconds"`
	HallucinationFlagged    *bool    `json:"hallucination_flagged,omitempty"`
	HallucinationRisk       *float64 `json:"hallucination_risk,omitempty"`
	LogprobsSource          string   `json:"logprobs_source,omitempty"`
	LowConfidenceTokenRatio *float64 `json:"low_confidence_token_ratio,omitempty"`
	Node                    string   `json:"node"`
	OtelSpanID              string   `json:"otel_span_id,omitempty"`
	OtelTraceID             string   `json:"otel_trace_id,omitempty"`
	Perplexity              *float64 `json:"perplexity,omitempty"`
	ScoredTokens            *int     `json:"scored_tokens,omitempty"`
	TokenEntropyNats        *float64 `json:"token_entropy_nats,omitempty"`
	TokenMarginMean         *float64 `json:"token_margin_mean,omitempty"`
	TTFTSeconds             *float64 `json:"ttft_seconds,omitempty"`

	// floats holds the values the pointers above point at: one allocation
	// for the whole, not one per value.
	floats  [10]float64
	nFloats int
}

// float returns a pointer to v, kept in m.
func (m *spanMetadata) float(v float64) *float64 {
	m.floats[m.nFloats] = v
	m.nFloats++
	return &m.floats[m.nFloats-1]
}

// MaxParamsBytes bounds llm.invocation_parameters.
const MaxParamsBytes = 8 << 10

// invocationParameters is the request's parameters as JSON: every
// top-level member but the content (messages, prompt, tools) and secrets.
func invocationParameters(params map[string]json.RawMessage) string {
	if params == nil {
		return ""
	}
	keys := make([]string, 0, len(params))
	size := 2
	for k, v := range params {
		keys = append(keys, k)
		size += len(k) + len(v) + 4
	}
	slices.Sort(keys) // as json.Marshal orders a map's keys
	b := make([]byte, 0, size)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonedit.AppendKey(b, k)
		b = append(b, ':')
		switch v := params[k]; {
		case v == nil:
			b = append(b, "null"...)
		case len(v) == 0:
			return "" // json.Marshal's error for an empty RawMessage
		default:
			b = appendCompact(b, v, true)
		}
	}
	return string(append(b, '}'))
}

// inMessageJSON is one message of a chat request, the fields the span
// shows.
type inMessageJSON struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []wire.ToolCall `json:"tool_calls"`
}

// contentPartJSON is one part of a message whose content is a list.
type contentPartJSON struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url"`
}

func inputMessages(b *attrs, raw json.RawMessage, hide Hide) {
	msgs, ok := readMessages(raw)
	if !ok {
		return
	}
	for i, m := range msgs {
		var c messageContent
		switch {
		case isNull(m.Content):
			// No content (an assistant's tool calls): none on the span,
			// not "" (OpenAI's "content": null).
		case readString(m.Content, &c.text) == nil:
			c.isText = true
		case len(m.Content) > 0 && m.Content[0] == '[':
			if parts, ok := readContentParts(m.Content); ok {
				c.parts = parts
			}
		}
		addInputMessage(b, i, &m, c, hide)
	}
}

// messageContent is a message's content as read: text, or its parts;
// neither for null or anything else.
type messageContent struct {
	text   string
	isText bool
	parts  []contentPartJSON
}

// addInputMessage adds the attributes of the i-th input message.
func addInputMessage(b *attrs, i int, m *inMessageJSON, c messageContent, hide Hide) {
	hideText := hide.InputText
	if m.Role != "" {
		b.add(attribute.String(spankey.LlmInputMessagesMessageRole(i), Ident(m.Role)))
	}
	if c.isText {
		b.add(attribute.String(spankey.LlmInputMessagesMessageContent(i), textOrRedacted(b, c.text, hideText)))
	}
	for j, part := range c.parts {
		b.add(attribute.String(spankey.LlmInputMessagesMessageContentsMessageContentType(i, j), Ident(partType(part.Type))))
		switch {
		case part.Type == "text":
			b.add(attribute.String(spankey.LlmInputMessagesMessageContentsMessageContentText(i, j), textOrRedacted(b, part.Text, hideText)))
		case part.ImageURL != nil:
			b.add(attribute.String(spankey.LlmInputMessagesMessageContentsMessageContentImageImageUrl(i, j), imageURL(b, part.ImageURL.URL, hide)))
		}
	}
	if m.Name != "" {
		b.add(attribute.String(spankey.LlmInputMessagesMessageName(i), Ident(m.Name)))
	}
	if m.ToolCallID != "" {
		b.add(attribute.String(spankey.LlmInputMessagesMessageToolCallId(i), Ident(m.ToolCallID)))
	}
	for k, tc := range m.ToolCalls {
		keys := toolCallKeys{spankey.LlmInputMessagesMessageToolCallsToolCallId(i, k),
			spankey.LlmInputMessagesMessageToolCallsToolCallFunctionName(i, k),
			spankey.LlmInputMessagesMessageToolCallsToolCallFunctionArguments(i, k)}
		toolCallAttrs(b, keys, tc.ID, tc.Function.Name, tc.Function.Arguments)
	}
}

// partType is a content part's type in OpenInference's values
// (multimodal_attributes.md: text, image, audio): OpenAI's image_url and
// input_audio parts are image and audio.
func partType(t string) string {
	switch t {
	case "image_url":
		return "image"
	case "input_audio":
		return "audio"
	}
	return t
}

// imageURL is an image part's URL as the span shows it: redacted under
// HIDE_INPUT_IMAGES, and a base64 data URL past BASE64_IMAGE_MAX_LENGTH
// characters (OpenInference's configuration; Envoy AI Gateway does the
// same).
func imageURL(b *attrs, url string, hide Hide) string {
	maxLen := hide.Base64ImageMaxLength
	if maxLen <= 0 {
		maxLen = DefaultBase64ImageMaxLength
	}
	if hide.InputImages || (strings.HasPrefix(url, "data:") && strings.Contains(url, ";base64,") && len(url) > maxLen) {
		return Redacted
	}
	return b.content(url)
}

// toolCallKeys are the keys of one tool call's attributes, of an input
// or the output message.
type toolCallKeys struct{ id, name, arguments string }

func toolCallAttrs(b *attrs, keys toolCallKeys, id, name, arguments string) {
	if id != "" {
		b.add(attribute.String(keys.id, Ident(id)))
	}
	b.add(attribute.String(keys.name, Ident(name)),
		attribute.String(keys.arguments, b.content(arguments)))
}

// toolDefinitions adds llm.tools.<i>.tool.json_schema, each tool as the
// client sent it.
func toolDefinitions(b *attrs, raw json.RawMessage) {
	var compact []byte
	i := 0
	eachArrayElem(raw, func(t []byte) {
		compact = appendCompact(compact[:0], t, false)
		b.add(attribute.String(spankey.LlmToolsToolJsonSchema(i), b.content(string(compact))))
		i++
	})
}

// stringOrStrings reads a member that is a string or a list of strings: a
// text completion's prompt (token lists are left out), a request's stop.
func stringOrStrings(raw json.RawMessage) []string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil {
		return many
	}
	return nil
}

func textOrRedacted(b *attrs, s string, hide bool) string {
	if hide {
		return Redacted
	}
	return b.content(s)
}

// outputValue is the answer as an assistant message, the same for streamed
// and non-streamed answers.
func outputValue(o *Output) string {
	type fn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type call struct {
		ID       string `json:"id,omitempty"`
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	msg := struct {
		Role      string `json:"role"`
		Content   string `json:"content"`
		Reasoning string `json:"reasoning,omitempty"`
		ToolCalls []call `json:"tool_calls,omitempty"`
	}{Role: "assistant", Content: o.Text, Reasoning: o.Reasoning}
	for _, tc := range o.ToolCalls {
		typ := tc.Type
		if typ == "" {
			typ = "function"
		}
		msg.ToolCalls = append(msg.ToolCalls, call{ID: tc.ID, Type: typ, Function: fn{Name: tc.Name, Arguments: tc.Arguments}})
	}
	b, _ := json.Marshal(msg)
	return string(b)
}

// mimeOf is input.value's type: JSON unless the body holds Python's
// non-finite literals. raw is a body parseBody took, or json.Marshal's
// output: JSON once its literals are nulled, so that is the one way it
// can fail json.Valid, and a scan for them costs far less.
func mimeOf(raw []byte) string {
	if !jsonedit.HasPythonLiterals(raw) {
		return "application/json"
	}
	return "text/plain"
}
