package mlxsim

import (
	"bytes"
	"log"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim/pyjson"
)

var (
	fuzzOnce   sync.Once
	fuzzServer *testServer
	fuzzErrors *syncBuffer
	fuzzDrops  = &dropCounter{}
)

// dropCounter counts the tracebacks socketserver prints (each is written
// in one piece) and forgets the rest of the log.
type dropCounter struct {
	mu sync.Mutex
	n  int
}

func (d *dropCounter) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("Exception occurred during processing of request")) {
		d.mu.Lock()
		d.n++
		d.mu.Unlock()
	}
	return len(p), nil
}

func (d *dropCounter) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n
}

// sharedFuzzServer is one engine for the whole fuzz run (servers per input
// would dominate the time). net/http reports handler panics to ErrorLog.
func sharedFuzzServer() *testServer {
	fuzzOnce.Do(func() {
		e := New(Options{PrefillTPS: 1e9, DecodeTPS: 1e9, MaxTokens: 48}, fuzzDrops)
		srv := httptest.NewUnstartedServer(e.Handler())
		fuzzErrors = &syncBuffer{}
		srv.Config.ErrorLog = log.New(fuzzErrors, "", 0)
		srv.Start()
		fuzzServer = &testServer{e: e, srv: srv}
	})
	return fuzzServer
}

// FuzzChatRequest posts arbitrary bodies. The server must never panic, and
// must answer with a status mlx_lm.server uses (200, 400, 404, 411) or, for
// the exceptions mlx_lm does not catch, close the connection after
// printing a traceback.
func FuzzChatRequest(f *testing.F) {
	seeds := []string{
		``, `{}`, `[]`, `null`, `"x"`, `{"messages": []}`, userHi,
		`{"messages": [{"role": "user", "content": "hi"}], "stream": true}`,
		`{"messages": [{"role": "user", "content": "hi"}], "stream": true, "stream_options": {}}`,
		`{"messages": [{"role": "user", "content": "hi"}], "stream": true, "stream_options": []}`,
		`{"messages": [{"role": "user", "content": "hi"}], "stream": true, "stream_options": {"include_usage": "yes"}}`,
		`{"messages": [{"role": "user", "content": "hi"}], "logprobs": true, "top_logprobs": 11}`,
		`{"messages": [{"role": "user", "content": "hi"}], "top_logprobs": 0, "max_tokens": 0}`,
		`{"messages": [{"role": "user", "content": "hi"}], "seed": 1, "max_tokens": 0}`,
		`{"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text"}]}]}`,
		`{"messages": [{"role": "user", "content": [1]}]}`,
		`{"messages": [{"role": "user", "content": ["x"]}]}`,
		`{"messages": "hello"}`, `{"messages": 5}`, `{"messages": {"role": "user"}}`, `{"messages": [5]}`,
		`{"messages": [{"content": "no role"}]}`,
		`{"messages": [{"role": "assistant", "content": "x", "tool_calls": [{"function": {"name": "f", "arguments": "{bad"}}]}]}`,
		`{"messages": [{"role": "assistant", "content": "x", "tool_calls": "zz"}]}`,
		`{"messages": [{"role": "user", "content": "call f"}], "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "required": ["a", 3], "properties": {"a": {"type": ["null", "array"], "items": {"enum": [1.5]}}}}}}]}`,
		`{"messages": [{"role": "user", "content": "call f"}], "tools": 7}`,
		`{"messages": [{"role": "user", "content": "hi"}], "stop": ["\n", ""], "max_tokens": 3}`,
		`{"messages": [{"role": "user", "content": "hi"}], "stop": [[1]]}`,
		`{"messages": [{"role": "user", "content": "hi"}], "stop": {"a": 1}}`,
		`{"messages": [{"role": "user", "content": "hi"}], "chat_template_kwargs": [["enable_thinking", true]]}`,
		`{"messages": [{"role": "user", "content": "hi"}], "chat_template_kwargs": "ab"}`,
		`{"messages": [{"role": "user", "content": "hi"}], "chat_template_kwargs": {"tools": 1}}`,
		`{"messages": [{"role": "user", "content": "hi"}], "logit_bias": {" 12 ": "-1.5", "1_0": 2}}`,
		`{"messages": [{"role": "user", "content": "hi"}], "temperature": NaN, "top_p": Infinity}`,
		`{"messages": [{"role": "user", "content": "hi"}], "model": "x", "draft_model": {}}`,
		`{"messages": [{"role": "user", "content": "hi"}], "adapters": "a"}`,
		`{"prompt": "x"}`, `{"prompt": ["x"]}`, `{"prompt": ""}`,
		`{"messages": [{"role": "user", "content": "\ud800 lone"}]}`,
		strings.Repeat("[", 1500),
		"{\"a\": \"\xff\"}",
	}
	for _, s := range seeds {
		f.Add(s, "/v1/chat/completions")
	}
	f.Add(`{"prompt": "once"}`, "/v1/completions")
	f.Add(`{"prompt": "once", "stream": true}`, "/v1/completions")
	f.Add(`{}`, "/v1/other")

	ts := sharedFuzzServer()
	f.Fuzz(func(t *testing.T, body, route string) {
		if route != "/v1/completions" && route != "/chat/completions" {
			route = "/v1/chat/completions"
		}
		if killsThread(body) {
			t.Skip("a stop value the batched path cannot use kills the generation thread and every later request waits (TestBadStopKillsTheGenerationThread)")
		}
		before := fuzzDrops.count()
		r := ts.post(t, route, body)
		if e := fuzzErrors.String(); strings.Contains(e, "panic") {
			t.Fatalf("handler panicked on %q:\n%s", body, e)
		}
		if r.raw == "" {
			if fuzzDrops.count() <= before {
				t.Fatalf("connection dropped without a traceback for %q", body)
			}
			return
		}
		switch r.status {
		case 200:
			if strings.HasPrefix(r.body, "{") {
				if _, err := pyjson.Loads(r.body); err != nil {
					t.Fatalf("200 body is not JSON (%v): %s", err, r.body)
				}
			} else if !strings.HasPrefix(r.body, ": keepalive") && !strings.HasPrefix(r.body, "data: ") && r.body != "" {
				t.Fatalf("unexpected stream start: %.200q", r.body)
			}
		case 400, 404, 411:
			if !bytes.HasPrefix([]byte(r.body), []byte(`{"error": `)) {
				t.Fatalf("%d body %q", r.status, r.body)
			}
		default:
			t.Fatalf("status %d for %q:\n%s", r.status, body, r.raw)
		}
	})
}

// killsThread says whether body is a completion whose stop value kills the
// generation thread (stopThreadDeath in faults.go): a shared engine would wait for ever
// after it. Bodies that fail earlier are included; they are only skipped.
func killsThread(body string) bool {
	v, err := pyjson.Loads(body)
	if err != nil {
		return false
	}
	d, ok := v.(*pyjson.Dict)
	if !ok {
		return false
	}
	if _, seeded := d.GetDefault("seed", nil).(pyjson.Int); seeded {
		return false
	}
	_, _, exc := stopSequences(d.GetDefault("stop", nil))
	return exc != nil
}
