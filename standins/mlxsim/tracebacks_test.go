package mlxsim

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim/pyjson"
)

var update = flag.Bool("update", false, "rewrite testdata/tracebacks.golden")

// The tracebacks mlxsim writes are what the engine's log parsers (the
// supervisor's crash reasons, the log classifier) and the fault suite read:
// their frames and line numbers (pyframes.go) are pinned here, so a
// refactor that moves one fails. Regenerate with -update after a change
// made on purpose, and read the diff.
func TestTracebacksArePinned(t *testing.T) {
	var out strings.Builder
	section := func(name, text string) { fmt.Fprintf(&out, "===== %s\n%s", name, text) }
	fixedNow := func() time.Time { return time.Date(2026, 8, 22, 16, 59, 44, 123e6, time.UTC) }
	topKExc := (&Engine{era: mlxLMEras["0.31.3"]}).samplerFault(&completionRequest{temperatureF: 0.7, topK: pyjson.NewInt("151936"), xtcProb: 0.0})

	section("startup warning", userWarning())
	section("exit", exitTraceback())
	section("metal fault, MLX 0.32: the generation thread dies", metalThreadDeath().excepthook())
	section("load failure, mlx-lm 0.31: the generation thread dies", loadThreadDeath(DefaultModel).excepthook())
	section("load failure, mlx-lm 0.30: the main thread, exit 1", loadMainTraceback(DefaultModel))
	section("stop [1]: the generation thread dies", stopThreadDeath(&pyExc{typ: "TypeError", msg: "TextEncodeInput must be Union[TextInputSequence, Tuple[InputSequence, InputSequence]]"}, false).excepthook())
	section(`stop [["a"]]: the generation thread dies`, stopThreadDeath(&pyExc{typ: "TypeError", msg: "unhashable type: 'list'"}, false).excepthook())
	section("a text prompt cached whole: the generation thread dies", exactHitThreadDeath().excepthook())
	section("a sampler that raises (top_k): the generation thread dies", threadDeath(samplerThreadDeath(topKExc.frames), topKExc.line()).excepthook())
	section("stop [1] under mlx-lm 0.32.0: the wrapper logs it", stopThreadDeath(&pyExc{typ: "TypeError", msg: "TextEncodeInput must be Union[TextInputSequence, Tuple[InputSequence, InputSequence]]"}, true).wrapped(newPyLog(nil, levelInfo, fixedNow)))
	for _, err := range []error{syscall.EADDRINUSE, syscall.EACCES, syscall.EADDRNOTAVAIL, errors.New("lookup foo: no such host")} {
		section("bind "+err.Error(), BindErrorTraceback(err))
	}

	log := &syncBuffer{}
	now := func() time.Time { return time.Date(2026, 8, 22, 16, 59, 44, 123e6, time.UTC) }
	e := New(Options{PrefillTPS: 1e9, DecodeTPS: 1e9, Now: now, Exit: func(int) {}, Abort: func() {}}, log)
	defer e.Close()
	<-e.loaded
	requests := []struct {
		name, path, body string
		failAt           int // the write that fails (0: none)
	}{
		{"a bad max_tokens", "/v1/chat/completions", `{"messages": [{"role": "user", "content": "hi"}], "max_tokens": "s"}`, 0},
		{"no messages", "/v1/chat/completions", `{"stream": true}`, 0},
		{"no prompt", "/v1/completions", `{"max_tokens": 3}`, 0},
		{"not JSON", "/v1/chat/completions", `{"messages": [}`, 0},
		{"top_logprobs too high", "/v1/chat/completions", `{"messages": [], "top_logprobs": 12}`, 0},
		{"temperature too low", "/v1/chat/completions", `{"messages": [], "temperature": -0.5}`, 0},
		{"logit_bias with a key that is no int", "/v1/chat/completions", `{"messages": [], "logit_bias": {"x": 1}}`, 0},
		{"logit_bias with a value that is no float", "/v1/chat/completions", `{"messages": [], "logit_bias": {"1": "abc"}}`, 0},
		{"logit_bias with a list for a value", "/v1/chat/completions", `{"messages": [], "logit_bias": {"1": [1]}}`, 0},
		{"not UTF-8", "/v1/chat/completions", "{\"a\": \"\xff\"}", 0},
		{"nested too deep", "/v1/chat/completions", strings.Repeat("[", 5000), 0},
		{"an empty prompt (the generation thread raises)", "/v1/completions", `{"prompt": "", "max_tokens": 3}`, 0},
		{"stream_options without include_usage", "/v1/chat/completions", `{"stream": true, "stream_options": {}, "max_tokens": 3, "messages": [{"role": "user", "content": "hi"}]}`, 0},
	}
	run := func(name, path, body string, failAt int) int {
		before := len(log.String())
		writes := serveOnce(e, path, body, failAt)
		section(name, log.String()[before:])
		return writes
	}
	for _, r := range requests {
		run(r.name, r.path, r.body, r.failAt)
	}
	// The client gone at each write of an answer, streamed (with the usage
	// chunk) and not: every write's frame.
	for _, body := range []string{
		`{"stream": true, "stream_options": {"include_usage": true}, "max_tokens": 3, "messages": [{"role": "user", "content": "tell me about owls"}]}`,
		`{"max_tokens": 3, "messages": [{"role": "user", "content": "tell me about owls"}]}`,
	} {
		n := run("whole "+body, "/v1/chat/completions", body, 0)
		for k := 1; k <= n; k++ {
			run(fmt.Sprintf("the client gone at write %d of %s", k, body), "/v1/chat/completions", body, k)
		}
	}

	golden := "testdata/tracebacks.golden"
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(out.String()), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), out.String(), "a traceback changed; go test ./standins/mlxsim -run TestTracebacksArePinned -update if it was meant to")
	assert.Contains(t, out.String(), "BrokenPipeError", "a client gone is logged as the engine logs it")
}

// serveOnce hands the engine one request on a connection whose failAt-th
// write fails with a broken pipe, as a client that went away (0: none),
// and returns the writes the engine made.
func serveOnce(e *Engine, path, body string, failAt int) int {
	req := httptest.NewRequest("POST", path, strings.NewReader(body))
	req.RemoteAddr = "192.0.2.7:40123"
	c := &failingConn{failAt: failAt}
	e.ServeHTTP(&hijackable{conn: c, body: body}, req)
	return c.writes
}

type failingConn struct {
	net.Conn
	writes, failAt int
}

func (c *failingConn) Write(p []byte) (int, error) {
	c.writes++
	if c.failAt > 0 && c.writes >= c.failAt {
		return 0, syscall.EPIPE
	}
	return len(p), nil
}
func (c *failingConn) Close() error                     { return nil }
func (c *failingConn) SetDeadline(time.Time) error      { return nil }
func (c *failingConn) SetReadDeadline(time.Time) error  { return nil }
func (c *failingConn) SetWriteDeadline(time.Time) error { return nil }

type hijackable struct {
	httptest.ResponseRecorder
	conn *failingConn
	body string
}

func (w *hijackable) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return w.conn, bufio.NewReadWriter(bufio.NewReader(strings.NewReader(w.body)), bufio.NewWriter(w.conn)), nil
}
