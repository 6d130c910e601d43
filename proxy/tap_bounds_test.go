package proxy

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/span"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/wire"
)

// chunkedReader returns its bytes in reads of the sizes it is given, then
// the rest in one.
type chunkedReader struct {
	b     []byte
	sizes []int
}

func (r *chunkedReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := len(r.b)
	if len(r.sizes) > 0 {
		n, r.sizes = min(r.sizes[0], n), r.sizes[1:]
	}
	n = copy(p, r.b[:n])
	r.b = r.b[n:]
	return n, nil
}

func (r *chunkedReader) Close() error { return nil }

func relayThroughTap(t *testing.T, stream []byte, sizes []int) ([]byte, *Record) {
	t.Helper()
	rec := &Record{Route: RouteChat, Facts: span.Facts{Streaming: true}}
	tap := newStreamTap(context.Background(), &chunkedReader{b: stream, sizes: sizes}, rec, false)
	out, err := io.ReadAll(tap)
	require.NoError(t, err)
	return out, rec
}

const tapStream = "data: {\"id\": \"c1\", \"object\": \"chat.completion.chunk\", \"choices\": [{\"index\": 0, \"delta\": {\"role\": \"assistant\", \"content\": \"Hi\"}}]}\n\n" +
	": keepalive\r\n\r\n" +
	"data: {\"id\": \"c1\", \"object\": \"chat.completion.chunk\", \"choices\": [{\"index\": 0, \"delta\": {\"content\": \" there\"}, \"finish_reason\": \"stop\"}]}\r\r" +
	"data: [DONE]\n\n"

// However the engine's bytes are split into reads, the client gets them
// as they were, and the tap reads the same events.
func TestTapIsTheSameWhateverTheReads(t *testing.T) {
	whole, want := relayThroughTap(t, []byte(tapStream), nil)
	require.Equal(t, tapStream, string(whole))
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		var sizes []int
		for n := 0; n < len(tapStream); {
			s := 1 + rng.IntN(40)
			sizes, n = append(sizes, s), n+s
		}
		got, rec := relayThroughTap(t, []byte(tapStream), sizes)
		require.Equal(t, tapStream, string(got), "split %v", sizes)
		require.True(t, rec.SawDone)
		require.Equal(t, want.Choices[0].Text.String(), rec.Choices[0].Text.String())
	}
}

// An event that grows past maxStreamEvent without ending is relayed
// unread, byte for byte, and counted; the events after it are read again.
func TestOversizedEventIsRelayedAndCounted(t *testing.T) {
	huge := "data: {\"junk\": \"" + strings.Repeat("x", 2*maxStreamEvent) + "\"}\n\n"
	stream := []byte(huge + tapStream)
	sizes := make([]int, 0, len(stream)/4096+1)
	for range len(stream)/4096 + 1 {
		sizes = append(sizes, 4096)
	}
	got, rec := relayThroughTap(t, stream, sizes)
	assert.True(t, bytes.Equal(stream, got), "the client got every byte")
	assert.True(t, rec.EventCut)
	assert.True(t, rec.SawDone, "the stream is read again after the oversized event")
	assert.Equal(t, "Hi there", rec.Choices[0].Text.String())
}

// Streamed tool-call arguments stop growing at maxToolArguments.
func TestToolArgumentsAreBounded(t *testing.T) {
	rec := &Record{}
	apply := func(js string) {
		var c wire.Completion
		require.NoError(t, wire.Decode([]byte(js), &c))
		rec.applyChunk(&c, rec.Start)
	}
	apply(`{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": ""}}]}}]}`)
	piece := `{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "` + strings.Repeat("a", 64<<10) + `"}}]}}]}`
	for range 40 { // 2.5 MiB in all
		apply(piece)
	}
	tc := rec.Choices[0].ToolCalls[0]
	assert.LessOrEqual(t, len(tc.Arguments), maxToolArguments)
	assert.True(t, tc.ArgumentsCut)
}

// BenchmarkTapLargeEvent: one 512 KiB event arriving in 4 KiB reads; the
// tap scans each byte once (it used to re-parse the whole unfinished
// event at every read).
func BenchmarkTapLargeEvent(b *testing.B) {
	stream := []byte("data: {\"c\": \"" + strings.Repeat("y", 512<<10) + "\"}\n\ndata: [DONE]\n\n")
	sizes := make([]int, len(stream)/4096+1)
	for i := range sizes {
		sizes[i] = 4096
	}
	b.SetBytes(int64(len(stream)))
	for b.Loop() {
		rec := &Record{Route: RouteChat, Facts: span.Facts{Streaming: true}}
		tap := newStreamTap(context.Background(), &chunkedReader{b: stream, sizes: append([]int(nil), sizes...)}, rec, false)
		_, _ = io.Copy(io.Discard, tap)
	}
}

// FuzzTapRelaysEveryByte: whatever the engine sends, split however, the
// client gets exactly those bytes.
func FuzzTapRelaysEveryByte(f *testing.F) {
	f.Add([]byte(tapStream), uint64(1))
	f.Add([]byte("data: x\r\n\r\ndata: [DONE]\n\n"), uint64(7))
	f.Add([]byte("data: {\"choices\": [{\"delta\": {\"tool_calls\": [{\"index\": 0}]}}]}\n\r\n"), uint64(3))
	f.Fuzz(func(t *testing.T, stream []byte, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, 0))
		var sizes []int
		for n := 0; n < len(stream); {
			s := 1 + rng.IntN(64)
			sizes, n = append(sizes, s), n+s
		}
		got, _ := relayThroughTap(t, stream, sizes)
		if !bytes.Equal(stream, got) {
			t.Fatalf("relayed %q as %q", stream, got)
		}
	})
}

// A blank line right after an event is an (empty) event of its own: it
// goes to the client at once, not with the next event.
func TestLeadingLineEndIsNotHeldBack(t *testing.T) {
	tap := newStreamTap(context.Background(), io.NopCloser(strings.NewReader("")), &Record{Route: RouteChat, Facts: span.Facts{Streaming: true}}, false)
	tap.take([]byte("data: a\n\n"), time.Now())
	tap.take([]byte("\r\n"), time.Now())
	assert.Equal(t, "data: a\n\n\r\n", string(tap.out))
	assert.Empty(t, tap.pending)
}
