package bench

import (
	"math"
	"testing"
	"time"
)

func TestSampleDerived(t *testing.T) {
	s := Sample{Stream: true, SchedUS: 1000, SentUS: 3000, TTFTUS: 800_000, E2EUS: 1_800_000, OutputTokens: 66}
	if s.TTFTms() != 800 || s.E2Ems() != 1800 || s.LatenessMs() != 2 || s.ServiceMs() != 1798 {
		t.Errorf("%v %v %v %v", s.TTFTms(), s.E2Ems(), s.LatenessMs(), s.ServiceMs())
	}
	if tps := s.TokensPerSecond(); math.Abs(tps-65) > 1e-9 {
		t.Errorf("tps %v", tps)
	}
	if g := s.GenerationMs(); g != 1000 {
		t.Errorf("gen %v", g)
	}
	whole := Sample{Stream: false, E2EUS: 2_000_000, OutputTokens: 100}
	if whole.TokensPerSecond() != 50 || !math.IsNaN(whole.TTFTms()) || whole.GenerationMs() != 2000 {
		t.Error("non-streamed")
	}
	for _, bad := range []Sample{
		{Stream: true, Cause: "http_500", TTFTUS: 1, E2EUS: 2, OutputTokens: 5},
		{Stream: true, TTFTUS: 1, E2EUS: 2, OutputTokens: 1},
		{Stream: true, E2EUS: 2, OutputTokens: 5},
	} {
		if !math.IsNaN(bad.TokensPerSecond()) {
			t.Errorf("%+v: tps %v", bad, bad.TokensPerSecond())
		}
	}
}

func TestSummarize(t *testing.T) {
	mk := func(sched, ttft, e2e int64, out int) Sample {
		return Sample{Stream: true, SchedUS: sched, SentUS: sched, TTFTUS: ttft, E2EUS: e2e, OutputTokens: out, ITLUS: []int64{10_000, 20_000}}
	}
	samples := []Sample{
		{Warmup: true, Stream: true, SchedUS: 0, E2EUS: 1_000_000, TTFTUS: 500_000, OutputTokens: 3},
		mk(1_000_000, 100_000, 1_000_000, 10),
		mk(1_500_000, 300_000, 1_500_000, 20),
		{Stream: true, SchedUS: 2_000_000, SentUS: 2_000_000, E2EUS: 30_000_000, Cause: CauseTimeout},
		{Stream: true, SchedUS: 2_100_000, SentUS: 2_100_000, E2EUS: 1_000, Cause: "http_429"},
		{Stream: true, SchedUS: 2_200_000, SentUS: 2_200_000, E2EUS: 1_000, Cause: CauseCancelled},
	}
	s := Summarize(samples, SummaryOptions{})
	if s.Requests != 4 || s.OK != 2 || s.Warmup != 1 || s.Cancelled != 1 || s.ErrorRate != 0.5 {
		t.Errorf("counts %+v", s)
	}
	if s.Errors[CauseTimeout] != 1 || s.Errors["http_429"] != 1 || len(s.Errors) != 2 {
		t.Errorf("errors %v", s.Errors)
	}
	if s.TTFT.N != 2 || s.TTFT.P50 != 200 || s.E2E.Max != 1500 || s.ITL.N != 4 || s.ITL.P50 != 15 {
		t.Errorf("ttft %+v e2e %+v itl %+v", s.TTFT, s.E2E, s.ITL)
	}
	// From the first measured start (1 s) to the last end (32 s).
	if s.DurationS != 31 || math.Abs(s.OutTokPerS-30.0/31) > 1e-9 {
		t.Errorf("duration %v out tok/s %v", s.DurationS, s.OutTokPerS)
	}
	if s.ServiceE2E != nil || s.SendRate != 0 {
		t.Error("closed loop has no send figures")
	}

	// A window counts the answers that ended in it, warm-up ones too.
	w := Summarize(samples, SummaryOptions{WindowUS: [2]int64{500_000, 2_500_000}})
	if w.DurationS != 2 || w.ReqPerS != 1 || w.OutTokPerS != 6.5 {
		t.Errorf("window: %v s %v req/s %v tok/s", w.DurationS, w.ReqPerS, w.OutTokPerS)
	}
}

func TestSummarizeOpenLoop(t *testing.T) {
	var samples []Sample
	for i := range 11 {
		sched := int64(i) * 100_000 // 10/s
		lateBy := int64(0)
		if i >= 8 {
			lateBy = 50_000 // the last three sent 50 ms late
		}
		samples = append(samples, Sample{Stream: true, SchedUS: sched, SentUS: sched + lateBy, TTFTUS: 10_000 + lateBy, E2EUS: 20_000 + lateBy, OutputTokens: 2})
	}
	s := Summarize(samples, SummaryOptions{OpenLoop: true, LateThreshold: 10 * time.Millisecond})
	if s.Late != 3 || s.Lateness.Max != 50 {
		t.Errorf("late %d lateness %+v", s.Late, s.Lateness)
	}
	if math.Abs(s.ScheduledRate-10) > 1e-9 {
		t.Errorf("scheduled rate %v", s.ScheduledRate)
	}
	if math.Abs(s.SendRate-10/1.05) > 1e-9 {
		t.Errorf("send rate %v", s.SendRate)
	}
	if s.ServiceE2E.Max != 20 || s.E2E.Max != 70 {
		t.Errorf("service %+v e2e %+v", s.ServiceE2E, s.E2E)
	}
}
