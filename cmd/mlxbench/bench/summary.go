package bench

import (
	"math"
	"slices"
	"time"
)

// Level is one level of a run (a concurrency, a rate, a profile cell, an
// overhead path, an agentic scenario) and its figures.
type Level struct {
	Name string `json:"name"`
	// Mode: sweep, sustain, rate, profile, overhead or agentic.
	Mode        string  `json:"mode"`
	Concurrency int     `json:"concurrency,omitempty"`
	Rate        float64 `json:"rate,omitempty"`
	Arrival     string  `json:"arrival,omitempty"`
	Prompt      string  `json:"prompt,omitempty"`
	Stream      bool    `json:"stream"`
	Path        string  `json:"path,omitempty"`
	// StartS and EndS place the level in the run (seconds since its
	// start), to line it up with the snapshots.
	StartS float64 `json:"start_s"`
	EndS   float64 `json:"end_s"`
	// WindowUS is the measured window (after --settle) of a closed-loop
	// level, [from, to) in µs since the run's start; throughput counts the
	// answers that ended in it. Empty: from the first start to the last end
	// of the measured requests.
	WindowUS [2]int64 `json:"window_us,omitempty"`

	Summary Summary `json:"summary"`
}

// Summary is what every level reports. Latencies are in milliseconds and
// measured from each request's scheduled start.
type Summary struct {
	// Requests measured (warm-up and cancelled ones excluded), of which OK.
	Requests  int            `json:"requests"`
	OK        int            `json:"ok"`
	Errors    map[string]int `json:"errors,omitempty"`
	ErrorRate float64        `json:"error_rate"`
	Warmup    int            `json:"warmup,omitempty"`
	Cancelled int            `json:"cancelled,omitempty"`

	TTFT Pcts `json:"ttft_ms"`
	ITL  Pcts `json:"itl_ms"`
	E2E  Pcts `json:"e2e_ms"`
	// TPS is the per-request decode speed (Sample.TokensPerSecond).
	TPS Pcts `json:"tps"`
	// Generation is the time after the first token (all of a non-streamed
	// request).
	Generation   Pcts `json:"generation_ms"`
	PromptTokens Pcts `json:"prompt_tokens"`
	OutputTokens Pcts `json:"output_tokens"`

	DurationS  float64 `json:"duration_s"`
	ReqPerS    float64 `json:"req_per_s"`
	OutTokPerS float64 `json:"output_tok_per_s"`

	// Open loop: what was sent against what was scheduled.
	ServiceE2E    *Pcts   `json:"service_e2e_ms,omitempty"`
	Lateness      *Pcts   `json:"lateness_ms,omitempty"`
	Late          int     `json:"late,omitempty"`
	ScheduledRate float64 `json:"scheduled_rate,omitempty"`
	SendRate      float64 `json:"send_rate,omitempty"`

	Keepalives   int `json:"keepalives,omitempty"`
	CachedTokens int `json:"cached_tokens,omitempty"`
}

// SummaryOptions says how to read a level's samples.
type SummaryOptions struct {
	// OpenLoop adds the send figures; LateThreshold is how late a send
	// may be before it counts as late.
	OpenLoop      bool
	LateThreshold time.Duration
	// WindowUS as in Level.
	WindowUS [2]int64
}

// Summarize computes a level's figures from its samples.
func Summarize(samples []Sample, o SummaryOptions) Summary {
	var s Summary
	var ttft, itl, e2e, tps, gen, in, out, service, late, sched, sent []float64
	var firstUS, lastUS int64 = math.MaxInt64, math.MinInt64
	var okOut int
	windowed := o.WindowUS[1] > o.WindowUS[0]
	winOK, winOut := 0, 0
	for _, x := range samples {
		end := x.SchedUS + x.E2EUS
		if windowed && x.OK() && end >= o.WindowUS[0] && end < o.WindowUS[1] {
			winOK++
			winOut += x.OutputTokens
		}
		switch {
		case x.Cause == CauseCancelled:
			s.Cancelled++
			continue
		case x.Warmup:
			s.Warmup++
			continue
		}
		s.Requests++
		firstUS = min(firstUS, x.SchedUS)
		lastUS = max(lastUS, end)
		sched = append(sched, float64(x.SchedUS))
		sent = append(sent, float64(x.SentUS))
		late = append(late, x.LatenessMs())
		if o.OpenLoop && time.Duration(x.SentUS-x.SchedUS)*time.Microsecond > o.LateThreshold {
			s.Late++
		}
		s.Keepalives += x.Keepalives
		if !x.OK() {
			if s.Errors == nil {
				s.Errors = map[string]int{}
			}
			s.Errors[x.Cause]++
			continue
		}
		s.OK++
		s.CachedTokens += x.CachedTokens
		okOut += x.OutputTokens
		ttft = append(ttft, x.TTFTms())
		for _, d := range x.ITLUS {
			itl = append(itl, float64(d)/1000)
		}
		e2e = append(e2e, x.E2Ems())
		service = append(service, x.ServiceMs())
		tps = append(tps, x.TokensPerSecond())
		gen = append(gen, x.GenerationMs())
		if x.PromptTokens > 0 {
			in = append(in, float64(x.PromptTokens))
		}
		out = append(out, float64(x.OutputTokens))
	}
	if s.Requests > 0 {
		s.ErrorRate = float64(s.Requests-s.OK) / float64(s.Requests)
	}
	s.TTFT, s.ITL, s.E2E, s.TPS = Distribution(ttft), Distribution(itl), Distribution(e2e), Distribution(tps)
	s.Generation, s.PromptTokens, s.OutputTokens = Distribution(gen), Distribution(in), Distribution(out)
	switch {
	case windowed:
		s.DurationS = float64(o.WindowUS[1]-o.WindowUS[0]) / 1e6
		s.ReqPerS = float64(winOK) / s.DurationS
		s.OutTokPerS = float64(winOut) / s.DurationS
	case s.Requests > 0 && lastUS > firstUS:
		s.DurationS = float64(lastUS-firstUS) / 1e6
		s.ReqPerS = float64(s.OK) / s.DurationS
		s.OutTokPerS = float64(okOut) / s.DurationS
	}
	if o.OpenLoop {
		sv, lt := Distribution(service), Distribution(late)
		s.ServiceE2E, s.Lateness = &sv, &lt
		s.ScheduledRate = spanRate(sched)
		s.SendRate = spanRate(sent)
	}
	return s
}

// spanRate is (n-1) over the span from the first to the last time (µs):
// the rate of a sequence of events, exact for evenly spaced ones.
func spanRate(times []float64) float64 {
	if len(times) < 2 {
		return 0
	}
	t := slices.Clone(times)
	slices.Sort(t)
	span := (t[len(t)-1] - t[0]) / 1e6
	if span <= 0 {
		return 0
	}
	return float64(len(t)-1) / span
}

// SamplesOf returns the samples of level i.
func SamplesOf(all []Sample, i int) []Sample {
	var out []Sample
	for _, s := range all {
		if s.Level == i {
			out = append(out, s)
		}
	}
	return out
}
