package proxy

import (
	"bytes"
	"context"
	"io"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/sse"
)

// twoPasses is what the stream tap does with a scored stream's event
// without stripRead, from a tap's decoder: the client's bytes from
// appendStripped, and the chunk decoded (streamTap.decode); decoded false
// when nothing reads it.
func twoPasses(ev sse.Event, d *chunkDecoder) (out []byte, c completionJSON, decoded bool) {
	t := &streamTap{chunks: *d}
	defer func() { *d = t.chunks }()
	var client []byte
	out, client, _ = appendStripped(nil, ev, &t.kept)
	decoded = t.decode(ev, client)
	return out, t.decoded, decoded
}

// onePass is stripRead's reading of the event, from a tap's decoder.
func onePass(ev sse.Event, d *chunkDecoder) (out []byte, c completionJSON, read bool) {
	t := &streamTap{chunks: *d}
	defer func() { *d = t.chunks }()
	if _, read = t.stripRead(ev); !read {
		return nil, t.decoded, false
	}
	return t.out, t.decoded, true
}

// dataEvent frames data as one SSE event.
func dataEvent(tb testing.TB, data []byte) sse.Event {
	tb.Helper()
	ev, _, ok := sse.Next(append(append([]byte("data: "), data...), "\n\n"...))
	require.True(tb, ok)
	return ev
}

// Every chunk with logprobs the simulated engine streams (mlx_lm's layout)
// is stripped and read in one pass, to the bytes and record of the two.
func TestStripReadTakesMlxLMScoredChunks(t *testing.T) {
	var d, twice chunkDecoder
	seen := map[string]bool{}
	for _, c := range simChunks(t, true) {
		if !bytes.Contains(c.data, logprobsKey) {
			continue
		}
		ev := dataEvent(t, c.data)
		wantOut, want, ok := twoPasses(ev, &twice)
		require.True(t, ok)
		out, got, read := onePass(ev, &d)
		require.True(t, read, "%s: not read in one pass: %s", c.request, c.data)
		require.Equal(t, string(wantOut), string(out), c.request)
		require.NotContains(t, string(out), "logprobs")
		require.Equal(t, want, got, c.request)
		for _, ch := range got.Choices {
			require.NotEmpty(t, ch.Logprobs)
			seen[choiceShape(ch)] = true
		}
		d.release()
		twice.release()
	}
	for _, shape := range []string{"text", "tool calls", "reasoning", "content"} {
		assert.True(t, seen[shape], "no scored chunk with %s", shape)
	}
}

// The tap reads a scored stream of mlx_lm's chunks without a chunk left
// unread, and the client gets none of the logprobs.
func TestScoredStreamIsReadInOnePass(t *testing.T) {
	var stream []byte
	for _, c := range simChunks(t, true) {
		stream = append(append(append(stream, "data: "...), c.data...), "\n\n"...)
	}
	rec := &Record{LogprobsSource: SourceStreamed}
	tap := newStreamTap(context.Background(), io.NopCloser(bytes.NewReader(stream)), rec, false)
	client, err := io.ReadAll(tap)
	require.NoError(t, err)
	assert.NotContains(t, string(client), "logprobs")
	assert.Zero(t, rec.ChunksUnread)
	assert.NotEmpty(t, rec.Choices)
}

// stripSeeds are chunks for the strip fuzz tests: the simulated engine's,
// with and without logprobs, the hand-made ones, and layouts the one pass
// leaves to the two.
func stripSeeds(tb testing.TB) [][]byte {
	var seeds [][]byte
	for _, c := range append(simChunks(tb, true), simChunks(tb, false)...) {
		seeds = append(seeds, c.data)
	}
	for _, s := range handChunks {
		seeds = append(seeds, []byte(s))
	}
	for _, s := range []string{
		`{"choices": [{"logprobs": {"content": []}}]}`,
		`{"choices": [{"index": 0, "logprobs": {}}]}`,
		`{"choices": [{"logprobs": { "content" : [ ] } , "index": 0}, {"index": 1, "logprobs": {"content": [{"id": 1, "logprob": -1e-05}]}}]}`,
		`{"choices": [{"index": 0, "logprobs": null, "delta": {}}]}`,
		`{"choices": [{"index": 0, "logprobs": {"content": [{"token": "a", "logprob": -Infinity}]}}]}`,
		`{"choices": [{"index": 0, "logprobs": {"content": [{"token": "a", "logprob": -1, "bytes": [97]}]}}]}`,
		`{"choices": [{"index": 0, "logprobs": {"token_logprobs": [-1], "top_logprobs": [{"a": -1}], "tokens": ["a"]}}]}`,
		`{"choices": [{"index": 0, "logprobs": {"content": [{"a": [}]}]}, "delta": {"content": "x"}}]}`,
		`{"choices": [{"index": 0, "logprobs": {"c\u006fntent": [0]}}]}`,
		`{"choices": [{"index": 0, "logprobs": {"content": [1, 2], "content": 3}}]}`,
		`{"choices": [{"index": 0, "logprobs": {"content": [0.5e+3, -0, 1E2, true, false, null, "\u00e9"]}}]}`,
		`{"choices": [{"logprobs": {"a": 1}, "logprobs": {"a": 2}}]}`,
		`{"logprobs": {"a": 1}, "choices": []}`,
		`{"choices": [{"index": 0, "delta": {"content": "logprobs"}}]}`,
	} {
		seeds = append(seeds, []byte(s))
	}
	return seeds
}

// Where the one pass reads a scored stream's event, the client gets the
// bytes and the record the chunk the two passes give (appendStripped,
// then decodeStripped or decoding), from a fresh decoder and from one that
// read other chunks before (the tap's, kept for a whole stream); and
// those are what decoding the engine's chunk gives, but for the logprobs
// being lent.
func FuzzOnePassStripMatchesTwoPasses(f *testing.F) {
	seeds := stripSeeds(f)
	for _, s := range seeds {
		f.Add(s)
	}
	var used, usedTwice chunkDecoder
	for _, s := range seeds {
		ev := dataEvent(f, s)
		onePass(ev, &used)
		used.release()
		twoPasses(ev, &usedTwice)
		usedTwice.release()
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, _, ok := sse.Next(append(append([]byte("data: "), data...), "\n\n"...))
		if !ok {
			return
		}
		for _, d := range []*[2]*chunkDecoder{{new(chunkDecoder), new(chunkDecoder)}, {&used, &usedTwice}} {
			out, got, read := onePass(ev, d[0])
			if !read {
				if !reflect.DeepEqual(got, completionJSON{}) {
					t.Fatalf("%q: not read, but the chunk was decoded: %+v", data, got)
				}
				continue
			}
			wantOut, want, ok := twoPasses(ev, d[1])
			if !ok {
				t.Fatalf("%q: read in one pass, not in two", data)
			}
			if !bytes.Equal(out, wantOut) {
				t.Fatalf("%q:\none pass  %q\ntwo passes %q", data, out, wantOut)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%q:\none pass   %+v\ntwo passes %+v", data, got, want)
			}
			var engine completionJSON
			if err := decodeCompletion(ev.Data, &engine); err != nil {
				t.Fatalf("%q: read in one pass, where decoding says %v", data, err)
			}
			engine.logprobsLent = len(engine.Choices) > 0 // lent as decodeStripped lends
			if !reflect.DeepEqual(got, engine) {
				t.Fatalf("%q:\none pass %+v\ndecoding %+v", data, got, engine)
			}
			d[0].release()
			d[1].release()
		}
	})
}
