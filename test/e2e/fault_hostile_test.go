//go:build e2e && fault

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

// hostileLimits make the proxy's limits short enough to meet in seconds.
var hostileLimits = []string{
	"extensions::mlx_proxy::timeouts::body_read=1s",
	"extensions::mlx_proxy::timeouts::read_header=2s",
	"extensions::mlx_proxy::max_request_body_bytes=1048576",
}

// seedBodies are requests of every shape the front door takes; the
// mutator makes the corpus from them, as a fuzzer's mutator does.
var seedBodies = []string{
	`{"model": "mlx-community/Qwen3-4B-4bit", "messages": [{"role": "user", "content": "Say hello"}], "max_tokens": 8}`,
	`{"messages": [{"role": "user", "content": "Tell a story"}], "max_tokens": 8, "stream": true}`,
	`{"messages": [{"role": "user", "content": "Use get_weather for Oslo"}], "stream": true, "max_tokens": 16, "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]}`,
	`{"messages": [{"role": "system", "content": "Be brief"}, {"role": "user", "content": "hi"}], "logprobs": true, "top_logprobs": 3, "max_tokens": 8, "temperature": 0.7, "stop": ["\n"]}`,
	`{"prompt": "Once upon a time", "max_tokens": 8}`,
	`{"prompt": "Once upon a time", "max_tokens": 8, "stream": true, "stream_options": {"include_usage": true}}`,
}

// interesting values a mutation puts in place of a JSON value.
var interesting = []string{`-1`, `0`, `1e400`, `-1e400`, `9223372036854775808`, `NaN`, `Infinity`, `null`, `true`, `""`, `[]`, `{}`,
	`"x"`, `[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]`, `"\u0000"`, `"\ud800"`, `1.5`, `100000`, `"default_model"`}

// mutate applies one to four go-fuzz style mutations to seed.
func mutate(r *rand.Rand, seed string) []byte {
	b := []byte(seed)
	for n := 1 + r.IntN(4); n > 0 && len(b) > 0; n-- {
		i := r.IntN(len(b))
		switch r.IntN(8) {
		case 0: // flip a bit
			b[i] ^= 1 << r.IntN(8)
		case 1: // insert a random byte
			b = append(b[:i], append([]byte{byte(r.IntN(256))}, b[i:]...)...)
		case 2: // delete a range
			j := min(len(b), i+1+r.IntN(16))
			b = append(b[:i], b[j:]...)
		case 3: // duplicate a range
			j := min(len(b), i+1+r.IntN(32))
			b = append(b[:j], append(append([]byte{}, b[i:j]...), b[j:]...)...)
		case 4: // truncate
			b = b[:i]
		case 5, 6: // replace the value after a colon with an interesting one
			if k := bytes.IndexByte(b[i:], ':'); k >= 0 {
				start := i + k + 1
				end := start
				for end < len(b) && b[end] != ',' && b[end] != '}' && b[end] != ']' {
					end++
				}
				b = append(b[:start], append([]byte(" "+interesting[r.IntN(len(interesting))]), b[end:]...)...)
			}
		case 7: // a random printable byte in place
			b[i] = byte(32 + r.IntN(95))
		}
	}
	return b
}

// oddBodies are hand-made bodies no mutation reaches quickly.
func oddBodies() []string {
	return []string{
		strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000),
		`{"messages": "not a list", "max_tokens": 4}`,
		`{"messages": [{"role": "user", "content": "` + strings.Repeat("é", 200_000) + `"}], "max_tokens": 4}`,
		"{\"messages\": [{\"role\": \"user\", \"content\": \"\xff\xfe\xfd\"}], \"max_tokens\": 4}",
		`{"messages": [{"role": "user", "content": "hi"}], "messages": null, "max_tokens": 4}`,
		`{"messages": [{"role": "user", "content": "hi"}], "stop": [` + strings.TrimSuffix(strings.Repeat(`"x",`, 5000), ",") + `], "max_tokens": 4}`,
		`{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4, "logprobs": true, "top_logprobs": 1000}`,
		`{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4, "n": 1000}`,
		`{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4, "stream": "yes"}`,
		`{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4, "tools": [{"type": "function"}]}`,
		`{"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "file:///etc/passwd"}}]}], "max_tokens": 4}`,
		`{"model": "../../../../etc/passwd", "messages": [{"role": "user", "content": "hi"}]}`,
		`{"model": "mlx-community/Qwen3-4B-4bit", "adapters": "/tmp/evil", "messages": [{"role": "user", "content": "hi"}]}`,
		`{"model": "mlx-community/Qwen3-4B-4bit", "draft_model": "someone/else", "messages": [{"role": "user", "content": "hi"}]}`,
		``, `null`, `[]`, `"a string"`, `12`,
	}
}

// hostileBodies are the odd bodies and the requests that killed the engine
// (fault_params_test.go) within the body limit of hostileLimits.
func hostileBodies() []string {
	bodies := oddBodies()
	for _, k := range engineKillers() {
		if len(k.body) < 1<<20 {
			bodies = append(bodies, k.body)
		}
	}
	return bodies
}

// hostileOutcome tallies what the front door did with the hostile traffic.
type hostileOutcome struct {
	sent, noAnswer atomic.Int64
	mu             sync.Mutex
	statuses       map[int]int
}

func (o *hostileOutcome) answered(status int) {
	o.mu.Lock()
	o.statuses[status]++
	o.mu.Unlock()
}

// sendBody posts body to path and tallies the answer. A request that gets
// no HTTP answer at all counts in noAnswer.
func (o *hostileOutcome) sendBody(ctx context.Context, client *http.Client, url string, method string, body []byte, header ...string) {
	o.sent.Add(1)
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		o.answered(-1) // the client itself refuses it (a bad method or URL)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	o.tally(client.Do(req))
}

// tally counts an answer by its status, or a request that got none.
func (o *hostileOutcome) tally(resp *http.Response, err error) {
	if err != nil {
		o.noAnswer.Add(1)
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	o.answered(resp.StatusCode)
}

// raw sends bytes on a connection of its own and reads the status line of
// the answer (0: the connection was closed without one).
func (o *hostileOutcome) raw(addr string, payload []byte, closeAfter bool) {
	o.sent.Add(1)
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		o.noAnswer.Add(1)
		return
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(15 * time.Second))
	// The server may close before all of a huge payload is written; its
	// answer can still be read.
	_, _ = c.Write(payload)
	if closeAfter {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
	}
	o.tally(http.ReadResponse(bufio.NewReader(c), nil))
}

// 10,000 malformed, oversized, slow and odd requests, and slowloris
// clients, at the front door: no panic, every request answered (or its
// connection closed by a limit), nothing pinned after, the engine never
// restarted, and a normal request still served.
func TestFaultHostileRequests(t *testing.T) {
	f := startFaultCollector(t, collectorOptions{configs: append(demoConfigs, engineOverlay(t)), sets: hostileLimits})
	waitEngineReady(f.stack)
	base := f.proxyURL("")
	addr := strings.TrimPrefix(base, "http://")
	require.False(t, completion(context.Background(), base+"/v1/chat/completions", false, 4), "warm-up")
	f.mark()

	o := &hostileOutcome{statuses: map[int]int{}}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	r := rand.New(rand.NewPCG(1, 2))

	// The mutated corpus and the odd bodies, to every completion route.
	routes := []string{"/v1/chat/completions", "/chat/completions", "/v1/completions"}
	jobs := make(chan func(), 64)
	var wg sync.WaitGroup
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for job := range jobs {
				if ctx.Err() == nil {
					job()
				}
			}
		}()
	}
	const corpus = 9_000
	for i := 0; i < corpus && ctx.Err() == nil; i++ {
		body := mutate(r, seedBodies[r.IntN(len(seedBodies))])
		url := base + routes[r.IntN(len(routes))]
		jobs <- func() { o.sendBody(ctx, client, url, http.MethodPost, body) }
	}
	for _, b := range hostileBodies() {
		for _, route := range routes {
			body, url := []byte(b), base+route
			jobs <- func() { o.sendBody(ctx, client, url, http.MethodPost, body) }
		}
	}
	// Odd methods, paths and headers.
	for i := 0; i < 200; i++ {
		method := []string{"PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "PROPFIND", "GET", "HEAD"}[i%8]
		path := []string{"/v1/chat/completions", "/v1/models", "/v1/chat/completions/../../v1/models", "//v1//models", "/v1/%ff%00", "/" + strings.Repeat("a", 8000), "/metrics?x=" + strings.Repeat("y", 1000), "/health"}[i/8%8]
		url := base + path
		jobs <- func() { o.sendBody(ctx, client, url, method, []byte(seedBodies[0])) }
	}
	for i := 0; i < 100; i++ {
		body := []byte(seedBodies[0])
		jobs <- func() {
			o.sendBody(ctx, client, base+"/v1/chat/completions", http.MethodPost, body,
				"Content-Type", "text/plain; charset=\xff", "X-Mlx-Trace", "maybe", "traceparent", "00-zz-yy-01", "X-Session-Id", strings.Repeat("s", 4096))
		}
	}
	// Raw framing: malformed chunks, declared and real oversized bodies, a
	// header too large, HTTP/1.0, pipelining, garbage.
	rawPayloads := [][]byte{
		[]byte("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"mes\r\nzz\r\n"),
		[]byte("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 104857600\r\n\r\n{"),
		append([]byte("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n200000\r\n"), bytes.Repeat([]byte("a"), 0x200000)...),
		[]byte("GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + strings.Repeat("b", 2<<20) + "\r\n\r\n"),
		[]byte("POST /v1/chat/completions HTTP/1.0\r\nContent-Length: 2\r\n\r\n{}"),
		[]byte("GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
		[]byte("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 not http at all\r\n\r\n"),
		[]byte("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n{}{}{}"),
		[]byte("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"),
	}
	for i := 0; i < 450; i++ {
		p := rawPayloads[i%len(rawPayloads)]
		jobs <- func() { o.raw(addr, p, true) }
	}
	// Slow bodies: a few bytes, then silence (408 after body_read).
	for i := 0; i < 100; i++ {
		jobs <- func() {
			o.raw(addr, []byte("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"messages\": ["), false)
		}
	}
	close(jobs)
	wg.Wait()

	// Slowloris: 200 clients that send their headers a byte at a time,
	// held open past read_header; each is closed by the proxy.
	var lorisOpen atomic.Int64
	var lw sync.WaitGroup
	for i := 0; i < 200; i++ {
		lw.Add(1)
		go func() {
			defer lw.Done()
			o.sent.Add(1)
			c, err := net.Dial("tcp", addr)
			if err != nil {
				o.noAnswer.Add(1)
				return
			}
			defer c.Close()
			_, _ = c.Write([]byte("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "))
			deadline := time.Now().Add(12 * time.Second)
			for time.Now().Before(deadline) {
				time.Sleep(300 * time.Millisecond)
				if _, err := c.Write([]byte("a")); err != nil {
					return // closed by the proxy
				}
			}
			lorisOpen.Add(1)
		}()
	}
	lw.Wait()

	o.mu.Lock()
	t.Logf("hostile requests sent %d, no answer %d, answers by status %v", o.sent.Load(), o.noAnswer.Load(), o.statuses)
	o.mu.Unlock()
	require.NoError(t, ctx.Err(), "the hostile traffic finished in time")
	assert.GreaterOrEqual(t, o.sent.Load(), int64(10_000))
	assert.Zero(t, lorisOpen.Load(), "every slowloris client was cut off")
	assert.Zero(t, o.noAnswer.Load(), "every request was answered (a limit answers too)")
	assert.Equal(t, 0.0, supervisorValue(f, "mlx_server_restarts_total"), "nothing a client sent brought the engine down")
	assert.False(t, completion(context.Background(), base+"/v1/chat/completions", true, 8), "a normal request is still served")
	sc, err := f.scrape("mlx_proxy")
	require.NoError(t, err)
	assert.LessOrEqual(t, len(labelValues(sc, "mlx_requests_total", "model")), 8, "model label values stay bounded")
	client.CloseIdleConnections()
	f.finish(t, faultRow{name: "hostile requests: fuzz corpus, odd, oversized, slow, slowloris", sent: o.sent.Load(), failed: o.noAnswer.Load(), hasFailed: true,
		note: "failed: requests that got no HTTP answer"})
}

// labelValues lists the distinct values of label in the family name.
func labelValues(sc *promtext.Scrape, name, label string) []string {
	seen := map[string]bool{}
	var out []string
	if fam := sc.Families[name]; fam != nil {
		for _, m := range fam.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && !seen[l.GetValue()] {
					seen[l.GetValue()] = true
					out = append(out, l.GetValue())
				}
			}
		}
	}
	return out
}

// servedAnyOverlay lets every model name through to the engine (served_models: ["*"]).
func servedAnyOverlay(t *testing.T) string {
	return writeOverlay(t, "served-any.yaml", "extensions:\n  mlx_proxy:\n    served_models: [\"*\"]\n")
}

// 1,000 junk model names: the front door answers them itself (404
// model_not_found) without the engine; and even with the door open
// (served_models "*"), where the engine refuses them, no junk name gets a
// label slot: the real model is still counted under its own name.
func TestFaultJunkModelNames(t *testing.T) {
	const real = "mlx-community/Qwen3-4B-4bit"
	for _, open := range []bool{false, true} {
		configs := append(append([]string{}, demoConfigs...), engineOverlay(t))
		if open {
			configs = append(configs, servedAnyOverlay(t))
		}
		f := startFaultCollector(t, collectorOptions{configs: configs})
		waitEngineReady(f.stack)
		url := f.proxyURL("/v1/chat/completions")
		f.mark()
		statuses := map[int]int{}
		failed := int64(0)
		n := 1000
		if open {
			n = 200 // each makes the engine drop its model: the real one reloads after
		}
		for i := 0; i < n; i++ {
			body := fmt.Sprintf(`{"model": "junk-%d-%x", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}`, i, rand.Uint64())
			resp, b := postJSON(t, url, body)
			statuses[resp.StatusCode]++
			if resp.StatusCode != http.StatusNotFound || (!open && !strings.Contains(string(b), "model_not_found")) {
				failed++
			}
		}
		for i := 0; i < 5; i++ {
			resp, _ := postJSON(t, url, `{"model": "`+real+`", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}`)
			require.Equal(t, http.StatusOK, resp.StatusCode)
		}
		sc := f.waitFor("mlx_proxy", 10*time.Second, "the real model's requests counted", func(sc *promtext.Scrape) bool {
			// chat or reasoning: the engine of this overlay thinks by
			// default, as a real one for Qwen3 does (mlx_lm v0.31.3
			// tokenizer_utils.py, TokenizerWrapper.apply_chat_template).
			return sum(sc, "mlx_requests_total", "model", real, "streaming", "false", "origin", "user") == 5
		})
		models := labelValues(sc, "mlx_requests_total", "model")
		t.Logf("open=%t: answers %v; model label values %v", open, statuses, models)
		assert.LessOrEqual(t, len(models), 8, "at most max_model_label_values")
		for _, m := range models {
			assert.Contains(t, []string{real, "other"}, m, "no junk name became a label value")
		}
		if !open {
			assert.Equal(t, map[int]int{http.StatusNotFound: n}, statuses, "the front door answered every junk name itself")
			sup, err := f.scrape("prometheus/supervisor")
			require.NoError(t, err)
			assert.Equal(t, 0.0, value(t, sup, "mlx_server_restarts_total"))
		}
		name := "1,000 junk model names (allowlist)"
		if open {
			name = "200 junk model names (served_models: *)"
		}
		f.finish(t, faultRow{name: name, sent: int64(n + 5), failed: failed, hasFailed: true,
			note: fmt.Sprintf("model label values: %d", len(models))})
		f.stop()
	}
}
