package mlxsim

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim/pyjson"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/syncbuf"
)

// syncBuffer collects the engine's stderr.
type syncBuffer struct{ syncbuf.Buffer }

func (s *syncBuffer) Lines() []string {
	return strings.Split(strings.TrimRight(s.String(), "\n"), "\n")
}

type testServer struct {
	e   *Engine
	srv *httptest.Server
	log *syncBuffer
}

// newTestServer starts an engine behind a real HTTP server, with fast
// simulated speeds unless the options say otherwise.
func newTestServer(t testing.TB, o Options) *testServer {
	t.Helper()
	if o.PrefillTPS == 0 {
		o.PrefillTPS = 1e6
	}
	if o.DecodeTPS == 0 {
		o.DecodeTPS = 1e5
	}
	log := &syncBuffer{}
	e := New(o, log)
	srv := httptest.NewServer(e.Handler())
	t.Cleanup(func() {
		e.Close()
		srv.Close()
	})
	return &testServer{e: e, srv: srv, log: log}
}

func (ts *testServer) addr() string { return strings.TrimPrefix(ts.srv.URL, "http://") }

// rawResp is everything the client received, unparsed and parsed.
type rawResp struct {
	raw        string
	statusLine string
	status     int
	headers    []string // in order, as sent
	body       string
}

func (r rawResp) header(name string) (string, bool) {
	for _, h := range r.headers {
		k, v, _ := strings.Cut(h, ": ")
		if k == name {
			return v, true
		}
	}
	return "", false
}

func (r rawResp) headerNames() []string {
	var out []string
	for _, h := range r.headers {
		k, _, _ := strings.Cut(h, ": ")
		out = append(out, k)
	}
	return out
}

func parseRaw(raw string) rawResp {
	r := rawResp{raw: raw}
	head, body, ok := strings.Cut(raw, "\r\n\r\n")
	if !ok {
		return r
	}
	lines := strings.Split(head, "\r\n")
	r.statusLine = lines[0]
	if f := strings.Fields(lines[0]); len(f) >= 2 {
		r.status, _ = strconv.Atoi(f[1])
	}
	r.headers = lines[1:]
	r.body = body
	return r
}

// send writes a raw HTTP request and reads until the server closes.
func (ts *testServer) send(t testing.TB, req string) rawResp {
	t.Helper()
	conn, err := net.Dial("tcp", ts.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(conn)
	if err != nil && !isReset(err) {
		t.Fatalf("read: %v", err)
	}
	return parseRaw(string(b))
}

func isReset(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "reset") || strings.Contains(err.Error(), "EOF"))
}

func postReq(path, body string) string {
	return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", path, len(body), body)
}

func (ts *testServer) post(t testing.TB, path, body string) rawResp {
	t.Helper()
	return ts.send(t, postReq(path, body))
}

func (ts *testServer) chat(t testing.TB, body string) rawResp {
	t.Helper()
	return ts.post(t, "/v1/chat/completions", body)
}

func (ts *testServer) get(t testing.TB, path string) rawResp {
	t.Helper()
	return ts.send(t, "GET "+path+" HTTP/1.1\r\nHost: localhost\r\n\r\n")
}

// sseEvents splits an SSE body into its events (without the blank lines).
func sseEvents(body string) []string {
	var out []string
	for _, ev := range strings.Split(body, "\n\n") {
		if ev != "" {
			out = append(out, ev)
		}
	}
	return out
}

// dataEvents returns the JSON payloads of the data: events, parsed with the
// order-preserving decoder, and whether [DONE] came last.
func dataEvents(t testing.TB, body string) ([]*pyjson.Dict, bool) {
	t.Helper()
	var out []*pyjson.Dict
	done := false
	for _, ev := range sseEvents(body) {
		payload, ok := strings.CutPrefix(ev, "data: ")
		if !ok {
			continue
		}
		if payload == "[DONE]" {
			done = true
			continue
		}
		if done {
			t.Fatalf("data after [DONE]: %s", payload)
		}
		v, err := pyjson.Loads(payload)
		if err != nil {
			t.Fatalf("bad chunk %q: %v", payload, err)
		}
		out = append(out, v.(*pyjson.Dict))
	}
	return out, done
}

func mustDict(t testing.TB, s string) *pyjson.Dict {
	t.Helper()
	v, err := pyjson.Loads(s)
	if err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
	d, ok := v.(*pyjson.Dict)
	if !ok {
		t.Fatalf("not an object: %s", s)
	}
	return d
}

// path walks a decoded value: keys for dicts, ints for lists.
func path(v any, keys ...any) any {
	for _, k := range keys {
		switch x := v.(type) {
		case *pyjson.Dict:
			v, _ = x.Get(k.(string))
		case []any:
			i := k.(int)
			if i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func str(v any) string { s, _ := v.(string); return s }

func num(v any) int64 {
	switch x := v.(type) {
	case pyjson.Int:
		return x.V
	}
	return -1
}

// waitFor polls until cond holds.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// runningStream posts a streamed body on a connection of its own and
// returns once the first chunk has come: the generation runs. Closing the
// connection ends it (the client left).
func runningStream(t testing.TB, ts *testServer, body string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", ts.addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if _, err := io.WriteString(conn, postReq("/v1/chat/completions", body)); err != nil {
		t.Fatal(err)
	}
	readUntil(t, bufio.NewReader(conn), "data: ")
	return conn
}

// readUntil reads from a streaming response until the text appears.
func readUntil(t testing.TB, r *bufio.Reader, sub string) string {
	t.Helper()
	var b strings.Builder
	for !strings.Contains(b.String(), sub) {
		line, err := r.ReadString('\n')
		b.WriteString(line)
		if err != nil {
			t.Fatalf("stream ended before %q: %v\n%s", sub, err, b.String())
		}
	}
	return b.String()
}

const userHi = `{"messages": [{"role": "user", "content": "Hello, how are you today?"}]}`
