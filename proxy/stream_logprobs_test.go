package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/confidence"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/jsonedit"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/span"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/sse"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/wire"
	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
)

// streamingLogprobs: the engine sends logprobs in stream chunks, as mlx_lm
// does not (mlxsim.Options.StreamLogprobs).
func streamingLogprobs(_ *Config, so *mlxsim.Options) { so.StreamLogprobs = true }

// A stream that did not ask for logprobs, from an engine that streams
// them, is scored from its chunks, and the client gets the bytes the
// engine sends when not asked: chat (content, tool calls, reasoning, the
// usage chunk) and text completions.
func TestStreamsAreScoredFromTheirChunks(t *testing.T) {
	r := newRig(t, streamingLogprobs)
	bodies := map[string]string{
		chatUsageBody: "/v1/chat/completions", toolStreamBody: "/v1/chat/completions",
		reasoningBody: "/v1/chat/completions", chatStreamBody: "/v1/chat/completions", textStreamBody: "/v1/completions",
	}
	for body, path := range bodies {
		want := r.do(r.direct, http.MethodPost, path, body)
		got := r.post(path, body)
		require.Equal(t, http.StatusOK, got.status)
		assert.Equal(t, normalize(want.body), normalize(got.body), body)
		assert.NotContains(t, string(got.body), "logprobs")
	}
	sc := r.scrape()
	assert.Equal(t, float64(len(bodies)), value(t, sc, "mlx_confidence_scored_total", "source", SourceStreamed))
	assert.Equal(t, 0.0, value(t, sc, "mlx_confidence_unscored_total", "source", SourceStreamed))
	c := value(t, sc, "mlx_token_confidence_mean")
	assert.True(t, c > 0 && c <= 1, "confidence %v", c)
	assert.GreaterOrEqual(t, value(t, sc, "mlx_output_perplexity"), 1.0)
	value(t, sc, "mlx_token_margin_mean") // top-N lists were asked for
}

// The engine's chunks with logprobs asked for are the chunks without them
// plus the logprobs member: what the proxy takes out is exactly what it
// made the engine add. (The sim's chunks are mlx_lm's own bytes, pyjson.)
func TestStreamedChunkWithLogprobsIsTheChunkWithoutThemPlusOneMember(t *testing.T) {
	r := &rig{t: t, client: testClient(t)}
	engine := func() string { // a fresh engine each: both in the same state
		so := simOptions()
		so.StreamLogprobs = true
		sim := mlxsim.New(so, io.Discard)
		srv := httptest.NewServer(sim.Handler())
		t.Cleanup(srv.Close)
		t.Cleanup(sim.Close)
		return srv.URL
	}
	asked := strings.Replace(toolStreamBody, `{`, `{"logprobs": true, "top_logprobs": 3, `, 1)
	with := sseEvents(r.do(engine(), http.MethodPost, "/v1/chat/completions", asked).body)
	without := sseEvents(r.do(engine(), http.MethodPost, "/v1/chat/completions", toolStreamBody).body)
	require.Equal(t, len(without), len(with))
	for i := range with {
		if !strings.Contains(with[i], "logprobs") {
			assert.Equal(t, normalize([]byte(without[i])), normalize([]byte(with[i])))
			continue
		}
		assert.Regexp(t, `"finish_reason": [^,]+, "logprobs": \{"content": \[\{"id": `, with[i], "generate_response's order")
		ev, _, ok := sse.Next([]byte(with[i]))
		require.True(t, ok)
		out, _, ok := appendStripped(nil, ev, &confidence.Kept{})
		require.True(t, ok)
		assert.Equal(t, normalize([]byte(without[i])), normalize(out))
	}
}

// A client that asked for logprobs gets the engine's stream untouched,
// logprobs included, and it is scored from them as source client.
func TestStreamedClientLogprobsPassThrough(t *testing.T) {
	r := newRig(t, streamingLogprobs)
	body := strings.Replace(chatUsageBody, `{`, `{"logprobs": true, "top_logprobs": 2, `, 1)
	want := r.do(r.direct, http.MethodPost, "/v1/chat/completions", body)
	got := r.post("/v1/chat/completions", body)
	assert.Equal(t, normalize(want.body), normalize(got.body))
	assert.Contains(t, string(got.body), `"logprobs": {"content": [`)
	sc := r.scrape()
	assert.Equal(t, 1.0, value(t, sc, "mlx_confidence_scored_total", "source", SourceClient))
	assert.Equal(t, 0.0, value(t, sc, "mlx_confidence_scored_total", "source", SourceStreamed))
}

// mlx_lm sends no logprobs in stream chunks: the first stream asks, is
// counted unscored, and the streams after it are not asked until the
// retry time; then one asks again. Every client gets the engine's bytes.
func TestStreamScoringPausesForAnEngineThatStreamsNone(t *testing.T) {
	r := newRig(t)
	for range 3 {
		want := r.do(r.direct, http.MethodPost, "/v1/chat/completions", chatUsageBody)
		got := r.post("/v1/chat/completions", chatUsageBody)
		assert.Equal(t, normalize(want.body), normalize(got.body))
	}
	sc := r.scrape()
	assert.Equal(t, 1.0, value(t, sc, "mlx_confidence_unscored_total", "source", SourceStreamed), "only the first stream asked")
	assert.Equal(t, 0.0, value(t, sc, "mlx_confidence_scored_total", "source", SourceStreamed))
	assert.False(t, r.proxy.streamLogprobs.due(time.Now()))
	assert.True(t, r.proxy.streamLogprobs.due(time.Now().Add(streamLogprobsRetry+time.Second)), "asked again later")

	r.proxy.streamLogprobs.silentUntil.Store(1) // the retry time has come
	r.post("/v1/chat/completions", chatUsageBody)
	assert.Equal(t, 2.0, value(t, r.scrape(), "mlx_confidence_unscored_total", "source", SourceStreamed))
}

// score_streams off: streams go upstream as the client sent them.
func TestStreamScoringOff(t *testing.T) {
	r := newRig(t, streamingLogprobs, withConfig(func(c *Config) { c.ScoreStreams = false }))
	got := r.post("/v1/chat/completions", chatUsageBody)
	assert.NotContains(t, string(got.body), "logprobs")
	sc := r.scrape()
	assert.Equal(t, 0.0, value(t, sc, "mlx_confidence_scored_total", "source", SourceStreamed))
	assert.Equal(t, 0.0, value(t, sc, "mlx_confidence_unscored_total", "source", SourceStreamed))
}

// An engine in OpenAI's style sends "logprobs": null unasked: the injected
// value becomes null. A chunk the proxy cannot read passes as it is, and
// the stream is not scored.
func TestStreamedLogprobsOfOpenAIStyleAndUnreadableChunks(t *testing.T) {
	chunk := `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":{"content":[{"token":"Hi","logprob":-0.5,"bytes":[72,105],"top_logprobs":[]}]},"finish_reason":null}]}` + "\n\n"
	unasked := `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}]}` + "\n\n"
	last := `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}` + "\n\n"
	broken := `data: {"id":"c","choices":[{"index":0,"logprobs":{"content":[` + "\n\n"
	var stream atomic.Value // the rig's probe reads it too, from its own goroutine
	stream.Store("")
	up := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(stream.Load().(string)))
	}
	r := rigWithUpstream(t, up, nil)
	body := `{"messages": [{"role": "user", "content": "x"}], "stream": true}`

	stream.Store(chunk + last + "data: [DONE]\n\n")
	got := r.post("/v1/chat/completions", body)
	assert.Equal(t, unasked+last+"data: [DONE]\n\n", string(got.body))
	assert.Equal(t, 1.0, value(t, r.scrape(), "mlx_confidence_scored_total", "source", SourceStreamed))

	stream.Store(chunk + broken + last + "data: [DONE]\n\n")
	got = r.post("/v1/chat/completions", body)
	assert.Equal(t, unasked+broken+last+"data: [DONE]\n\n", string(got.body), "the unreadable chunk as it came")
	sc := r.scrape()
	assert.Equal(t, 1.0, value(t, sc, "mlx_confidence_scored_total", "source", SourceStreamed))
	assert.Equal(t, 1.0, value(t, sc, "mlx_confidence_unscored_total", "source", SourceStreamed))
	assert.True(t, r.proxy.streamLogprobs.due(time.Now()), "an unread stream says nothing of the engine")
}

// An engine that frames its stream with a Content-Length: the chunks the
// client gets are shorter (their logprobs are taken out), so the engine's
// length is not passed on, and the client reads the whole stream.
func TestStrippedStreamHasNoContentLength(t *testing.T) {
	chunk := `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":{"content":[{"token":"Hi","logprob":-0.5,"bytes":[72,105],"top_logprobs":[]}]},"finish_reason":null}]}` + "\n\n"
	unasked := `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}]}` + "\n\n"
	last := `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}` + "\n\n"
	stream := chunk + last + "data: [DONE]\n\n"
	up := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Length", strconv.Itoa(len(stream)))
		_, _ = w.Write([]byte(stream))
	}
	r := rigWithUpstream(t, up, nil)
	// The client asks for usage itself: the proxy adds nothing else.
	got := r.post("/v1/chat/completions", `{"messages": [{"role": "user", "content": "x"}], "stream": true, "stream_options": {"include_usage": true}}`)
	require.Equal(t, http.StatusOK, got.status)
	assert.Equal(t, unasked+last+"data: [DONE]\n\n", string(got.body))
	assert.Empty(t, got.header.Get("Content-Length"))
	assert.Equal(t, 1.0, value(t, r.scrape(), "mlx_confidence_scored_total", "source", SourceStreamed))
}

// FuzzAppendStripped holds what the client may rely on for any event:
// nothing but the data's logprobs changes (the bytes around the data are
// the event's own); an event without "logprobs" passes byte for byte;
// stripping is idempotent; and a chunk that is JSON stays JSON, with
// every member the same but each choice's logprobs, which is gone or
// null.
func FuzzAppendStripped(f *testing.F) {
	f.Add([]byte(`data: {"id": "x", "choices": [{"index": 0, "finish_reason": null, "logprobs": {"content": [{"id": 1, "logprob": -0.5}]}, "delta": {"role": "assistant", "content": "Hi"}}]}` + "\n\n"))
	f.Add([]byte(`data: {"choices":[{"index":0,"delta":{},"logprobs":{"content":[{"token":"a","logprob":-Infinity,"bytes":[97]}]},"finish_reason":null}]}` + "\r\n\r\n"))
	f.Add([]byte("event: x\ndata: {\"choices\": [{\"logprobs\": null}]}\n: c\n\n"))
	f.Add([]byte("data: {\"choices\": [\ndata: {\"logprobs\": 1}]}\n\n"))
	f.Add([]byte(`data: {"choices": [{"logprobs": {"token_logprobs": [-1], "top_logprobs": [{"a": -1}], "tokens": ["a"]}}]}` + "\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		ev, n, ok := sse.Next(in)
		if !ok {
			return
		}
		in, after := in[:n], in[n:] // a lone CR ends an event only with a byte after it
		out, data, _ := appendStripped([]byte("prefix"), ev, &confidence.Kept{})
		if !bytes.HasPrefix(out, []byte("prefix")) {
			t.Fatal("what was there before is gone")
		}
		out = out[len("prefix"):]
		if !bytes.Contains(ev.Data, logprobsKey) && !bytes.Equal(out, in) {
			t.Fatalf("an event without logprobs changed: %q -> %q", in, out)
		}
		if ev.DataAt >= 0 {
			end := ev.DataAt + len(ev.Data)
			if !bytes.HasPrefix(out, in[:ev.DataAt]) || !bytes.HasSuffix(out, in[end:]) || len(out) < ev.DataAt+len(in)-end {
				t.Fatalf("bytes around the data changed: %q -> %q", in, out)
			}
			if !bytes.Equal(out[ev.DataAt:len(out)-(len(in)-end)], data) {
				t.Fatalf("data %q is not what was written: %q", data, out)
			}
		}
		ev2, n2, ok := sse.Next(append(bytes.Clone(out), after...))
		if !ok || n2 != len(out) {
			t.Fatalf("the stripped event is no event: %q", out)
		}
		again, _, _ := appendStripped(nil, ev2, &confidence.Kept{})
		if !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: %q -> %q -> %q", in, out, again)
		}
		checkOnlyLogprobsGone(t, ev.Data, data)
	})
}

// A stream's chunks with the logprobs the proxy asked for are read from
// what the client gets and the logprobs taken out (wire.DecodeStripped); the
// record is what decoding each engine chunk makes of it.
func FuzzScoredStreamRecordsAsDecoded(f *testing.F) {
	f.Add([]byte(benchLogprobsChunk + benchPlainChunk + "data: [DONE]\n\n"))
	for _, body := range recordAnswerCases() {
		f.Add([]byte("data: " + string(body) + "\n\n"))
	}
	f.Add([]byte("data: {\"choices\": [{\"logprobs\": {\"a\": [}]}, \"delta\": {\"content\": \"x\"}}]}\n\n"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		now := time.Unix(1, 0)
		got := &Record{Facts: span.Facts{LogprobsSource: SourceStreamed}}
		tap := newStreamTap(context.Background(), io.NopCloser(bytes.NewReader(stream)), got, false)
		tap.take(stream, now)
		want := &Record{Facts: span.Facts{LogprobsSource: SourceStreamed}}
		for rest := stream; ; {
			ev, n, ok := sse.Next(rest)
			if !ok {
				break
			}
			rest = rest[n:]
			var c wire.Completion
			if ev.HasData && !ev.IsDone() && wire.Decode(ev.Data, &c) == nil {
				want.applyChunk(&c, now)
			}
		}
		got.logprobsArena, got.ChunksUnread, got.SawDone = byteArena{}, 0, false
		require.Equal(t, want, got)
	})
}

// checkOnlyLogprobsGone: when before is a JSON object, after is too, and
// equal to it but for each choice's logprobs, which after has not, or has
// as null (or as the pre-0.30.6 layout with an empty top_logprobs).
func checkOnlyLogprobsGone(t *testing.T, before, after []byte) {
	t.Helper()
	var b, a map[string]any
	fixed, _ := jsonedit.NullPythonLiterals(before)
	if json.Unmarshal(fixed, &b) != nil {
		return
	}
	fixed, _ = jsonedit.NullPythonLiterals(after)
	if err := json.Unmarshal(fixed, &a); err != nil {
		t.Fatalf("JSON %q became %q: %v", before, after, err)
	}
	for _, m := range []map[string]any{a, b} {
		choices, _ := m["choices"].([]any)
		for _, c := range choices {
			if o, ok := c.(map[string]any); ok {
				delete(o, "logprobs")
			}
		}
	}
	ab, _ := json.Marshal(a)
	bb, _ := json.Marshal(b)
	if !bytes.Equal(ab, bb) {
		t.Fatalf("more than the logprobs changed: %s -> %s", bb, ab)
	}
}

// The live stream's deltas are the chunks the client got, byte for byte:
// without the logprobs the proxy asked for.
func TestLiveStreamOfAScoredStreamHasNoInjectedLogprobs(t *testing.T) {
	r := newRig(t, streamingLogprobs)
	sink := &liveSink{}
	detachOnCleanup(t, r.proxy.AttachLive(sink.consume))
	resp := r.do(r.url, http.MethodPost, "/v1/chat/completions", reasoningBody, SessionHeader, "scored")
	require.Equal(t, http.StatusOK, resp.status)
	var data []string
	for _, e := range sseEvents(resp.body) {
		if d, ok := strings.CutPrefix(e, "data: {"); ok {
			data = append(data, "{"+strings.TrimSuffix(d, "\n\n"))
		}
	}
	recs := sink.of(t, "scored")
	var deltas []string
	for _, rec := range recs {
		if rec.Event == LiveDelta {
			deltas = append(deltas, string(rec.Body))
		}
	}
	assert.Equal(t, data, deltas)
	assert.NotContains(t, strings.Join(deltas, ""), "logprobs")
	assert.Equal(t, 1.0, value(t, r.scrape(), "mlx_confidence_scored_total", "source", SourceStreamed))
}
