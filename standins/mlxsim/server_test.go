package mlxsim

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim/pyjson"
)

var completionHeaderNames = []string{"Server", "Date", "Content-type", "Access-Control-Allow-Origin", "Access-Control-Allow-Methods", "Access-Control-Allow-Headers"}

func TestHealthModelsAndUnknownPaths(t *testing.T) {
	ts := newTestServer(t, Options{Model: "mlx-community/Qwen3-4B-4bit"})

	r := ts.get(t, "/health")
	if r.statusLine != "HTTP/1.0 200 OK" || r.body != `{"status": "ok"}` {
		t.Fatalf("health: %q", r.raw)
	}
	if !slices.Equal(r.headerNames(), completionHeaderNames) {
		t.Errorf("headers %v, want %v", r.headerNames(), completionHeaderNames)
	}
	if v, _ := r.header("Server"); v != "BaseHTTP/0.6 Python/3.12.11" {
		t.Errorf("Server header %q", v)
	}
	if v, _ := r.header("Date"); !regexp.MustCompile(`^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$`).MatchString(v) {
		t.Errorf("Date header %q", v)
	}
	for _, h := range []string{"Access-Control-Allow-Origin", "Access-Control-Allow-Methods", "Access-Control-Allow-Headers"} {
		if v, _ := r.header(h); v != "*" {
			t.Errorf("%s = %q", h, v)
		}
	}

	r = ts.get(t, "/v1/models")
	if !regexp.MustCompile(`^\{"object": "list", "data": \[\{"id": "mlx-community/Qwen3-4B-4bit", "object": "model", "created": \d+\}\]\}$`).MatchString(r.body) {
		t.Errorf("models: %s", r.body)
	}
	if r = ts.get(t, "/v1/models/mlx-community/Qwen3-4B-4bit"); !strings.Contains(r.body, `"id": "mlx-community/Qwen3-4B-4bit"`) {
		t.Errorf("filtered models: %s", r.body)
	}
	if r = ts.get(t, "/v1/models/other/repo"); r.body != `{"object": "list", "data": []}` {
		t.Errorf("filter that matches nothing: %s", r.body)
	}

	for _, req := range []string{
		"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET /health?x=1 HTTP/1.1\r\nHost: x\r\n\r\n",
		postReq("/v1/embeddings", "{}"),
		postReq("/v1/chat/completions?x=1", "{}"),
	} {
		r = ts.send(t, req)
		if r.statusLine != "HTTP/1.0 404 Not Found" || r.body != "Not Found" {
			t.Errorf("%q: %q", req, r.raw)
		}
		if v, _ := r.header("Content-type"); v != "application/json" {
			t.Errorf("404 Content-type %q", v)
		}
	}

	r = ts.send(t, "OPTIONS /v1/chat/completions HTTP/1.1\r\nHost: x\r\n\r\n")
	if r.statusLine != "HTTP/1.0 204 No Content" || r.body != "" || !slices.Equal(r.headerNames(), completionHeaderNames) {
		t.Errorf("OPTIONS: %q", r.raw)
	}

	r = ts.send(t, "DELETE /health HTTP/1.1\r\nHost: x\r\n\r\n")
	if r.statusLine != "HTTP/1.0 501 Unsupported method ('DELETE')" || !strings.Contains(r.body, "<p>Message: Unsupported method ('DELETE').</p>") {
		t.Errorf("DELETE: %q", r.raw)
	}
}

func TestRequestErrors(t *testing.T) {
	ts := newTestServer(t, Options{})

	r := ts.send(t, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n")
	if r.statusLine != "HTTP/1.0 411 Length Required" || r.body != `{"error": "Content-Length header is required"}` {
		t.Errorf("411: %q", r.raw)
	}

	cases := map[string]string{
		"":                  `{"error": "Invalid JSON in request body: Expecting value: line 1 column 1 (char 0)"}`,
		`{"messages": [}`:   `{"error": "Invalid JSON in request body: Expecting value: line 1 column 15 (char 14)"}`,
		"{\n \"a\" 1}":      `{"error": "Invalid JSON in request body: Expecting ':' delimiter: line 2 column 6 (char 7)"}`,
		`{"a": 1} x`:        `{"error": "Invalid JSON in request body: Extra data: line 1 column 10 (char 9)"}`,
		`{'a': 1}`:          `{"error": "Invalid JSON in request body: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"}`,
		`["messages"]`:      `{"error": "Request should be a JSON dictionary"}`,
		`"just a string"`:   `{"error": "Request should be a JSON dictionary"}`,
		`{"é": "\u00e9"} ]`: `{"error": "Invalid JSON in request body: Extra data: line 1 column 17 (char 16)"}`,
	}
	for body, want := range cases {
		r := ts.chat(t, body)
		if r.statusLine != "HTTP/1.0 400 Bad Request" || r.body != want {
			t.Errorf("body %q: got %q, want %q", body, r.body, want)
		}
	}
	log := ts.log.String()
	if !strings.Contains(log, " - ERROR - JSONDecodeError: Expecting value: line 1 column 15 (char 14) - Raw body: {\"messages\": [}\n") {
		t.Errorf("missing JSONDecodeError log line:\n%s", log)
	}
	if !strings.Contains(log, " - ERROR - Invalid Request Body: [\n\t\"messages\"\n]\n") {
		t.Errorf("missing Invalid Request Body log:\n%s", log)
	}
}

func TestValidationFailureDropsConnection(t *testing.T) {
	ts := newTestServer(t, Options{})
	cases := map[string]string{
		`{"messages": [], "logprobs": 1}`:                 "ValueError: logprobs must be of type bool",
		`{"messages": [], "top_logprobs": 12}`:            "ValueError: top_logprobs must be at most 11",
		`{"messages": [], "top_logprobs": -2}`:            "ValueError: top_logprobs must be at least 0",
		`{"messages": [], "top_logprobs": 2.0}`:           "ValueError: top_logprobs must be of type int",
		`{"messages": [], "temperature": -0.5}`:           "ValueError: temperature must be at least 0",
		`{"messages": [], "temperature": "hot"}`:          "ValueError: temperature must be of type ('float', 'int')",
		`{"messages": [], "max_tokens": 10.0}`:            "ValueError: max_tokens must be of type int",
		`{"messages": [], "stream": null}`:                "ValueError: stream must be of type bool",
		`{"messages": [], "model": 5}`:                    "ValueError: requested_model must be of type str",
		`{"messages": [], "xtc_probability": 0}`:          "ValueError: xtc_probability must be of type float",
		`{"messages": [], "logit_bias": {"x": 1}}`:        "ValueError: logit_bias must be a dict of int to float",
		`{"messages": [], "logit_bias": {"1": [1]}}`:      "TypeError: float() argument must be a string or a real number, not 'list'",
		`{"stream": true}`:                                "AssertionError: Request did not contain messages",
		`{"messages": [{"role": "user", "content": 1}]}x`: "", // invalid JSON: not a drop
	}
	for body, want := range cases {
		before := len(ts.log.String())
		r := ts.chat(t, body)
		if want == "" {
			if r.status != 400 {
				t.Errorf("%s: want a 400, got %q", body, r.raw)
			}
			continue
		}
		if r.raw != "" {
			t.Errorf("%s: expected the connection to close without a response, got %q", body, r.raw)
		}
		log := ts.log.String()[before:]
		if !strings.Contains(log, "\n"+want+"\n----------------------------------------\n") {
			t.Errorf("%s: traceback does not end with %q:\n%s", body, want, log)
		}
		if !strings.HasPrefix(log, "----------------------------------------\nException occurred during processing of request from ('127.0.0.1', ") ||
			!strings.Contains(log, "\nTraceback (most recent call last):\n") {
			t.Errorf("%s: not a socketserver traceback:\n%s", body, log)
		}
	}
	// The text endpoint asserts a prompt; bodies that are not UTF-8 never parse.
	before := len(ts.log.String())
	if r := ts.post(t, "/v1/completions", `{"max_tokens": 3}`); r.raw != "" {
		t.Errorf("completions without prompt answered %q", r.raw)
	}
	if r := ts.post(t, "/v1/chat/completions", "{\"a\": \"\xff\"}"); r.raw != "" {
		t.Errorf("non-UTF-8 body answered %q", r.raw)
	}
	log := ts.log.String()[before:]
	for _, want := range []string{"AssertionError: Request did not contain a prompt\n", "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 7: invalid start byte\n"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

var (
	reChatBody = regexp.MustCompile(`^\{"id": "chatcmpl-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", "system_fingerprint": "0\.31\.3-0\.32\.1-macOS-15\.6\.1-arm64-arm-64bit-applegpu_g15s", "object": "chat\.completion", "model": "default_model", "created": \d+, "choices": \[\{"index": 0, "finish_reason": "(stop|length)", "message": \{"role": "assistant", "content": "[^"]+"\}\}\], "usage": \{"prompt_tokens": (\d+), "completion_tokens": (\d+), "total_tokens": (\d+), "prompt_tokens_details": \{"cached_tokens": (\d+)\}\}\}$`)
	reChunk    = regexp.MustCompile(`^\{"id": "(chatcmpl-[0-9a-f-]{36})", "system_fingerprint": "[^"]+", "object": "chat\.completion\.chunk", "model": "default_model", "created": \d+, "choices": \[\{"index": 0, "finish_reason": null, "delta": \{"role": "assistant", "content": "[^"]+"\}\}\]\}$`)
	reFinal    = regexp.MustCompile(`^\{"id": "(chatcmpl-[0-9a-f-]{36})", "system_fingerprint": "[^"]+", "object": "chat\.completion\.chunk", "model": "default_model", "created": \d+, "choices": \[\{"index": 0, "finish_reason": "(stop|length)", "delta": \{"role": "assistant"\}\}\]\}$`)
	reUsage    = regexp.MustCompile(`^\{"id": "(chatcmpl-[0-9a-f-]{36})", "system_fingerprint": "[^"]+", "object": "chat\.completion", "model": "default_model", "created": \d+, "choices": \[\], "usage": \{"prompt_tokens": \d+, "completion_tokens": \d+, "total_tokens": \d+, "prompt_tokens_details": \{"cached_tokens": \d+\}\}\}$`)
)

func TestNonStreamingBodyIsPythonJSON(t *testing.T) {
	ts := newTestServer(t, Options{})
	r := ts.chat(t, userHi)
	if r.statusLine != "HTTP/1.0 200 OK" {
		t.Fatalf("status %q", r.statusLine)
	}
	m := reChatBody.FindStringSubmatch(r.body)
	if m == nil {
		t.Fatalf("body does not have mlx_lm's shape, key order or separators:\n%s", r.body)
	}
	var p, c, total, cached int
	fmt.Sscan(m[2]+" "+m[3]+" "+m[4]+" "+m[5], &p, &c, &total, &cached)
	if p+c != total || c < 16 || p < 10 {
		t.Errorf("usage %d + %d = %d", p, c, total)
	}
	want := append(slices.Clone(completionHeaderNames), "Content-Length")
	if !slices.Equal(r.headerNames(), want) {
		t.Errorf("headers %v, want %v", r.headerNames(), want)
	}
	if v, _ := r.header("Content-Length"); v != fmt.Sprint(len(r.body)) {
		t.Errorf("Content-Length %s for %d bytes", v, len(r.body))
	}
	// Asking again hits the prompt cache: the prompt minus its last token,
	// which the batch generator stores as a segment of its own (reference
	// D9a), is reused.
	d := mustDict(t, ts.chat(t, userHi).body)
	if got := num(path(d, "usage", "prompt_tokens_details", "cached_tokens")); got != int64(p-1) {
		t.Errorf("cached_tokens on a repeated prompt = %d, want %d", got, p-1)
	}
	// With a trimmable (pure attention) cache the longer entry is trimmed
	// to all but the last token.
	tt := newTestServer(t, Options{TrimmableCache: true})
	tt.chat(t, userHi)
	d = mustDict(t, tt.chat(t, userHi).body)
	if got := num(path(d, "usage", "prompt_tokens_details", "cached_tokens")); got != int64(p-1) {
		t.Errorf("trimmable: cached_tokens on a repeated prompt = %d, want %d", got, p-1)
	}
}

// An empty message: mlx-lm 0.31.3 leaves "content" out (server.py
// v0.31.3, generate_response: `if text:`), 0.32.0 sends null (ff0c1c6d,
// #1739).
func TestEmptyContentByMLXLMVersionAndASCIIEscaping(t *testing.T) {
	for _, v := range []string{"0.31.3", "0.32.0"} {
		ts := newTestServer(t, Options{MLXLMVersion: v})
		// A stop word that is the first token empties the content.
		first := str(path(mustDict(t, ts.chat(t, userHi).body), "choices", 0, "message", "content"))
		firstTok := tokenize(first)[0].text
		d := mustDict(t, ts.chat(t, `{"messages": [{"role": "user", "content": "Hello, how are you today?"}], "stop": `+pyjson.Dumps(firstTok)+`}`).body)
		msg := path(d, "choices", 0, "message").(*pyjson.Dict)
		c, present := msg.Get("content")
		if v == "0.32.0" && (!present || c != nil) {
			t.Errorf("%s: content should be null, got %v (present %v)", v, c, present)
		}
		if v == "0.31.3" && present {
			t.Errorf("%s: content should be left out, got %v", v, c)
		}
		if str(path(d, "choices", 0, "finish_reason")) != "stop" {
			t.Errorf("finish_reason %v", path(d, "choices", 0, "finish_reason"))
		}
	}
	// Non-ASCII in the echoed model name is \u-escaped, astral as a pair.
	ts2 := newTestServer(t, Options{Model: "modèle-😀", ServedModels: []string{"modèle-😀"}})
	r := ts2.chat(t, `{"model": "modèle-😀", "messages": [{"role": "user", "content": "x"}], "max_tokens": 2}`)
	if !strings.Contains(r.body, `"model": "mod\u00e8le-\ud83d\ude00"`) {
		t.Errorf("model not ensure_ascii-escaped: %s", r.body)
	}
}

func TestStreamingShape(t *testing.T) {
	ts := newTestServer(t, Options{})
	body := `{"messages": [{"role": "user", "content": "Hello, how are you today?"}], "stream": true, "stream_options": {"include_usage": true}}`
	r := ts.chat(t, body)
	if r.statusLine != "HTTP/1.0 200 OK" {
		t.Fatalf("status %q", r.raw)
	}
	wantHdr := []string{"Server", "Date", "Content-type", "Cache-Control", "Access-Control-Allow-Origin", "Access-Control-Allow-Methods", "Access-Control-Allow-Headers"}
	if !slices.Equal(r.headerNames(), wantHdr) {
		t.Errorf("headers %v, want %v", r.headerNames(), wantHdr)
	}
	if v, _ := r.header("Content-type"); v != "text/event-stream" {
		t.Errorf("Content-type %q", v)
	}
	events := sseEvents(r.body)
	var keepalives, chunks []string
	for _, ev := range events {
		if strings.HasPrefix(ev, ": keepalive ") {
			if len(chunks) > 0 {
				t.Errorf("keepalive after data: %q", ev)
			}
			keepalives = append(keepalives, ev)
		} else {
			chunks = append(chunks, strings.TrimPrefix(ev, "data: "))
		}
	}
	if len(keepalives) < 1 || !regexp.MustCompile(`^: keepalive \d+/\d+$`).MatchString(keepalives[0]) || strings.HasPrefix(keepalives[0], ": keepalive 0/") {
		t.Errorf("keepalives %q", keepalives)
	}
	n := len(chunks)
	if n < 5 || chunks[n-1] != "[DONE]" {
		t.Fatalf("stream does not end with [DONE]: %q", r.body)
	}
	id := ""
	var content strings.Builder
	for i, c := range chunks[:n-3] {
		m := reChunk.FindStringSubmatch(c)
		if m == nil {
			t.Fatalf("chunk %d has the wrong shape:\n%s", i, c)
		}
		if id == "" {
			id = m[1]
		} else if id != m[1] {
			t.Errorf("id changed: %s vs %s", id, m[1])
		}
		content.WriteString(str(path(mustDict(t, c), "choices", 0, "delta", "content")))
	}
	if m := reFinal.FindStringSubmatch(chunks[n-3]); m == nil || m[1] != id {
		t.Errorf("final chunk:\n%s", chunks[n-3])
	}
	if m := reUsage.FindStringSubmatch(chunks[n-2]); m == nil || m[1] != id {
		t.Errorf("usage chunk:\n%s", chunks[n-2])
	}
	// Same prompt, not streamed: same text, same token counts.
	nd := mustDict(t, ts.chat(t, userHi).body)
	if got := str(path(nd, "choices", 0, "message", "content")); got != content.String() {
		t.Errorf("streamed %q, non-streamed %q", content.String(), got)
	}
	ud := mustDict(t, chunks[n-2])
	if num(path(ud, "usage", "completion_tokens")) != num(path(nd, "usage", "completion_tokens")) {
		t.Errorf("completion_tokens differ: %v vs %v", path(ud, "usage"), path(nd, "usage"))
	}

	// Without stream_options: no usage chunk.
	r = ts.chat(t, `{"messages": [{"role": "user", "content": "Hello, how are you today?"}], "stream": true}`)
	ds, done := dataEvents(t, r.body)
	if !done || str(ds[len(ds)-1].GetDefault("object", "")) != "chat.completion.chunk" || path(ds[len(ds)-1], "choices", 0, "finish_reason") == nil {
		t.Errorf("stream without usage ends wrong:\n%s", r.body)
	}
	for _, d := range ds {
		if _, ok := d.Get("usage"); ok {
			t.Errorf("usage without include_usage: %v", pyjson.Dumps(d))
		}
		if _, ok := path(d, "choices", 0).(*pyjson.Dict).Get("logprobs"); ok {
			t.Errorf("logprobs in a streamed chunk")
		}
	}
	// include_usage false: no usage chunk, still [DONE].
	r = ts.chat(t, `{"messages": [{"role": "user", "content": "Hi"}], "stream": true, "stream_options": {"include_usage": false}, "logprobs": true}`)
	if ds, done := dataEvents(t, r.body); !done || len(ds[len(ds)-1].Keys()) != 6 {
		t.Errorf("include_usage false:\n%s", r.body)
	}
}

// The batched path (no seed) reports after each chunk, no 0/T, and its
// chunks stop at segment ends (mlx_lm d78bf58e generate.py,
// BatchGenerator._next); a seeded request
// (_serve_single, generate_step) reports 0/T first.
func TestKeepaliveCommentsFollowPrefillChunks(t *testing.T) {
	for _, seed := range []string{"", `, "seed": 3`} {
		testKeepalives(t, seed)
	}
}

func testKeepalives(t *testing.T, seed string) {
	ts := newTestServer(t, Options{PrefillStepSize: 16})
	long := strings.Repeat("word ", 60)
	before := len(ts.log.String())
	r := ts.chat(t, `{"messages": [{"role": "user", "content": "`+long+`"}], "stream": true, "max_tokens": 2, "stream_options": {"include_usage": true}`+seed+`}`)
	ds, _ := dataEvents(t, r.body)
	total := int(num(path(ds[len(ds)-1], "usage", "prompt_tokens")))
	var want []string
	if seed != "" {
		want = append(want, fmt.Sprintf(": keepalive 0/%d", total))
	}
	for p := 16; p < total-1; p += 16 {
		want = append(want, fmt.Sprintf(": keepalive %d/%d", p, total))
	}
	want = append(want, fmt.Sprintf(": keepalive %d/%d", total-1, total), fmt.Sprintf(": keepalive %d/%d", total, total))
	var got []string
	for _, ev := range sseEvents(r.body) {
		if strings.HasPrefix(ev, ":") {
			got = append(got, ev)
		}
	}
	if seed == "" {
		// Batched: the chunks also stop at the user segment's end (before
		// the think tail), which adds one report.
		var batched []string
		prev := 0
		for _, k := range got {
			var p, n int
			_, _ = fmt.Sscanf(k, ": keepalive %d/%d", &p, &n)
			if n != total || p <= prev || p-prev > 16 {
				t.Errorf("batched keepalives %q", got)
				break
			}
			prev = p
		}
		for _, k := range want {
			if slices.Contains(got, k) {
				batched = append(batched, k)
			}
		}
		if !slices.Equal(batched, want) {
			t.Errorf("keepalives\n got %q\nwant %q among them", got, want)
		}
		want = got
	} else if !slices.Equal(got, want) {
		t.Errorf("keepalives\n got %q\nwant %q", got, want)
	}
	var logged []string
	for _, l := range strings.Split(ts.log.String()[before:], "\n") {
		if _, msg, ok := strings.Cut(l, " - INFO - Prompt processing progress: "); ok {
			logged = append(logged, ": keepalive "+msg)
		}
	}
	if !slices.Equal(logged, want) {
		t.Errorf("progress log lines %q", logged)
	}
}

func TestStreamOptionsWithoutIncludeUsageEndsWithoutDone(t *testing.T) {
	ts := newTestServer(t, Options{})
	r := ts.chat(t, `{"messages": [{"role": "user", "content": "Hi"}], "stream": true, "stream_options": {}}`)
	ds, done := dataEvents(t, r.body)
	if done {
		t.Errorf("[DONE] sent despite the KeyError:\n%s", r.body)
	}
	if len(ds) == 0 || path(ds[len(ds)-1], "choices", 0, "finish_reason") == nil {
		t.Errorf("the final chunk should still be sent:\n%s", r.body)
	}
	log := ts.log.String()
	if !strings.Contains(log, "    and self.stream_options[\"include_usage\"]\n") || !strings.Contains(log, "\nKeyError: 'include_usage'\n") {
		t.Errorf("no KeyError traceback:\n%s", log)
	}
}

func TestFinishReasonLengthAndMaxCompletionTokens(t *testing.T) {
	ts := newTestServer(t, Options{})
	d := mustDict(t, ts.chat(t, `{"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 3}`).body)
	if str(path(d, "choices", 0, "finish_reason")) != "length" || num(path(d, "usage", "completion_tokens")) != 3 {
		t.Errorf("max_tokens 3: %s", pyjson.Dumps(d))
	}
	d = mustDict(t, ts.chat(t, `{"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 3, "max_completion_tokens": 5}`).body)
	if num(path(d, "usage", "completion_tokens")) != 5 {
		t.Errorf("max_completion_tokens should win: %s", pyjson.Dumps(d))
	}
	d = mustDict(t, ts.chat(t, `{"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 3, "max_completion_tokens": null}`).body)
	if num(path(d, "usage", "completion_tokens")) != 3 {
		t.Errorf("null max_completion_tokens falls back to max_tokens: %s", pyjson.Dumps(d))
	}
	// The server default (--max-tokens) applies when the request has none.
	ts2 := newTestServer(t, Options{MaxTokens: 4})
	d = mustDict(t, ts2.chat(t, `{"messages": [{"role": "user", "content": "Hi"}]}`).body)
	if str(path(d, "choices", 0, "finish_reason")) != "length" || num(path(d, "usage", "completion_tokens")) != 4 {
		t.Errorf("--max-tokens 4: %s", pyjson.Dumps(d))
	}
	// A natural end counts the end-of-turn token.
	d = mustDict(t, ts.chat(t, `{"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1000}`).body)
	text := str(path(d, "choices", 0, "message", "content"))
	if str(path(d, "choices", 0, "finish_reason")) != "stop" || num(path(d, "usage", "completion_tokens")) != int64(len(tokenize(text))+1) {
		t.Errorf("natural stop: %d tokens for %q", num(path(d, "usage", "completion_tokens")), text)
	}
}

func TestStopStrings(t *testing.T) {
	ts := newTestServer(t, Options{})
	full := str(path(mustDict(t, ts.chat(t, userHi).body), "choices", 0, "message", "content"))
	toks := tokenize(full)
	stop := toks[5].text + toks[6].text // a two-token stop sequence
	for _, stopJSON := range []string{pyjson.Dumps(stop), pyjson.Dumps([]any{"zzz-never", stop})} {
		d := mustDict(t, ts.chat(t, `{"messages": [{"role": "user", "content": "Hello, how are you today?"}], "stop": `+stopJSON+`}`).body)
		got := str(path(d, "choices", 0, "message", "content"))
		want := strings.SplitN(full, stop, 2)[0]
		if got != want || str(path(d, "choices", 0, "finish_reason")) != "stop" {
			t.Errorf("stop %s: got %q, want %q", stopJSON, got, want)
		}
		if n := num(path(d, "usage", "completion_tokens")); n != 7 {
			t.Errorf("completion_tokens %d, want 7 (the stop tokens count)", n)
		}
	}
	// Streaming: the stop text never reaches the client.
	r := ts.chat(t, `{"messages": [{"role": "user", "content": "Hello, how are you today?"}], "stream": true, "stop": `+pyjson.Dumps(stop)+`}`)
	ds, _ := dataEvents(t, r.body)
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(str(path(d, "choices", 0, "delta", "content")))
	}
	if b.String() != strings.SplitN(full, stop, 2)[0] {
		t.Errorf("streamed with stop: %q", b.String())
	}
	// A stop value Python cannot iterate, in a seeded request
	// (_serve_single, which catches it): 404. In the batched path it kills
	// the generation thread (TestBadStopKillsTheGenerationThread).
	if r := ts.chat(t, `{"messages": [{"role": "user", "content": "Hi"}], "stop": 5, "seed": 1}`); r.status != 404 || r.body != `{"error": "'int' object is not iterable"}` {
		t.Errorf("stop 5: %q", r.raw)
	}
}

// Unsorted: MLX's CPU order (the default is Metal's sorted order:
// TestTopLogprobsComeSortedOnMetal).
func TestLogprobsShapesAndArgpartitionQuirk(t *testing.T) {
	ts := newTestServer(t, Options{UnsortedTopLogprobs: true})
	d := mustDict(t, ts.chat(t, `{"messages": [{"role": "user", "content": "Hello, how are you today?"}], "logprobs": true}`).body)
	choice := path(d, "choices", 0).(*pyjson.Dict)
	if !slices.Equal(choice.Keys(), []string{"index", "finish_reason", "logprobs", "message"}) {
		t.Errorf("choice keys %v", choice.Keys())
	}
	content := path(choice, "logprobs", "content").([]any)
	if int64(len(content)) != num(path(d, "usage", "completion_tokens")) {
		t.Errorf("%d logprobs for %d tokens", len(content), num(path(d, "usage", "completion_tokens")))
	}
	for _, e := range content {
		ed := e.(*pyjson.Dict)
		if !slices.Equal(ed.Keys(), []string{"id", "logprob"}) {
			t.Fatalf("logprobs entry keys %v", ed.Keys())
		}
		if lp, _ := ed.GetDefault("logprob", nil).(float64); lp > 0 || lp != bf16(lp) {
			t.Fatalf("logprob %v", lp)
		}
	}
	// Shape check on the raw bytes too.
	raw := ts.chat(t, `{"messages": [{"role": "user", "content": "Hello, how are you today?"}], "logprobs": true}`).body
	if !regexp.MustCompile(`"logprobs": \{"content": \[\{"id": \d+, "logprob": -?\d[^,]*\}, \{"id"`).MatchString(raw) {
		t.Errorf("raw logprobs: %.300s", raw)
	}

	for _, body := range []string{
		`{"messages": [{"role": "user", "content": "Hello, how are you today?"}], "logprobs": true, "top_logprobs": 4}`,
		`{"messages": [{"role": "user", "content": "Hello, how are you today?"}], "top_logprobs": 4}`, // logprobs false
	} {
		d := mustDict(t, ts.chat(t, body).body)
		content := path(d, "choices", 0, "logprobs", "content").([]any)
		notMax := 0
		for i, e := range content {
			ed := e.(*pyjson.Dict)
			if !slices.Equal(ed.Keys(), []string{"id", "token", "logprob", "top_logprobs"}) {
				t.Fatalf("entry keys %v", ed.Keys())
			}
			top := path(ed, "top_logprobs").([]any)
			if len(top) != 4 {
				t.Fatalf("%d top_logprobs", len(top))
			}
			first := top[0].(*pyjson.Dict)
			if !slices.Equal(first.Keys(), []string{"id", "token", "logprob"}) {
				t.Fatalf("top entry keys %v", first.Keys())
			}
			for _, k := range []string{"id", "token", "logprob"} {
				a, _ := ed.Get(k)
				b, _ := first.Get(k)
				if pyjson.Dumps(a) != pyjson.Dumps(b) {
					t.Fatalf("entry %d: outer %s %v != top_logprobs[0] %v", i, k, a, b)
				}
			}
			best := first.GetDefault("logprob", 0.0).(float64)
			for _, x := range top {
				if lp := x.(*pyjson.Dict).GetDefault("logprob", 0.0).(float64); lp > best {
					best = lp
				}
			}
			if best != first.GetDefault("logprob", 0.0).(float64) {
				notMax++
			}
		}
		if notMax == 0 {
			t.Errorf("the outer entry is always the most likely token; argpartition's order is not simulated")
		}
	}
	// The sampled token (temperature 0) is the most likely one of its list.
	d = mustDict(t, ts.chat(t, `{"messages": [{"role": "user", "content": "Hello, how are you today?"}], "logprobs": true, "top_logprobs": 5, "max_tokens": 12}`).body)
	text := str(path(d, "choices", 0, "message", "content"))
	for i, tk := range tokenize(text)[:12] {
		top := path(d, "choices", 0, "logprobs", "content", i, "top_logprobs").([]any)
		bestID, best := int64(-1), -1e9
		for _, x := range top {
			if lp := x.(*pyjson.Dict).GetDefault("logprob", 0.0).(float64); lp > best {
				best, bestID = lp, num(path(x, "id"))
			}
		}
		if bestID != int64(tk.id) {
			t.Errorf("token %d %q (id %d) is not the argmax of its top_logprobs (%d)", i, tk.text, tk.id, bestID)
		}
	}
	if !regexp.MustCompile(`"token": "\\u0120[a-z]+"`).MatchString(pyjson.Dumps(d)) {
		t.Errorf("tokens should be byte-level BPE pieces (Ġword)")
	}
}

const weatherTool = `{"type": "function", "function": {"name": "get_weather", "description": "Current weather", "parameters": {"type": "object", "properties": {"location": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}, "days": {"type": "integer"}}, "required": ["location", "unit"]}}}`

func TestToolCalls(t *testing.T) {
	ts := newTestServer(t, Options{})
	body := `{"messages": [{"role": "user", "content": "Use Get_Weather for Paris please"}], "tools": [{"type": "function", "function": {"name": "other"}}, ` + weatherTool + `]}`
	r := ts.chat(t, body)
	d := mustDict(t, r.body)
	if str(path(d, "choices", 0, "finish_reason")) != "tool_calls" {
		t.Fatalf("finish_reason: %s", r.body)
	}
	msg := path(d, "choices", 0, "message").(*pyjson.Dict)
	// mlx-lm 0.31.3 (the default) leaves the empty content out; 0.32.0
	// sends null (versions.go).
	if !slices.Equal(msg.Keys(), []string{"role", "tool_calls"}) {
		t.Errorf("message %s", pyjson.Dumps(msg))
	}
	msg032 := path(mustDict(t, newTestServer(t, Options{MLXLMVersion: "0.32.0"}).chat(t, body).body), "choices", 0, "message").(*pyjson.Dict)
	if !slices.Equal(msg032.Keys(), []string{"role", "content", "tool_calls"}) || path(msg032, "content") != nil {
		t.Errorf("0.32.0 message %s", pyjson.Dumps(msg032))
	}
	call := path(msg, "tool_calls", 0).(*pyjson.Dict)
	if !slices.Equal(call.Keys(), []string{"function", "type", "id"}) || str(path(call, "type")) != "function" {
		t.Errorf("tool call %s", pyjson.Dumps(call))
	}
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(str(path(call, "id"))) {
		t.Errorf("id %q is not a uuid4", str(path(call, "id")))
	}
	fn := path(call, "function").(*pyjson.Dict)
	if !slices.Equal(fn.Keys(), []string{"name", "arguments"}) || str(path(fn, "name")) != "get_weather" {
		t.Errorf("function %s", pyjson.Dumps(fn))
	}
	args := mustDict(t, str(path(fn, "arguments")))
	if !slices.Equal(args.Keys(), []string{"location", "unit"}) || str(path(args, "location")) == "" {
		t.Errorf("arguments %s", str(path(fn, "arguments")))
	}
	if u := str(path(args, "unit")); u != "celsius" && u != "fahrenheit" {
		t.Errorf("unit %q not from the enum", u)
	}
	if !regexp.MustCompile(`"arguments": "\{\\"location\\": \\"[^"]+\\", \\"unit\\": \\"[a-z]+\\"\}"`).MatchString(r.body) {
		t.Errorf("arguments not json.dumps'ed with default separators: %s", r.body)
	}

	// Streamed: the whole call in one delta with "index", then the final chunk.
	r = ts.chat(t, strings.Replace(body, `"messages"`, `"stream": true, "messages"`, 1))
	ds, done := dataEvents(t, r.body)
	if !done || len(ds) != 2 {
		t.Fatalf("want one tool-call chunk and the final chunk:\n%s", r.body)
	}
	delta := path(ds[0], "choices", 0, "delta").(*pyjson.Dict)
	if !slices.Equal(delta.Keys(), []string{"role", "tool_calls"}) {
		t.Errorf("delta %s", pyjson.Dumps(delta))
	}
	sc := path(delta, "tool_calls", 0).(*pyjson.Dict)
	if !slices.Equal(sc.Keys(), []string{"function", "type", "id", "index"}) || num(path(sc, "index")) != 0 {
		t.Errorf("streamed call %s", pyjson.Dumps(sc))
	}
	if str(path(ds[1], "choices", 0, "finish_reason")) != "tool_calls" {
		t.Errorf("final chunk %s", pyjson.Dumps(ds[1]))
	}

	// No mention, or a last message that is not the user's: plain text.
	for _, b := range []string{
		`{"messages": [{"role": "user", "content": "What is up?"}], "tools": [` + weatherTool + `]}`,
		`{"messages": [{"role": "user", "content": "get_weather"}, {"role": "assistant", "content": "", "tool_calls": [{"id": "1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"location\": \"Paris\"}"}}]}, {"role": "tool", "content": "sunny"}], "tools": [` + weatherTool + `]}`,
	} {
		d := mustDict(t, ts.chat(t, b).body)
		if str(path(d, "choices", 0, "finish_reason")) != "stop" || str(path(d, "choices", 0, "message", "content")) == "" {
			t.Errorf("expected a text answer: %s", pyjson.Dumps(d))
		}
	}
	// A call cut by max_tokens is dropped with mlx_lm's warning.
	d = mustDict(t, ts.chat(t, `{"max_tokens": 6, "messages": [{"role": "user", "content": "get_weather now"}], "tools": [`+weatherTool+`]}`).body)
	if str(path(d, "choices", 0, "finish_reason")) != "length" || path(d, "choices", 0, "message", "tool_calls") != nil {
		t.Errorf("truncated call: %s", pyjson.Dumps(d))
	}
	if !regexp.MustCompile(` - WARNING - Failed to parse tool call \(JSONDecodeError: .+\) — tool text was likely truncated mid-generation\.\n`).MatchString(ts.log.String()) {
		t.Errorf("no truncation warning:\n%s", ts.log.String())
	}
}

func TestReasoning(t *testing.T) {
	ts := newTestServer(t, Options{})
	think := `{"messages": [{"role": "user", "content": "Why is the sky blue?"}], "chat_template_kwargs": {"enable_thinking": true}}`
	d := mustDict(t, ts.chat(t, think).body)
	msg := path(d, "choices", 0, "message").(*pyjson.Dict)
	if !slices.Equal(msg.Keys(), []string{"role", "content", "reasoning"}) || str(path(msg, "reasoning")) == "" || str(path(msg, "content")) == "" {
		t.Errorf("message %s", pyjson.Dumps(msg))
	}
	if strings.Contains(str(path(msg, "reasoning")), "think>") {
		t.Errorf("think tags leak into reasoning")
	}
	// Streaming: reasoning deltas, then content deltas, never both in one chunk.
	r := ts.chat(t, strings.Replace(think, `"messages"`, `"stream": true, "messages"`, 1))
	ds, _ := dataEvents(t, r.body)
	seenContent := false
	var reasoning strings.Builder
	for _, c := range ds {
		delta := path(c, "choices", 0, "delta").(*pyjson.Dict)
		_, hasR := delta.Get("reasoning")
		_, hasC := delta.Get("content")
		if hasR && hasC {
			t.Errorf("reasoning and content in one delta")
		}
		if hasR {
			if seenContent {
				t.Errorf("reasoning after content")
			}
			reasoning.WriteString(str(path(delta, "reasoning")))
		}
		seenContent = seenContent || hasC
	}
	if reasoning.String() != str(path(msg, "reasoning")) || !seenContent {
		t.Errorf("streamed reasoning %q vs %q", reasoning.String(), str(path(msg, "reasoning")))
	}
	// A top-level enable_thinking is ignored.
	d = mustDict(t, ts.chat(t, `{"messages": [{"role": "user", "content": "Why is the sky blue?"}], "enable_thinking": true}`).body)
	if _, ok := path(d, "choices", 0, "message").(*pyjson.Dict).Get("reasoning"); ok {
		t.Errorf("top-level enable_thinking was honoured")
	}
	// --chat-template-args turns it on; the request's kwargs win.
	ct, _ := ParseChatTemplateArgs(`{"enable_thinking": true}`)
	ts2 := newTestServer(t, Options{ChatTemplateArgs: ct})
	d = mustDict(t, ts2.chat(t, `{"messages": [{"role": "user", "content": "Why?"}]}`).body)
	if str(path(d, "choices", 0, "message", "reasoning")) == "" {
		t.Errorf("--chat-template-args enable_thinking ignored")
	}
	d = mustDict(t, ts2.chat(t, `{"messages": [{"role": "user", "content": "Why?"}], "chat_template_kwargs": {"enable_thinking": false}}`).body)
	if path(d, "choices", 0, "message", "reasoning") != nil {
		t.Errorf("request kwargs should override --chat-template-args")
	}
}

func TestTextCompletions(t *testing.T) {
	ts := newTestServer(t, Options{})
	r := ts.post(t, "/v1/completions", `{"prompt": "Once upon a time", "max_tokens": 8}`)
	re := regexp.MustCompile(`^\{"id": "cmpl-[0-9a-f-]{36}", "system_fingerprint": "[^"]+", "object": "text_completion", "model": "default_model", "created": \d+, "choices": \[\{"index": 0, "finish_reason": "length", "text": "[^"]+"\}\], "usage": \{"prompt_tokens": 4, "completion_tokens": 8, "total_tokens": 12, "prompt_tokens_details": \{"cached_tokens": 0\}\}\}$`)
	if !re.MatchString(r.body) {
		t.Errorf("text completion: %s", r.body)
	}
	r = ts.post(t, "/v1/completions", `{"prompt": "Once upon a time", "max_tokens": 8, "stream": true, "stream_options": {"include_usage": true}}`)
	ds, done := dataEvents(t, r.body)
	if !done {
		t.Fatalf("no [DONE]")
	}
	for _, c := range ds[:len(ds)-2] {
		if str(c.GetDefault("object", "")) != "text_completion" || str(path(c, "choices", 0, "text")) == "" {
			t.Errorf("chunk %s", pyjson.Dumps(c))
		}
	}
	if str(ds[len(ds)-1].GetDefault("object", "")) != "chat.completion" {
		t.Errorf("the usage chunk says chat.completion even here: %s", pyjson.Dumps(ds[len(ds)-1]))
	}
	if r := ts.post(t, "/v1/completions", `{"prompt": 42}`); r.status != 404 {
		t.Errorf("non-string prompt: %q", r.raw)
	}
}

func TestDeterminism(t *testing.T) {
	mask := regexp.MustCompile(`"(id|created)": ("[^"]*"|\d+)`)
	body := `{"messages": [{"role": "user", "content": "Tell me something"}], "logprobs": true, "top_logprobs": 3, "tools": [` + weatherTool + `], "temperature": 0.7}`
	a := newTestServer(t, Options{Seed: 7})
	b := newTestServer(t, Options{Seed: 7})
	c := newTestServer(t, Options{Seed: 8})
	ra := mask.ReplaceAllString(a.chat(t, body).body, "")
	rb := mask.ReplaceAllString(b.chat(t, body).body, "")
	rc := mask.ReplaceAllString(c.chat(t, body).body, "")
	if ra != rb {
		t.Errorf("same seed and body, different output:\n%s\n%s", ra, rb)
	}
	if ra == rc {
		t.Errorf("a different seed gave the same output")
	}
	// The request's own seed also changes the answer.
	withSeed := strings.Replace(body, `"temperature"`, `"seed": 3, "temperature"`, 1)
	if mask.ReplaceAllString(a.chat(t, withSeed).body, "") == ra {
		t.Errorf("request seed had no effect")
	}
}

func TestUnknownModelIs404(t *testing.T) {
	ts := newTestServer(t, Options{Model: "mlx-community/Qwen3-4B-4bit"})
	r := ts.chat(t, `{"model": "gpt-4o", "messages": [{"role": "user", "content": "Hi"}]}`)
	if r.statusLine != "HTTP/1.0 404 Not Found" || !strings.HasPrefix(r.body, `{"error": "401 Client Error.`) ||
		!strings.Contains(r.body, `Repository Not Found for url: https://huggingface.co/api/models/gpt-4o/revision/main.`) {
		t.Errorf("unknown model: %q", r.raw)
	}
	d := mustDict(t, ts.chat(t, `{"model": "mlx-community/Qwen3-4B-4bit", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2}`).body)
	if str(d.GetDefault("model", "")) != "mlx-community/Qwen3-4B-4bit" {
		t.Errorf("model not echoed: %s", pyjson.Dumps(d))
	}
	if r := ts.chat(t, `{"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]}`); r.body != `{"error": "Only 'text' content type is supported."}` {
		t.Errorf("image content: %q", r.raw)
	}
	if r := ts.chat(t, `{"messages": []}`); r.body != `{"error": "list index out of range"}` {
		t.Errorf("empty messages: %q", r.raw)
	}
}

// While the model loads, /health and /v1/models answer (a load that
// never ends here: had they waited for it, they would not answer at all);
// a completion waits for the load, so it is answered no sooner than the
// load takes (a timer only fires late).
func TestLoadDelay(t *testing.T) {
	loading := newTestServer(t, Options{LoadDelay: time.Hour})
	if r := loading.get(t, "/health"); r.status != 200 {
		t.Fatalf("/health must answer while loading: %q", r.raw)
	}
	if r := loading.get(t, "/v1/models"); r.status != 200 {
		t.Fatalf("/v1/models must answer while loading: %q", r.raw)
	}
	const delay = 400 * time.Millisecond
	start := time.Now()
	ts := newTestServer(t, Options{LoadDelay: delay})
	r := ts.chat(t, `{"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1}`)
	if r.status != 200 || time.Since(start) < delay {
		t.Errorf("completion answered after %v, before the model loaded (%v): %q", time.Since(start), delay, r.raw)
	}
}

// A client that leaves mid-stream stops the generation: the engine's next
// writes fail (the log says so), the sequence is released, and what it had
// not generated is never cached. At 5 tokens a second the answer (16
// tokens or more) is far from its end when the client leaves.
func TestClientDisconnectStopsGeneration(t *testing.T) {
	ts := newTestServer(t, Options{DecodeTPS: 5})
	conn, err := net.Dial("tcp", ts.addr())
	if err != nil {
		t.Fatal(err)
	}
	body := `{"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Write a lot"}], "stream": true, "max_tokens": 400}`
	if _, err := io.WriteString(conn, postReq("/v1/chat/completions", body)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	readUntil(t, br, "data: ")
	readUntil(t, br, "data: ")
	conn.Close()
	waitFor(t, "the handler to notice", func() bool {
		return strings.Contains(ts.log.String(), "BrokenPipeError: [Errno 32] Broken pipe") || strings.Contains(ts.log.String(), "ConnectionResetError")
	})
	waitFor(t, "the sequence to be released", func() bool {
		ts.e.cmu.Lock()
		defer ts.e.cmu.Unlock()
		return len(ts.e.active) == 0
	})
	// No final assistant entry was cached for it, but its system and user
	// segments were, and its prompt minus the last token (typed assistant:
	// it ends in the empty think block; BatchGenerator.insert_segments).
	ts.e.cmu.Lock()
	lines := ts.e.cache.statsLines()
	ts.e.cmu.Unlock()
	want := []string{"Prompt Cache: 3 sequences, 0.01 GB", "- assistant: 1 sequences, 0.00 GB", "- user: 1 sequences, 0.00 GB", "- system: 1 sequences, 0.00 GB"}
	if !slices.Equal(lines, want) {
		t.Errorf("cache after a dropped stream: %q", lines)
	}
}

func TestFallbackWithoutHijack(t *testing.T) {
	// Behind a ResponseWriter that cannot be hijacked the engine still answers.
	e := New(Options{PrefillTPS: 1e6, DecodeTPS: 1e6}, io.Discard)
	defer e.Close()
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(userHi)))
	if rec.Code != 200 || !strings.HasPrefix(rec.Body.String(), `{"id": "chatcmpl-`) {
		t.Errorf("fallback: %d %s", rec.Code, rec.Body.String())
	}
}

// On Apple GPUs argpartition is a full sort: every top_logprobs list comes
// most likely first (mlx 846d17622 mlx/backend/metal/sort.cpp,
// ArgPartition::eval_gpu).
func TestTopLogprobsComeSortedOnMetal(t *testing.T) {
	ts := newTestServer(t, Options{})
	d := mustDict(t, ts.chat(t, `{"messages": [{"role": "user", "content": "Hello, how are you today?"}], "logprobs": true, "top_logprobs": 5, "temperature": 1.0}`).body)
	for _, c := range path(d, "choices", 0, "logprobs", "content").([]any) {
		top := c.(*pyjson.Dict).GetDefault("top_logprobs", nil).([]any)
		for i := 1; i < len(top); i++ {
			a := top[i-1].(*pyjson.Dict).GetDefault("logprob", 0.0).(float64)
			b := top[i].(*pyjson.Dict).GetDefault("logprob", 0.0).(float64)
			if b > a {
				t.Fatalf("not sorted: %v", pyjson.Dumps(top))
			}
		}
	}
}
