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
// and tok/s come out as its settings say. The sim prefills the uncached
// prompt tokens at PrefillTPS, then takes one token time more for the
// first token (tokens/PrefillTPS + 1/DecodeTPS), then one token per
// 1/DecodeTPS. Each step is a timer sleep, which can only run late (by
// several milliseconds while make test runs packages in parallel on 2
// cores): the bounds are tight against earliness and allow lateness. The
// sim decodes at 20 tok/s, so that a few milliseconds late are a small
// share of a token's 50 ms.
func TestTTFTAndTokensPerSecondMatchTheSim(t *testing.T) {
	const prefill, decode = 200.0, 20.0
	_, url := startSim(t, mlxsim.Options{PrefillTPS: prefill, DecodeTPS: decode})
	tg := simTarget(t, url, 20*time.Second)
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
		if !s.OK() || s.PromptTokens == 0 || s.OutputTokens < 2 || s.Keepalives == 0 {
			t.Fatalf("sample %+v", s)
		}
		want := (float64(s.PromptTokens-s.CachedTokens)/prefill + 1/decode) * 1000
		if got := s.TTFTms(); got < want-2 || got > want*1.2+40 {
			t.Errorf("TTFT %.1f ms, the sim's settings say %.1f ms (%d prompt tokens)", got, want, s.PromptTokens)
		}
		if tps := s.TokensPerSecond(); tps > decode*1.02 || tps < decode*0.75 {
			t.Errorf("%.1f tok/s, the sim decodes at %v", tps, decode)
		}
	}
	sum := Summarize(samples, SummaryOptions{})
	if itl := sum.ITL.P50; itl < 1000/decode*0.98 || itl > 1000/decode*1.3 {
		t.Errorf("ITL p50 %.2f ms, want about %.1f", itl, 1000/decode)
	}
	if sum.OutTokPerS <= 0 || sum.ReqPerS <= 0 {
		t.Errorf("throughput %+v", sum)
	}
}

// An open loop sends on its schedule: the achieved send rate is within 2%
// of the rate asked for (uniform) and of the schedule drawn (Poisson).
func TestOpenLoopHoldsItsRate(t *testing.T) {
	_, url := startSim(t, mlxsim.Options{PrefillTPS: 1e6, DecodeTPS: 1e5})
	tg := simTarget(t, url, 10*time.Second)
	text, _ := Prompt("short")
	for i, tc := range []struct {
		arrival string
		rate    float64
	}{{Uniform, 40}, {Poisson, 40}} {
		rec := NewRecorder()
		ol := OpenLoop{Level: i, Rate: tc.rate, Arrival: tc.arrival, Seed: 7, Duration: 2500 * time.Millisecond, MaxInFlight: 256,
			Call: func(n int) Call { return userCall(text, true, 8) }}
		if err := ol.Run(context.Background(), tg, rec); err != nil {
			t.Fatal(err)
		}
		sched, _ := Schedule(tc.arrival, tc.rate, ol.Duration, 0, 7)
		s := Summarize(rec.Samples(), SummaryOptions{OpenLoop: true, LateThreshold: 10 * time.Millisecond})
		if s.Requests != len(sched) || s.OK != s.Requests {
			t.Fatalf("%s: %d requests (%d ok), %d scheduled", tc.arrival, s.Requests, s.OK, len(sched))
		}
		target := tc.rate
		if tc.arrival == Poisson {
			target = s.ScheduledRate // the draw's own rate; the process's is tested in schedule_test.go
		} else if math.Abs(s.ScheduledRate-tc.rate) > 1e-6 {
			t.Errorf("uniform schedule at %v/s", s.ScheduledRate)
		}
		if math.Abs(s.SendRate-target)/target > 0.02 {
			t.Errorf("%s: sent %.3f/s, want %.3f/s within 2%%", tc.arrival, s.SendRate, target)
		}
		t.Logf("%s: scheduled %.3f/s, sent %.3f/s, lateness p99 %.2f ms, %d late", tc.arrival, s.ScheduledRate, s.SendRate, s.Lateness.P99, s.Late)
	}
}

// A server that stops answering (the sim's hang fault after 10
// completions) shows up as latency and timeouts counted from each
// request's scheduled start, while the sends keep their rate.
func TestHungServerShowsAsLatencyNotALowerSendRate(t *testing.T) {
	_, url := startSim(t, mlxsim.Options{PrefillTPS: 1e6, DecodeTPS: 1e5, HangAfter: 10})
	tg := simTarget(t, url, 600*time.Millisecond)
	text, _ := Prompt("short")
	rec := NewRecorder()
	ol := OpenLoop{Rate: 20, Arrival: Uniform, Duration: 2 * time.Second, MaxInFlight: 256,
		Call: func(n int) Call { return userCall(text, true, 8) }}
	if err := ol.Run(context.Background(), tg, rec); err != nil {
		t.Fatal(err)
	}
	s := Summarize(rec.Samples(), SummaryOptions{OpenLoop: true, LateThreshold: 10 * time.Millisecond})
	if s.Requests != 40 {
		t.Fatalf("%d requests, 40 scheduled", s.Requests)
	}
	if math.Abs(s.SendRate-20)/20 > 0.02 {
		t.Errorf("sent %.3f/s while the server hung, want 20/s", s.SendRate)
	}
	if s.OK < 9 || s.OK > 11 || s.Errors[CauseTimeout] != s.Requests-s.OK {
		t.Errorf("%d ok, errors %v", s.OK, s.Errors)
	}
	var worst float64
	for _, x := range rec.Samples() {
		if x.Cause == CauseTimeout {
			worst = max(worst, x.E2Ems())
			if x.E2Ems() < 600 {
				t.Errorf("a timed-out request has %.0f ms from its schedule", x.E2Ems())
			}
		}
	}
	t.Logf("%d ok, %d timeouts, sent %.3f/s, worst latency %.0f ms", s.OK, s.Errors[CauseTimeout], s.SendRate, worst)
}

// Coordinated omission: a server that takes 100 ms per request while the
// schedule asks for 20/s, with one request allowed in flight. A closed
// loop would report 100 ms; from the schedule, the queue the slow server
// causes grows to about a second, every send after the first goes out
// late, and the summary says so.
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
	tg := simTarget(t, slow.URL+"/v1", 10*time.Second)
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
	if s.ServiceE2E.P50 < 95 || s.ServiceE2E.P50 > 200 {
		t.Errorf("service latency p50 %.0f ms, want about 100", s.ServiceE2E.P50)
	}
	if s.E2E.Max < 800 || s.E2E.P99 < 5*s.ServiceE2E.P99 {
		t.Errorf("latency from the schedule: p99 %.0f ms max %.0f ms, service p99 %.0f ms", s.E2E.P99, s.E2E.Max, s.ServiceE2E.P99)
	}
	if s.Late < 15 || s.Lateness.Max < 800 {
		t.Errorf("%d late sends, lateness max %.0f ms", s.Late, s.Lateness.Max)
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
	mux.HandleFunc("/slow/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for path, want := range map[string]string{"status": "http_429", "cut": CauseBrokenStream, "garbage": CauseBrokenStream, "drop": CauseConnection, "slow": CauseTimeout} {
		tg := simTarget(t, srv.URL+"/"+path+"/v1", 300*time.Millisecond)
		r := tg.Do(context.Background(), userCall("x", true, 4), time.Now())
		if r.Cause != want {
			t.Errorf("%s: cause %q (%v), want %q", path, r.Cause, r.Err, want)
		}
	}
	// A run stopped while a request is in flight: cancelled, not an error.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	r := simTarget(t, srv.URL+"/slow/v1", 5*time.Second).Do(ctx, userCall("x", true, 4), time.Now())
	if r.Cause != CauseCancelled {
		t.Errorf("cancelled: %q (%v)", r.Cause, r.Err)
	}
}
