package proxy

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/span"
	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
)

// The CPU one non-streamed answer costs the proxy outside net/http, with
// logprobs injected (top 3, the default) into a chat of about 30 tokens,
// as in make bench: on the request path, the rewrite (logprobs taken out,
// the answer read for the record) and the relay's read of it; off it, the
// scoring job (heuristics and token confidence); and the same answer
// re-emitted as a stream (destreamed-request-path). No network: the answer
// is the simulated engine's, recorded once.
//
//	go test -run '^$' -bench AnswerWork -count 8 ./proxy/ | benchstat -
func BenchmarkAnswerWork(b *testing.B) {
	engine := mlxsim.New(simOptions(), io.Discard)
	b.Cleanup(engine.Close)
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(
		`{"messages": [{"role": "user", "content": "Say hello"}], "max_tokens": 32, "logprobs": true, "top_logprobs": 3}`))
	w := httptest.NewRecorder()
	engine.Handler().ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		b.Fatalf("engine: %d %s", w.Code, w.Body)
	}
	answer := w.Body.Bytes()
	var work func(*Record) (*Record, *scoreJob)
	cfg := DefaultConfig()
	cfg.Upstream, cfg.Model, cfg.ProbeInterval = "http://127.0.0.1:1", testModel, time.Hour
	p, err := New(cfg, zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	one := func() (*Record, *scoreJob) {
		return work(&Record{Route: RouteChat, RequestParsed: true, Facts: span.Facts{Kind: KindChat, Model: testModel, LogprobsSource: SourceInjected, Status: 200}})
	}
	// A streamed chat request sent non-streamed (destream_fraction): the
	// answer re-emitted as a stream.
	destreamed := func() (*Record, *scoreJob) {
		return work(&Record{Route: RouteChat, RequestParsed: true, Facts: span.Facts{Kind: KindChat, Model: testModel, Streaming: true, LogprobsSource: SourceDestreamed, Destreamed: true, Status: 200}})
	}
	work = func(rec *Record) (*Record, *scoreJob) {
		res := &http.Response{StatusCode: 200, Header: http.Header{"Content-Length": {strconv.Itoa(len(answer))}},
			ContentLength: int64(len(answer)), Body: io.NopCloser(bytes.NewReader(answer)), Request: req}
		if err := p.rewriteAnswer(res, rec); err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, res.Body); err != nil {
			b.Fatal(err)
		}
		job, scored := p.scorer.jobOf(rec)
		if !scored {
			b.Fatal("not scored")
		}
		return rec, &job
	}
	b.Run("request-path", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			one()
		}
	})
	b.Run("destreamed-request-path", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			destreamed()
		}
	})
	b.Run("scoring", func(b *testing.B) {
		_, job := one()
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			p.scorer.score(job)
		}
	})
}

// reportCPU reports the process's CPU time (user and system, the garbage
// collector's included) per op as cpu-ns/op, when the returned function
// runs: on a machine shared with other work it moves far less than the
// wall time of ns/op.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() { b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op") }
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
