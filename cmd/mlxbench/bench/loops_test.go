package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
)

// Against the simulated engine with a known prefill and decode rate, TTFT
// and the decode time come out as its settings say. The sim prefills the
// uncached prompt tokens at PrefillTPS, then takes one token time more for
// the first token (tokens/PrefillTPS + 1/DecodeTPS), then one token per
// 1/DecodeTPS. Each step is a timer sleep, which only ever runs late, and
// the client's clock starts before the engine's: the settings are lower
// bounds on what the client measures, never a speed it must reach. The
// rest is counting: a gap between each two output chunks, inside the
// time after the first, and tok/s is the tokens after the first over that
// time.
func TestTTFTAndTokensPerSecondMatchTheSim(t *testing.T) {
	const prefill, decode = 200.0, 100.0
	_, url := startSim(t, mlxsim.Options{PrefillTPS: prefill, DecodeTPS: decode})
	tg := simTarget(t, url, 60*time.Second)
	rec := NewRecorder()
	text, _ := Prompt("short")
	run := RunID()
	ClosedLoop{Level: 0, Workers: 2, MaxRequests: 4, Call: func(_, n int) Call {
		return userCall(Nonce(run, n)+text, true, 20)
	}}.Run(context.Background(), tg, rec)
	samples := rec.Samples()
	if len(samples) != 4 {
		t.Fatalf("%d samples", len(samples))
	}
	for _, s := range samples {
		if !s.OK() || s.PromptTokens == 0 || s.OutputTokens < 2 || s.OutputTokens > 20 || s.Keepalives == 0 {
			t.Fatalf("sample %+v", s)
		}
		// Microsecond sample times are truncated: 1 ms of slack.
		ttft := (float64(s.PromptTokens-s.CachedTokens)/prefill + 1/decode) * 1000
		if got := s.TTFTms(); got < ttft-1 {
			t.Errorf("TTFT %.1f ms, before the sim's settings let the first token out (%.1f ms, %d prompt tokens)", got, ttft, s.PromptTokens)
		}
		last := ttft + float64(s.OutputTokens-1)/decode*1000
		if got := s.E2Ems(); got < last-1 {
			t.Errorf("latency %.1f ms, before the sim's settings let the last token out (%.1f ms)", got, last)
		}
		// A gap between each two output chunks; a chunk holds one token or
		// more (the detokenizer holds back a partial word).
		if len(s.ITLUS) == 0 || len(s.ITLUS) > s.OutputTokens-1 {
			t.Errorf("%d inter-token gaps for %d tokens", len(s.ITLUS), s.OutputTokens)
		}
		var gaps int64
		for _, g := range s.ITLUS {
			gaps += g
		}
		if gen := s.GenerationMs(); float64(gaps)/1000 > gen || gen <= 0 {
			t.Errorf("the gaps add up to %.3f ms, the time after the first token is %.3f ms", float64(gaps)/1000, gen)
		}
		if tps, want := s.TokensPerSecond(), float64(s.OutputTokens-1)/(s.GenerationMs()/1000); math.Abs(tps-want) > 1e-9*want {
			t.Errorf("%.3f tok/s, the tokens after the first over the time after it are %.3f/s", tps, want)
		}
	}
	sum := Summarize(samples, SummaryOptions{})
	if sum.Requests != 4 || sum.OK != 4 || sum.ITL.P50 <= 0 || sum.OutTokPerS <= 0 || sum.ReqPerS <= 0 {
		t.Errorf("summary %+v", sum)
	}
}

// An open loop sends on its schedule: one request per scheduled time, at
// the time drawn (uniform at the rate asked for; Poisson from the seed),
// never before it. How late a send goes out depends on the host; the
// lateness is reported (Summary.Lateness), not asserted.
func TestOpenLoopHoldsItsRate(t *testing.T) {
	_, url := startSim(t, mlxsim.Options{PrefillTPS: 1e6, DecodeTPS: 1e5})
	tg := simTarget(t, url, 60*time.Second)
	text, _ := Prompt("short")
	for i, tc := range []struct {
		arrival string
		rate    float64
	}{{Uniform, 40}, {Poisson, 40}} {
		rec := NewRecorder()
		ol := OpenLoop{Level: i, Rate: tc.rate, Arrival: tc.arrival, Seed: 7, Duration: time.Second, MaxInFlight: 256,
			Call: func(n int) Call { return userCall(text, true, 8) }}
		if err := ol.Run(context.Background(), tg, rec); err != nil {
			t.Fatal(err)
		}
		sched, _ := Schedule(tc.arrival, tc.rate, ol.Duration, 0, 7)
		samples := rec.Samples()
		s := Summarize(samples, SummaryOptions{OpenLoop: true, LateThreshold: 10 * time.Millisecond})
		if s.Requests != len(sched) || s.OK != s.Requests {
			t.Fatalf("%s: %d requests (%d ok), %d scheduled", tc.arrival, s.Requests, s.OK, len(sched))
		}
		if tc.arrival == Uniform && math.Abs(s.ScheduledRate-tc.rate) > 1e-6 {
			t.Errorf("uniform schedule at %v/s", s.ScheduledRate)
		}
		// Each request carries its place in the schedule (the worker) and
		// its scheduled time, the schedule's own offset from the first
		// (microseconds, truncated: 1 of slack), and went out at or after
		// it.
		seen := map[int]bool{}
		var first int64
		for _, x := range samples {
			if x.Worker == 0 {
				first = x.SchedUS
			}
		}
		for _, x := range samples {
			if x.Worker < 0 || x.Worker >= len(sched) || seen[x.Worker] {
				t.Fatalf("%s: sample of schedule place %d", tc.arrival, x.Worker)
			}
			seen[x.Worker] = true
			want := (sched[x.Worker] - sched[0]).Microseconds()
			if got := x.SchedUS - first; got < want-1 || got > want+1 {
				t.Errorf("%s: request %d scheduled at +%d µs, the schedule says +%d µs", tc.arrival, x.Worker, got, want)
			}
			if x.SentUS < x.SchedUS {
				t.Errorf("%s: request %d sent %d µs before its time", tc.arrival, x.Worker, x.SchedUS-x.SentUS)
			}
		}
		t.Logf("%s: scheduled %.3f/s, sent %.3f/s, lateness p99 %.2f ms, %d late", tc.arrival, s.ScheduledRate, s.SendRate, s.Lateness.P99, s.Late)
	}
}

// A server that stops answering (the sim's hang fault after 10
// completions) shows up as timeouts counted from each request's scheduled
// start, while the sends go on: the loop does not wait for answers, so
// the hung requests are in flight together.
func TestHungServerShowsAsLatencyNotALowerSendRate(t *testing.T) {
	const timeout = 2 * time.Second
	_, url := startSim(t, mlxsim.Options{PrefillTPS: 1e6, DecodeTPS: 1e5, HangAfter: 10})
	tg := simTarget(t, url, timeout)
	text, _ := Prompt("short")
	rec := NewRecorder()
	ol := OpenLoop{Rate: 20, Arrival: Uniform, Duration: 2 * time.Second, MaxInFlight: 256,
		Call: func(n int) Call { return userCall(text, true, 8) }}
	if err := ol.Run(context.Background(), tg, rec); err != nil {
		t.Fatal(err)
	}
	samples := rec.Samples()
	s := Summarize(samples, SummaryOptions{OpenLoop: true, LateThreshold: 10 * time.Millisecond})
	if s.Requests != 40 {
		t.Fatalf("%d requests, 40 scheduled", s.Requests)
	}
	if s.OK != 10 || s.Errors[CauseTimeout] != 30 {
		t.Errorf("%d ok, errors %v: the sim answers 10, then hangs", s.OK, s.Errors)
	}
	// The most requests in flight when one was sent.
	most := 0
	for _, a := range samples {
		n := 0
		for _, b := range samples {
			if b.SentUS <= a.SentUS && b.SchedUS+b.E2EUS > a.SentUS {
				n++
			}
		}
		most = max(most, n)
	}
	if most < 2 {
		t.Errorf("at most %d request in flight: the loop waited for the hung server's answers", most)
	}
	for _, x := range samples {
		if x.Cause == CauseTimeout && x.E2Ems() < float64(timeout.Milliseconds()) {
			t.Errorf("a request timed out %.0f ms from its schedule, before its %v", x.E2Ems(), timeout)
		}
	}
	t.Logf("%d ok, %d timeouts, sent %.3f/s, %d in flight at most", s.OK, s.Errors[CauseTimeout], s.SendRate, most)
}

// Coordinated omission: a server that takes at least 100 ms per request
// while the schedule asks for 20/s, with one request allowed in flight.
// A closed loop would report the service time; from the schedule, request
// n cannot go out before n x 100 ms, n x 50 ms after its time: every send
// after the first is late, the last by 950 ms at the least, and the
// latency from the schedule holds that wait.
func TestSlowServerLatencyFromSchedule(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		time.Sleep(50 * time.Millisecond)
		fmt.Fprint(w, `data: {"choices": [{"index": 0, "delta": {"content": "a"}}]}`+"\n\n")
		w.(http.Flusher).Flush()
		time.Sleep(50 * time.Millisecond)
		fmt.Fprint(w, `data: {"choices": [{"index": 0, "delta": {"content": "b"}, "finish_reason": "stop"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	defer slow.Close()
	tg := simTarget(t, slow.URL+"/v1", 60*time.Second)
	rec := NewRecorder()
	ol := OpenLoop{Rate: 20, Arrival: Uniform, Duration: time.Second, MaxInFlight: 1,
		Call: func(n int) Call { return userCall("x", true, 8) }}
	if err := ol.Run(context.Background(), tg, rec); err != nil {
		t.Fatal(err)
	}
	s := Summarize(rec.Samples(), SummaryOptions{OpenLoop: true, LateThreshold: 10 * time.Millisecond})
	if s.Requests != 20 || s.OK != 20 {
		t.Fatalf("%+v", s)
	}
	for _, x := range rec.Samples() {
		if x.ServiceMs() < 99.99 { // microseconds, truncated
			t.Errorf("service latency %.1f ms, under the server's 100", x.ServiceMs())
		}
	}
	if s.Late < 19 || s.Lateness.Max < 949.99 {
		t.Errorf("%d late sends, lateness max %.0f ms: want the 19 after the first late, the last by 950 ms or more", s.Late, s.Lateness.Max)
	}
	if s.E2E.Max < 949.99+99.99 || s.E2E.Max < s.ServiceE2E.Max {
		t.Errorf("latency from the schedule: max %.0f ms, service max %.0f ms", s.E2E.Max, s.ServiceE2E.Max)
	}
	t.Logf("service p99 %.0f ms, from schedule p99 %.0f ms, %d late", s.ServiceE2E.P99, s.E2E.P99, s.Late)
}

// Every failure has its cause: an HTTP status, a stream cut before
// [DONE], a connection that got no answer, a timeout.
func TestErrorCauses(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/status/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"error": {"message": "busy", "type": "rate_limit"}}`)
	})
	mux.HandleFunc("/cut/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, ": keepalive 1/2\n\n"+`data: {"choices": [{"index": 0, "delta": {"content": "a"}}]}`+"\n\n")
	})
	mux.HandleFunc("/garbage/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {not json\n\n")
	})
	mux.HandleFunc("/drop/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	})
	arrived := make(chan struct{}, 2)
	mux.HandleFunc("/slow/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		arrived <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for path, want := range map[string]string{"status": "http_429", "cut": CauseBrokenStream, "garbage": CauseBrokenStream, "drop": CauseConnection, "slow": CauseTimeout} {
		// Only the slow path waits out its timeout; the others answer at
		// once, and get a bound they never reach on a loaded host.
		timeout := time.Minute
		if path == "slow" {
			timeout = 300 * time.Millisecond
		}
		tg := simTarget(t, srv.URL+"/"+path+"/v1", timeout)
		r := tg.Do(context.Background(), userCall("x", true, 4), time.Now())
		if r.Cause != want {
			t.Errorf("%s: cause %q (%v), want %q", path, r.Cause, r.Err, want)
		}
	}
	<-arrived // the slow path's timed-out request
	// A run stopped while a request is in flight (the server has it):
	// cancelled, not an error.
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	r := simTarget(t, srv.URL+"/slow/v1", 5*time.Second).Do(ctx, userCall("x", true, 4), time.Now())
	if r.Cause != CauseCancelled {
		t.Errorf("cancelled: %q (%v)", r.Cause, r.Err)
	}
}
