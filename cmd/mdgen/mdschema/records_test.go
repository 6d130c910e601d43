package mdschema

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const records = `
type: x
span_attributes:
  url.path: {type: string, set: always, description: the path}
  llm.input_messages.<i>.message.contents.<j>.message_content.text: {type: string, content: true, set: chat, description: a text part}
  llm.output_messages.0.message.role: {type: string, content: true, description: assistant}
  llm.prompts: {type: slice, element_type: string, content: true, set: text completion, description: the prompts}
log_attributes:
  live:
    event: {type: string, set: always, description: the event}
  access:
    client.address: {type: string, set: always, description: the IP}
resource_attributes:
  service.name: {type: string, set: always, description: the service}
span_events:
  First Token Stream Event: {description: the first chunk}
`

func TestParseRecords(t *testing.T) {
	c, err := Parse([]byte(records))
	require.NoError(t, err)
	assert.Equal(t, []string{"url.path", "llm.input_messages.<i>.message.contents.<j>.message_content.text", "llm.output_messages.0.message.role", "llm.prompts"}, c.SpanAttributes.Keys())
	assert.Equal(t, []string{"live", "access"}, c.LogAttributes.Keys())
	assert.Equal(t, []string{"First Token Stream Event"}, c.SpanEvents.Keys())

	e, ok := c.SpanAttributes.Lookup("llm.input_messages.12.message.contents.0.message_content.text")
	require.True(t, ok)
	assert.Equal(t, "content, chat", e.Value.SetText())
	assert.Equal(t, []string{"i", "j"}, Placeholders(e.Key))
	_, ok = c.SpanAttributes.Lookup("llm.input_messages.x.message.contents.0.message_content.text")
	assert.False(t, ok)
	_, ok = c.SpanAttributes.Lookup("url.paths")
	assert.False(t, ok)
	role, _ := c.SpanAttributes.Lookup("llm.output_messages.0.message.role")
	assert.Equal(t, "content", role.Value.SetText())
	prompts, _ := c.SpanAttributes.Lookup("llm.prompts")
	assert.Equal(t, "string[]", prompts.Value.TypeName())
	path, _ := c.SpanAttributes.Lookup("url.path")
	assert.True(t, path.Value.Always())
	assert.Equal(t, "always", path.Value.SetText())
}

func TestMatchKey(t *testing.T) {
	p := "llm.input_messages.<i>.message.contents.<j>.message_content.text"
	assert.True(t, MatchKey(p, "llm.input_messages.0.message.contents.12.message_content.text"))
	assert.False(t, MatchKey(p, "llm.input_messages.x.message.contents.1.message_content.text"))
	assert.False(t, MatchKey(p, "llm.input_messages..message.contents.1.message_content.text"))
	assert.False(t, MatchKey(p, "llm.input_messages.0.message.contents.1.message_content.type"))
	assert.False(t, MatchKey(p, "llm.input_messages.0.message.contents.1.message_content.text.x"))
	assert.True(t, MatchKey("url.path", "url.path"))
	assert.False(t, MatchKey("url.path", "url.paths"))
}

func TestParseRefusesRecords(t *testing.T) {
	for name, doc := range map[string]string{
		"unknown field":          "type: x\nspan_attributes:\n  a: {type: string, set: always, description: d, colour: red}\n",
		"unknown type":           "type: x\nspan_attributes:\n  a: {type: float, set: always, description: d}\n",
		"no type":                "type: x\nspan_attributes:\n  a: {set: always, description: d}\n",
		"slice without elements": "type: x\nspan_attributes:\n  a: {type: slice, set: always, description: d}\n",
		"elements of a string":   "type: x\nspan_attributes:\n  a: {type: string, element_type: string, set: always, description: d}\n",
		"no description":         "type: x\nspan_attributes:\n  a: {type: string, set: always}\n",
		"no set":                 "type: x\nspan_attributes:\n  a: {type: string, description: d}\n",
		"content always":         "type: x\nspan_attributes:\n  a: {type: string, set: always, content: true, description: d}\n",
		"key twice":              "type: x\nspan_attributes:\n  a: {type: string, set: always, description: d}\n  a: {type: int, set: always, description: d}\n",
		"overlapping keys":       "type: x\nspan_attributes:\n  a.<i>.b: {type: string, set: x, description: d}\n  a.0.b: {type: int, set: x, description: d}\n",
		"placeholder in segment": "type: x\nspan_attributes:\n  a<i>.b: {type: string, set: x, description: d}\n",
		"placeholder name":       "type: x\nspan_attributes:\n  a.<ij>.b: {type: string, set: x, description: d}\n",
		"placeholder twice":      "type: x\nspan_attributes:\n  a.<i>.<i>: {type: string, set: x, description: d}\n",
		"empty segment":          "type: x\nspan_attributes:\n  a..b: {type: string, set: x, description: d}\n",
		"always with index":      "type: x\nspan_attributes:\n  a.<i>: {type: string, set: always, description: d}\n",
		"log key twice":          "type: x\nlog_attributes:\n  access:\n    a: {type: string, set: always, description: d}\n    a: {type: string, set: always, description: d}\n",
		"log kind twice":         "type: x\nlog_attributes:\n  access: {}\n  access: {}\n",
		"log type":               "type: x\nlog_attributes:\n  live:\n    a: {type: str, set: always, description: d}\n",
		"resource description":   "type: x\nresource_attributes:\n  service.name: {type: string, set: always}\n",
		"event description":      "type: x\nspan_events:\n  e: {}\n",
		"event field":            "type: x\nspan_events:\n  e: {description: d, attributes: [a]}\n",
	} {
		_, err := Parse([]byte(doc))
		assert.Error(t, err, name)
	}
}
