package sse

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mlxStream is a streamed chat completion as mlx_lm.server writes it:
// a keepalive during prefill, content chunks, the finish chunk, the usage
// chunk (include_usage was asked for) and the end marker.
const mlxStream = ": keepalive 2048/8192\n\n" +
	`data: {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "m", "created": 1755, "choices": [{"index": 0, "finish_reason": null, "delta": {"role": "assistant", "content": "Hi"}}]}` + "\n\n" +
	`data: {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "m", "created": 1755, "choices": [{"index": 0, "finish_reason": "stop", "delta": {"role": "assistant"}}]}` + "\n\n" +
	`data: {"id": "chatcmpl-1", "object": "chat.completion", "model": "m", "created": 1755, "choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17, "prompt_tokens_details": {"cached_tokens": 8}}}` + "\n\n" +
	"data: [DONE]\n\n"

// all splits b into its events and returns what is left over.
func all(b []byte) (events []Event, rest []byte) {
	for {
		ev, n, ok := Next(b)
		if !ok {
			return events, b
		}
		events = append(events, ev)
		b = b[n:]
	}
}

func TestMLXStream(t *testing.T) {
	events, rest := all([]byte(mlxStream))
	require.Len(t, events, 5)
	assert.Empty(t, rest)

	assert.True(t, events[0].Comment, "keepalive is a comment")
	assert.False(t, events[0].HasData)
	assert.Equal(t, ": keepalive 2048/8192\n\n", string(events[0].Raw))

	assert.True(t, events[1].HasData)
	assert.False(t, events[1].Comment)
	assert.True(t, bytes.HasPrefix(events[1].Data, []byte(`{"id": "chatcmpl-1"`)))
	assert.True(t, bytes.HasSuffix(events[1].Data, []byte(`}}]}`)), "data excludes the line end")

	assert.False(t, events[3].IsDone())
	assert.True(t, events[4].IsDone())

	var joined []byte
	for _, e := range events {
		joined = append(joined, e.Raw...)
	}
	assert.Equal(t, mlxStream, string(joined), "raw bytes give back the stream")
}

func TestIncompleteEventWaits(t *testing.T) {
	for _, in := range []string{
		"",
		"data: {\"a\": 1}",
		"data: {\"a\": 1}\n",
		"data: x\r\n",
		"data: x\r\n\r", // the last CR may be the start of CRLF
		": keepalive 1/2\n",
	} {
		_, _, ok := Next([]byte(in))
		assert.False(t, ok, "%q is not a whole event", in)
	}
}

func TestLineEndings(t *testing.T) {
	for _, in := range []string{
		"data: x\n\n",
		"data: x\r\n\r\n",
		"data: x\r\rtail",
		"data: x\n\r\n",
	} {
		ev, n, ok := Next([]byte(in))
		require.True(t, ok, "%q", in)
		assert.Equal(t, "x", string(ev.Data), "%q", in)
		assert.Equal(t, in[:n], string(ev.Raw))
	}
}

func TestFields(t *testing.T) {
	ev, _, ok := Next([]byte("event: message\ndata:first\ndata:  second\ndata\nid: 7\n\n"))
	require.True(t, ok)
	assert.Equal(t, "first\n second\n", string(ev.Data), "one leading space dropped, bare `data` is an empty line")
	assert.False(t, ev.Comment)

	ev, _, ok = Next([]byte("event: ping\n\n"))
	require.True(t, ok)
	assert.False(t, ev.HasData)
	assert.False(t, ev.Comment, "a field that is not a comment")

	ev, n, ok := Next([]byte("\ndata: x\n\n"))
	require.True(t, ok)
	assert.Equal(t, 1, n, "a lone blank line is an empty event")
	assert.False(t, ev.HasData)
	assert.False(t, ev.Comment)
}

func TestDataAliasesInputForOneLine(t *testing.T) {
	in := []byte("data: abc\n\n")
	ev, _, _ := Next(in)
	in[7] = 'X'
	assert.Equal(t, "aXc", string(ev.Data), "no copy for the common case")
}
