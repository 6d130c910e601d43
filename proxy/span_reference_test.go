package proxy

import (
	"bytes"
	"encoding/json"
	"math"

	"go.opentelemetry.io/otel/attribute"
)

// The span's readers of the request as they were with encoding/json: the
// references span_json_fuzz_test.go holds span_json.go's readers to.

func refInputMessages(b *attrs, raw json.RawMessage, hide HideConfig) {
	hideText := hide.InputText
	var msgs []inMessageJSON
	if json.Unmarshal(raw, &msgs) != nil {
		return
	}
	for i, m := range msgs {
		if m.Role != "" {
			b.add(attribute.String(attrLlmInputMessagesMessageRole(i), ident(m.Role)))
		}
		var text string
		var parts []contentPartJSON
		switch {
		case json.Unmarshal(m.Content, &text) == nil:
			b.add(attribute.String(attrLlmInputMessagesMessageContent(i), textOrRedacted(b, text, hideText)))
		case json.Unmarshal(m.Content, &parts) == nil:
			for j, part := range parts {
				b.add(attribute.String(attrLlmInputMessagesMessageContentsMessageContentType(i, j), ident(partType(part.Type))))
				switch {
				case part.Type == "text":
					b.add(attribute.String(attrLlmInputMessagesMessageContentsMessageContentText(i, j), textOrRedacted(b, part.Text, hideText)))
				case part.ImageURL != nil:
					b.add(attribute.String(attrLlmInputMessagesMessageContentsMessageContentImageImageUrl(i, j), imageURL(b, part.ImageURL.URL, hide)))
				}
			}
		}
		if m.Name != "" {
			b.add(attribute.String(attrLlmInputMessagesMessageName(i), ident(m.Name)))
		}
		if m.ToolCallID != "" {
			b.add(attribute.String(attrLlmInputMessagesMessageToolCallId(i), ident(m.ToolCallID)))
		}
		for k, tc := range m.ToolCalls {
			keys := toolCallKeys{attrLlmInputMessagesMessageToolCallsToolCallId(i, k),
				attrLlmInputMessagesMessageToolCallsToolCallFunctionName(i, k),
				attrLlmInputMessagesMessageToolCallsToolCallFunctionArguments(i, k)}
			toolCallAttrs(b, keys, tc.ID, tc.Function.Name, tc.Function.Arguments)
		}
	}
}

func refToolDefinitions(b *attrs, raw json.RawMessage) {
	var tools []json.RawMessage
	if json.Unmarshal(raw, &tools) != nil {
		return
	}
	for i, t := range tools {
		var compact bytes.Buffer
		if json.Compact(&compact, t) != nil {
			continue
		}
		b.add(attribute.String(attrLlmToolsToolJsonSchema(i), b.content(compact.String())))
	}
}

func refInvocationParameters(params map[string]json.RawMessage) string {
	if params == nil {
		return ""
	}
	b, err := json.Marshal(params)
	if err != nil {
		return ""
	}
	return string(b)
}

func refMimeOf(raw []byte) string {
	if json.Valid(raw) {
		return "application/json"
	}
	return "text/plain"
}

func refNumber(raw json.RawMessage) (float64, bool) {
	if len(raw) == 0 || isNull(raw) {
		return 0, false
	}
	var v float64
	if json.Unmarshal(raw, &v) != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}
