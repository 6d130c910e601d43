package proxy

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/confidence"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/sse"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/wire"
	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
)

// simChunk is one chunk's data as the simulated engine wrote it, and the
// request it answered.
type simChunk struct {
	request string
	data    []byte
}

// simChunks are the chunks mlx_lm writes for every kind of stream: chat,
// reasoning, tool calls, text completion, the usage chunk (chat and text),
// and, from an engine that streams them (StreamLogprobs), chunks with
// logprobs.
func simChunks(tb testing.TB, streamLogprobs bool) []simChunk {
	tb.Helper()
	so := simOptions()
	so.StreamLogprobs = streamLogprobs
	sim := mlxsim.New(so, io.Discard)
	srv := httptest.NewServer(sim.Handler())
	defer sim.Close()
	defer srv.Close()
	usage := `, "stream_options": {"include_usage": true}}`
	requests := []struct{ path, body string }{
		{"/v1/chat/completions", chatStreamBody},
		{"/v1/chat/completions", chatUsageBody},
		{"/v1/chat/completions", reasoningBody},
		{"/v1/chat/completions", strings.TrimSuffix(toolStreamBody, "}") + usage},
		{"/v1/completions", strings.TrimSuffix(textStreamBody, "}") + usage},
	}
	if streamLogprobs {
		for i, r := range requests {
			requests[i].body = strings.Replace(r.body, `{`, `{"logprobs": true, "top_logprobs": 3, `, 1)
		}
	}
	var out []simChunk
	for _, r := range requests {
		res, err := http.Post(srv.URL+r.path, "application/json", strings.NewReader(r.body))
		if err != nil {
			tb.Fatal(err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK {
			tb.Fatal(res.StatusCode, err)
		}
		for rest := body; ; {
			ev, n, ok := sse.Next(rest)
			if !ok {
				break
			}
			rest = rest[n:]
			if ev.HasData && !ev.IsDone() {
				out = append(out, simChunk{r.body, bytes.Clone(ev.Data)})
			}
		}
	}
	return out
}

// handChunks are chunks in mlx_lm's layout with what the simulated
// model's vocabulary may not make: escapes of every kind, a character past
// U+FFFF as json.dumps writes it (a surrogate pair), and a tool call's
// arguments with raw UTF-8 (dumped with ensure_ascii=False).
var handChunks = []string{
	`{"id": "chatcmpl-1", "system_fingerprint": "fp", "object": "chat.completion.chunk", "model": "default_model", "created": 1796530624, "choices": [{"index": 0, "finish_reason": null, "delta": {"role": "assistant", "content": "caf\u00e9 \ud83d\ude00 \"q\" \\ \/ \b\f\n\r\t \u4e2d"}}]}`,
	`{"id": "chatcmpl-1", "system_fingerprint": "fp", "object": "chat.completion.chunk", "model": "default_model", "created": 1796530624, "choices": [{"index": 0, "finish_reason": "length", "delta": {"role": "assistant", "reasoning": "\u00e9"}}]}`,
	`{"id": "chatcmpl-1", "system_fingerprint": "fp", "object": "chat.completion.chunk", "model": "default_model", "created": 1796530624, "choices": [{"index": 0, "finish_reason": null, "delta": {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "{\"city\": \"Zürich\"}"}, "type": "function", "id": "c1", "index": 0}]}}]}`,
	`{"id": "chatcmpl-1", "system_fingerprint": "fp", "object": "chat.completion.chunk", "model": "default_model", "created": 1796530624, "choices": [{"index": 0, "finish_reason": "tool_calls", "delta": {"role": "assistant"}}]}`,
	`{"id": "cmpl-1", "system_fingerprint": "fp", "object": "text_completion", "model": "m", "created": 0, "choices": [{"index": 0, "finish_reason": "stop", "text": ""}]}`,
	`{"id": "chatcmpl-1", "system_fingerprint": "fp", "object": "chat.completion", "model": "default_model", "created": 1796530624, "choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17, "prompt_tokens_details": {"cached_tokens": 8}}}`,
	`{"id":"a","choices":[{"index":1,"delta":{"content":null,"reasoning":null,"tool_calls":null}},{"index":2,"delta":null,"text":null}],"usage":null}`,
	`{"usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3, "prompt_tokens_details": null, "completion_tokens_details": {"reasoning_tokens": null}}, "choices": null}`,
	`{"choices": [{"delta": {"tool_calls": []}}]}`,
}

// Every chunk mlx_lm writes, but those with logprobs (which mlx_lm never
// streams), takes the fast path and decodes as wire.Decode does: a
// change that sends one back to goccy fails here.
func TestChunkDecoderReadsMlxLMChunks(t *testing.T) {
	seen := map[string]bool{}
	var d wire.ChunkDecoder
	check := func(name string, data []byte) {
		t.Helper()
		var want, got wire.Completion
		require.NoError(t, wire.Decode(data, &want), name)
		require.True(t, d.Decode(data, &got), "%s: not read by the fast path: %s", name, data)
		require.Equal(t, want, got, name)
		for _, ch := range got.Choices {
			seen[choiceShape(ch)] = true
			if ch.FinishReason != nil {
				seen["finish "+*ch.FinishReason] = true
			}
		}
		if got.IsUsageChunk() {
			seen["usage"] = true
		}
	}
	for _, c := range simChunks(t, false) {
		check(c.request, c.data)
	}
	for _, s := range handChunks {
		check(s, []byte(s))
	}
	for _, shape := range []string{"text", "tool calls", "reasoning", "content", "usage", "finish stop", "finish length", "finish tool_calls"} {
		assert.True(t, seen[shape], "no chunk with %s", shape)
	}
}

// choiceShape names what a chunk's choice carries (text, tool calls,
// reasoning, content; "" for none of them), for the tests that want every
// kind read.
func choiceShape(ch wire.Choice) string {
	switch {
	case ch.Text != nil:
		return "text"
	case ch.Delta != nil && len(ch.Delta.ToolCalls) > 0:
		return "tool calls"
	case ch.Delta != nil && ch.Delta.Reasoning != nil:
		return "reasoning"
	case ch.Delta != nil && ch.Delta.Content != nil:
		return "content"
	}
	return ""
}

// A chunk with logprobs is wire.Decode's; with them taken out (a
// stream the proxy scores), the client's chunk takes the fast path.
func TestChunkDecoderLeavesLogprobsToGoccy(t *testing.T) {
	var d wire.ChunkDecoder
	n := 0
	for _, c := range simChunks(t, true) {
		if !bytes.Contains(c.data, logprobsKey) {
			continue
		}
		n++
		var got wire.Completion
		assert.False(t, d.Decode(c.data, &got))
		assert.Equal(t, wire.Completion{}, got, "left as it was")

		frame := append(append([]byte("data: "), c.data...), "\n\n"...)
		ev, _, ok := sse.Next(frame)
		require.True(t, ok)
		var kept confidence.Kept
		_, client, ok := appendStripped(nil, ev, &kept)
		require.True(t, ok)
		var want wire.Completion
		require.NoError(t, wire.Decode(c.data, &want))
		require.True(t, d.Decode(client, &got), "%s", client)
		got = wire.Completion{}
		require.True(t, wire.DecodeStripped(&got, c.data, client, kept, &d))
		assert.Equal(t, want, got)
	}
	assert.NotZero(t, n)
}

// What the record keeps of a chunk is its own: the bytes the decoder read
// are the stream tap's, reused for the next read.
func TestChunkDecoderRecordKeepsNoneOfTheBytes(t *testing.T) {
	var d wire.ChunkDecoder
	var mine, theirs Record
	now := time.Now()
	for _, s := range handChunks {
		b := []byte(s)
		var c, want wire.Completion
		require.True(t, d.Decode(b, &c))
		mine.applyChunk(&c, now)
		require.NoError(t, wire.Decode(b, &want))
		theirs.applyChunk(&want, now)
		d.Release()
		for i := range b {
			b[i] = 'x'
		}
	}
	assert.Equal(t, theirs.ResponseID, mine.ResponseID)
	assert.Equal(t, theirs.ResponseModel, mine.ResponseModel)
	require.Equal(t, len(theirs.Choices), len(mine.Choices))
	for i := range mine.Choices {
		assert.Equal(t, theirs.Choices[i].Text.String(), mine.Choices[i].Text.String())
		assert.Equal(t, theirs.Choices[i].Reasoning.String(), mine.Choices[i].Reasoning.String())
		assert.Equal(t, theirs.Choices[i].FinishReason, mine.Choices[i].FinishReason)
		assert.Equal(t, theirs.Choices[i].ToolCalls, mine.Choices[i].ToolCalls)
	}
	assert.Equal(t, theirs.Usage, mine.Usage)
}

// Where the fast path reads a chunk it reads it as wire.Decode does,
// from a fresh decoder and from one that read other chunks before (the
// tap's, kept for a whole stream); where it does not, c is left as it was.
func FuzzChunkDecoderMatchesDecodeCompletion(f *testing.F) {
	var seeds [][]byte
	for _, c := range append(simChunks(f, false), simChunks(f, true)...) {
		seeds = append(seeds, c.data)
	}
	for _, s := range handChunks {
		seeds = append(seeds, []byte(s))
	}
	for _, s := range seeds {
		f.Add(s)
	}
	// Not `{"id": "\ude00\ud83d"}`: goccy's unescapeString does pointer
	// arithmetic past its buffer on it, which -race (checkptr) stops.
	for _, s := range []string{
		`{"id": "a", "id": "b"}`, `{"ID": "a"}`, `{"choices": [{"index": 1.0}]}`, `{"choices": [{"index": -1}]}`,
		`{"created": 01}`, `{"created": 1e3}`, `{"id": "\ud83d"}`, `{"id": "x\ude00"}`, `{"id": "\ud83d\u0041"}`, `{"id": "\x88"}`,
		`{"choices": [{"delta": {"content": NaN}}]}`, `{"id": "a"} x`, `{"id": "a"}` + "\x00", ` {"id" : "a" } `,
		`{"choices": [{"logprobs": null}]}`, `{"usage": {"prompt_tokens": 99999999999999999999}}`, `{"choices": [null]}`,
	} {
		f.Add([]byte(s))
	}
	var used wire.ChunkDecoder
	for _, s := range seeds {
		var c wire.Completion
		used.Decode(s, &c)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want wire.Completion
		wantErr := wire.Decode(b, &want)
		for _, d := range []*wire.ChunkDecoder{new(wire.ChunkDecoder), &used} {
			var got wire.Completion
			if !d.Decode(b, &got) {
				if !reflect.DeepEqual(got, wire.Completion{}) {
					t.Fatalf("%q: not read, but c changed: %+v", b, got)
				}
				continue
			}
			if wantErr != nil {
				t.Fatalf("%q: read, where wire.Decode says %v", b, wantErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%q:\nfast             %+v\ndecodeCompletion %+v", b, got, want)
			}
		}
	})
}

// BenchmarkChunkDecode is the decoding of mlx_lm's chunk alone, by each
// decoder.
func BenchmarkChunkDecode(b *testing.B) {
	data := []byte(strings.TrimSuffix(strings.TrimPrefix(benchPlainChunk, "data: "), "\n\n"))
	b.Run("fast", func(b *testing.B) {
		var d wire.ChunkDecoder
		b.ReportAllocs()
		for b.Loop() {
			var c wire.Completion
			if !d.Decode(data, &c) {
				b.Fatal("not read")
			}
		}
	})
	b.Run("goccy", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var c wire.Completion
			if wire.Decode(data, &c) != nil {
				b.Fatal("not read")
			}
		}
	})
}
