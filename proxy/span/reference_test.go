package span

import (
	"bytes"
	"encoding/json"
	"math"

	"go.opentelemetry.io/otel/attribute"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/span/spankey"
)

// The span's readers of the request as they were with encoding/json: the
// references json_fuzz_test.go holds json.go's readers to. The
// attributes a message makes once read (addInputMessage) are shared.

func refInputMessages(b *attrs, raw json.RawMessage, hide Hide) {
	var msgs []inMessageJSON
	if json.Unmarshal(raw, &msgs) != nil {
		return
	}
	for i, m := range msgs {
		var c messageContent
		switch {
		case isNull(m.Content):
		case json.Unmarshal(m.Content, &c.text) == nil:
			c.isText = true
		case json.Unmarshal(m.Content, &c.parts) == nil:
		default:
			c.parts = nil // what a failed decoding left
		}
		addInputMessage(b, i, &m, c, hide)
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
		b.add(attribute.String(spankey.LlmToolsToolJsonSchema(i), b.content(compact.String())))
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
