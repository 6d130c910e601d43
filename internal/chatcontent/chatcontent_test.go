package chatcontent

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestText(t *testing.T) {
	for raw, want := range map[string]string{
		`"plain"`: "plain",
		`[{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {"url": "x"}}, {"type": "text", "text": "b"}]`: "a\nb",
		`null`:     "",
		`{"x": 1}`: "",
	} {
		assert.Equal(t, want, Text(json.RawMessage(raw)), raw)
	}
}
