package proxy

// Benchmarks of what the proxy costs, proxy and direct side by side in one
// run, against the simulated engine with no artificial delay:
//
//	go test -run '^$' -bench . -benchtime 2000x ./proxy/
//
// BenchmarkAddedLatency reports, per mode (stream or not) and concurrency
// (1, 16, 64): requests per second and latency p50/p99 direct and through
// the proxy, and the difference (added-p50-ms, added-p99-ms). A request's
// latency is until its whole answer has been read.
//
// BenchmarkChunkLatency reports the time from the engine writing an SSE
// chunk to the client reading it, direct and through the proxy, with the
// engine paced (one chunk every 5 ms) so that no chunk queues behind the
// one before it: a chunk the proxy held back would show in the max. The
// engine streams logprobs when asked, so the proxy's streams are scored
// from their chunks (confidence.score_streams) and stripped.
//
// BenchmarkLogprobs reports, for 256-token answers, the latency p50 direct
// and through the proxy without logprobs asked for (top_logprobs 0), with
// them injected and stripped (the default, top 3), and for streams run
// non-streamed and re-emitted (destream_fraction 1). The engine's own cost
// of computing logprobs is part of what the client sees, so it is in the
// figures. Scoring runs after the answer and is not.
//
// BenchmarkStreamChunk reports what the stream tap does per chunk, without
// the network: one mlx_lm chat chunk in, the client's bytes out, for a
// stream nobody asked logprobs for (plain), one whose logprobs the proxy
// asked for and takes out (scored: the chunk with a top-3 list, read and
// stripped), and one whose client asked (client-logprobs: read, relayed
// as they are). ns/op and allocs/op are per chunk; the record is renewed
// every 1,000 chunks, an answer's worth.
//
// Nothing here asserts a timing: the figures are for reading.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/span"
	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/loadgen"
)

const (
	benchChat   = `{"messages": [{"role": "user", "content": "Say hello"}], "max_tokens": 16}`
	benchStream = `{"messages": [{"role": "user", "content": "Say hello"}], "max_tokens": 16, "stream": true}`
)

type benchEnv struct {
	direct, proxy string
	p             *Proxy
	client        *http.Client
	writes        *writeLog
}

func newBenchEnv(b *testing.B, so mlxsim.Options, configure ...func(*Config)) *benchEnv {
	b.Helper()
	engine := mlxsim.New(so, io.Discard)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	wl := &writeLog{}
	srv := httptest.NewUnstartedServer(engine.Handler())
	srv.Listener = &loggedListener{Listener: ln, log: wl}
	srv.Start()

	cfg := DefaultConfig()
	cfg.Upstream = srv.URL
	cfg.Model = testModel
	cfg.ProbeInterval = time.Hour
	for _, c := range configure {
		c(&cfg)
	}
	p, err := New(cfg, zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	p.Serve(pl)
	tr := &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, DisableCompression: true}
	b.Cleanup(func() {
		tr.CloseIdleConnections()
		_ = p.Shutdown(context.Background())
		engine.Close()
		srv.Close()
	})
	return &benchEnv{direct: srv.URL, proxy: "http://" + pl.Addr().String(), p: p, client: &http.Client{Transport: tr}, writes: wl}
}

// request sends one completion and reads its whole answer.
func (e *benchEnv) request(base, body string) error {
	return loadgen.Post(e.client, base+"/v1/chat/completions", body)()
}

// load sends n requests from c workers and returns each one's latency and
// the requests per second.
func (e *benchEnv) load(b *testing.B, base, body string, n, c int) ([]time.Duration, float64) {
	lat, rps, err := loadgen.Run(n, c, func() error { return e.request(base, body) })
	if err != nil {
		b.Fatal(err)
	}
	return lat, rps
}

var percentile = loadgen.Percentile

func BenchmarkAddedLatency(b *testing.B) {
	for _, stream := range []bool{false, true} {
		body := benchChat
		if stream {
			body = benchStream
		}
		for _, c := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("stream=%v/c=%d", stream, c), func(b *testing.B) {
				e := newBenchEnv(b, simOptions())
				n := max(b.N, c)
				// Warm both paths (connections, first-request costs).
				e.load(b, e.direct, body, c, c)
				e.load(b, e.proxy, body, c, c)
				b.ResetTimer()
				dl, drps := e.load(b, e.direct, body, n, c)
				pl, prps := e.load(b, e.proxy, body, n, c)
				b.StopTimer()
				b.ReportMetric(0, "ns/op")
				b.ReportMetric(drps, "direct-req/s")
				b.ReportMetric(prps, "proxy-req/s")
				b.ReportMetric(percentile(dl, 0.5), "direct-p50-ms")
				b.ReportMetric(percentile(pl, 0.5), "proxy-p50-ms")
				b.ReportMetric(percentile(dl, 0.99), "direct-p99-ms")
				b.ReportMetric(percentile(pl, 0.99), "proxy-p99-ms")
				b.ReportMetric(percentile(pl, 0.5)-percentile(dl, 0.5), "added-p50-ms")
				b.ReportMetric(percentile(pl, 0.99)-percentile(dl, 0.99), "added-p99-ms")
			})
		}
	}
}

// BenchmarkLiveChunkLatency: the chunk latency of streams through the
// proxy with the live stream off and on, on to a pipeline whose receiver is
// down (every batch fails), interleaved in one run.
func BenchmarkLiveChunkLatency(b *testing.B) {
	so := simOptions()
	so.DecodeTPS = 200 // one chunk every 5 ms
	e := newBenchEnv(b, so)
	body := `{"messages": [{"role": "user", "content": "Say hello"}], "max_tokens": 32, "stream": true}`
	var off, on []time.Duration
	measure := func(into *[]time.Duration) {
		for range max(b.N/4, 1) {
			l, err := e.chunkLatencies(e.proxy, body)
			if err != nil {
				b.Fatal(err)
			}
			*into = append(*into, l...)
		}
	}
	down := func(context.Context, []*LiveRecord) error { return errors.New("receiver down") }
	for range 2 {
		measure(&off)
		detach := e.p.AttachLive(down)
		measure(&on)
		detach(context.Background())
	}
	b.ReportMetric(percentile(off, 0.5), "off-chunk-p50-ms")
	b.ReportMetric(percentile(on, 0.5), "on-chunk-p50-ms")
	b.ReportMetric(percentile(off, 0.99), "off-chunk-p99-ms")
	b.ReportMetric(percentile(on, 0.99), "on-chunk-p99-ms")
	b.ReportMetric(percentile(on, 0.99)-percentile(off, 0.99), "added-chunk-p99-ms")
	b.ReportMetric(0, "ns/op")
}

func BenchmarkChunkLatency(b *testing.B) {
	so := simOptions()
	so.DecodeTPS = 200       // one chunk every 5 ms
	so.StreamLogprobs = true // the proxy's streams are scored from their chunks
	e := newBenchEnv(b, so)
	body := `{"messages": [{"role": "user", "content": "Say hello"}], "max_tokens": 32, "stream": true}`
	for _, target := range []struct{ name, base string }{{"direct", e.direct}, {"proxy", e.proxy}} {
		var lat []time.Duration
		for range max(b.N/2, 1) {
			l, err := e.chunkLatencies(target.base, body)
			if err != nil {
				b.Fatal(err)
			}
			lat = append(lat, l...)
		}
		b.ReportMetric(percentile(lat, 0.5), target.name+"-chunk-p50-ms")
		b.ReportMetric(percentile(lat, 0.99), target.name+"-chunk-p99-ms")
		b.ReportMetric(percentile(lat, 1), target.name+"-chunk-max-ms")
	}
	b.ReportMetric(0, "ns/op")
}

// chunkLatencies runs one stream and pairs, in order, each content chunk
// the engine wrote with the moment the client read it.
func (e *benchEnv) chunkLatencies(base, body string) ([]time.Duration, error) {
	e.writes.reset()
	resp, err := e.client.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var read []time.Time
	rd := bufio.NewReader(resp.Body)
	for {
		line, err := rd.ReadString('\n')
		if strings.HasPrefix(line, "data: {") {
			read = append(read, time.Now())
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	written := e.writes.times()
	if len(written) != len(read) {
		return nil, fmt.Errorf("engine wrote %d chunks, client read %d", len(written), len(read))
	}
	out := make([]time.Duration, len(read))
	for i := range read {
		out[i] = read[i].Sub(written[i])
	}
	return out, nil
}

// writeLog notes when the engine wrote each content chunk (not the usage
// chunk, which the proxy asks for and removes).
type writeLog struct {
	mu sync.Mutex
	at []time.Time
}

func (w *writeLog) reset() { w.mu.Lock(); w.at = w.at[:0]; w.mu.Unlock() }

func (w *writeLog) times() []time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.at)
}

func (w *writeLog) note(p []byte) {
	s := string(p)
	if strings.HasPrefix(s, "data: {") && !strings.Contains(s, `"usage"`) {
		w.mu.Lock()
		w.at = append(w.at, time.Now())
		w.mu.Unlock()
	}
}

type loggedListener struct {
	net.Listener
	log *writeLog
}

func (l *loggedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &loggedConn{Conn: c, log: l.log}, nil
}

type loggedConn struct {
	net.Conn
	log *writeLog
}

func (c *loggedConn) Write(p []byte) (int, error) {
	c.log.note(p) // just before the bytes go to the socket
	return c.Conn.Write(p)
}

func BenchmarkLogprobs(b *testing.B) {
	const chat = `{"messages": [{"role": "user", "content": "Tell me a long story"}], "max_tokens": 256}`
	const stream = `{"messages": [{"role": "user", "content": "Tell me a long story"}], "max_tokens": 256, "stream": true}`
	for _, c := range []int{1, 8} {
		b.Run(fmt.Sprintf("c=%d", c), func(b *testing.B) {
			off := newBenchEnv(b, simOptions(), func(cfg *Config) { cfg.TopLogprobs = 0 })
			on := newBenchEnv(b, simOptions(), func(cfg *Config) { cfg.DestreamFraction = 1 })
			n := max(b.N, c)
			for _, w := range []struct{ base, body string }{{off.direct, chat}, {off.proxy, chat}, {on.proxy, chat}, {on.direct, stream}, {on.proxy, stream}} {
				on.load(b, w.base, w.body, c, c)
			}
			b.ResetTimer()
			direct, _ := off.load(b, off.direct, chat, n, c)
			plain, _ := off.load(b, off.proxy, chat, n, c)
			injected, _ := on.load(b, on.proxy, chat, n, c)
			streamDirect, _ := on.load(b, on.direct, stream, n, c)
			destreamed, _ := on.load(b, on.proxy, stream, n, c)
			b.StopTimer()
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(percentile(direct, 0.5), "direct-p50-ms")
			b.ReportMetric(percentile(plain, 0.5), "proxy-no-logprobs-p50-ms")
			b.ReportMetric(percentile(injected, 0.5), "proxy-injected-p50-ms")
			b.ReportMetric(percentile(streamDirect, 0.5), "stream-direct-p50-ms")
			b.ReportMetric(percentile(destreamed, 0.5), "stream-destreamed-p50-ms")
		})
	}
}

// One chunk of mlx_lm's chat stream, and the same with a top-3 list
// (mlxsim's bytes, with --sim-stream-logprobs).
const (
	benchPlainChunk    = `data: {"id": "chatcmpl-30c3ac5a-764b-417b-8336-5cf18b0130b5", "system_fingerprint": "0.31.3-0.32.1-macOS-15.6.1-arm64-arm-64bit-applegpu_g15s", "object": "chat.completion.chunk", "model": "default_model", "created": 1796530624, "choices": [{"index": 0, "finish_reason": null, "delta": {"role": "assistant", "content": " result"}}]}` + "\n\n"
	benchLogprobsChunk = `data: {"id": "chatcmpl-30c3ac5a-764b-417b-8336-5cf18b0130b5", "system_fingerprint": "0.31.3-0.32.1-macOS-15.6.1-arm64-arm-64bit-applegpu_g15s", "object": "chat.completion.chunk", "model": "default_model", "created": 1796530624, "choices": [{"index": 0, "finish_reason": null, "logprobs": {"content": [{"id": 68483, "token": "\u0120result", "logprob": -0.0712890625, "top_logprobs": [{"id": 68483, "token": "\u0120result", "logprob": -0.0712890625}, {"id": 30452, "token": "\u0120to", "logprob": -3.25}, {"id": 98962, "token": "\u0120machine", "logprob": -4.09375}]}]}, "delta": {"role": "assistant", "content": " result"}}]}` + "\n\n"
)

func BenchmarkStreamChunk(b *testing.B) {
	for _, c := range []struct{ name, chunk, source string }{
		{"plain", benchPlainChunk, ""},
		{"scored", benchLogprobsChunk, SourceStreamed},
		{"client-logprobs", benchLogprobsChunk, SourceClient},
	} {
		b.Run(c.name, func(b *testing.B) {
			chunk := []byte(c.chunk)
			body := &repeatedChunk{chunk: chunk}
			out := make([]byte, 64<<10)
			var tap *streamTap
			b.SetBytes(int64(len(chunk)))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if i%1000 == 0 {
					tap = newStreamTap(context.Background(), body, &Record{Facts: span.Facts{LogprobsSource: c.source}}, false)
				}
				i++
				n, err := tap.Read(out)
				if err != nil || n == 0 {
					b.Fatal(n, err)
				}
			}
			if c.source == SourceStreamed && bytes.Contains(out, logprobsKey) {
				b.Fatal("the logprobs reached the client")
			}
		})
	}
}

// repeatedChunk is an engine that sends the same chunk for ever, one per
// read.
type repeatedChunk struct{ chunk []byte }

func (r *repeatedChunk) Read(p []byte) (int, error) { return copy(p, r.chunk), nil }
func (r *repeatedChunk) Close() error               { return nil }
