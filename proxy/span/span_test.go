package span

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Content spends the span's byte budget, cut at a rune boundary.
func TestContentBudget(t *testing.T) {
	b := &attrs{budget: 5}
	assert.Equal(t, "abc", b.content("abc"))
	assert.Equal(t, "d", b.content("déf"), "cut at a rune boundary")
	assert.True(t, b.truncated)
	assert.Equal(t, "", b.content("x"))
}

// Without content, a span keeps no body and no content member.
func TestNewRequestWithoutContent(t *testing.T) {
	body := []byte(`{"model": "m", "max_tokens": 4, ` + toolBody[1:])
	fields, ok := membersOf(body)
	assert.True(t, ok)
	rf := NewRequest(body, fields, false)
	assert.Nil(t, rf.raw)
	assert.NotContains(t, rf.fields, "messages")
	assert.NotContains(t, rf.fields, "tools")
	assert.Contains(t, rf.fields, "model")
	with := NewRequest(body, fields, true)
	assert.Equal(t, body, with.raw)
	assert.Greater(t, with.Size(), rf.Size())
}
