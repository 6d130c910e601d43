package bench

import (
	"math"
	"time"
)

// Sample is one request as the report stores it (compressed, see
// report.go), enough to recompute every summary. Times are microseconds:
// Sched and Sent since the run started, the latencies since Sched.
type Sample struct {
	// Level is the index of the level (or profile cell, overhead path,
	// agentic scenario) in the report's levels.
	Level int `json:"lvl"`
	// Worker is the closed-loop worker or the agent; in an open loop, the
	// request's place in the schedule.
	Worker int `json:"w"`
	// Loop and Turn place an agentic request in its loop.
	Loop string `json:"loop,omitempty"`
	Turn int    `json:"turn,omitempty"`
	// Warmup: sent during --settle; kept, but not in the level's figures.
	Warmup bool `json:"warm,omitempty"`
	Stream bool `json:"stream"`

	SchedUS int64 `json:"sched_us"`
	SentUS  int64 `json:"sent_us"`
	// TTFTUS is 0 when there was no output chunk or no stream.
	TTFTUS int64   `json:"ttft_us,omitempty"`
	E2EUS  int64   `json:"e2e_us"`
	ITLUS  []int64 `json:"itl_us,omitempty"`

	PromptTokens int    `json:"in,omitempty"`
	OutputTokens int    `json:"out,omitempty"`
	CachedTokens int    `json:"cached,omitempty"`
	Keepalives   int    `json:"ka,omitempty"`
	Status       int    `json:"status,omitempty"`
	Finish       string `json:"finish,omitempty"`
	Cause        string `json:"err,omitempty"`
	Detail       string `json:"detail,omitempty"`
}

func us(d time.Duration) int64 { return d.Microseconds() }

// NewSample turns a result into a sample of level and worker, with times
// relative to the run's start t0.
func NewSample(r Result, t0 time.Time, level, worker int) Sample {
	s := Sample{
		Level:   level,
		Worker:  worker,
		Stream:  r.Stream,
		SchedUS: us(r.Sched.Sub(t0)),
		SentUS:  us(r.Sent.Sub(t0)),
		E2EUS:   us(r.End.Sub(r.Sched)),
		Status:  r.Status,
		Finish:  r.FinishReason,
		Cause:   r.Cause,
	}
	if r.Sent.IsZero() {
		s.SentUS = s.SchedUS
	}
	if r.Err != nil {
		s.Detail = errorDetail(r.Err)
	}
	if !r.FirstOut.IsZero() {
		s.TTFTUS = us(r.FirstOut.Sub(r.Sched))
	}
	for _, d := range r.ITL {
		s.ITLUS = append(s.ITLUS, us(d))
	}
	if r.Usage != nil {
		s.PromptTokens = r.Usage.PromptTokens
		s.CachedTokens = r.Usage.CachedTokens
	}
	s.OutputTokens = r.OutputTokens()
	s.Keepalives = r.Keepalives
	return s
}

// OK says whether the request succeeded.
func (s Sample) OK() bool { return s.Cause == "" }

// TTFTms is the time to first output from the scheduled start, in ms
// (NaN when not measured).
func (s Sample) TTFTms() float64 {
	if s.TTFTUS == 0 {
		return math.NaN()
	}
	return float64(s.TTFTUS) / 1000
}

// E2Ems is the latency from the scheduled start to the last byte, in ms.
func (s Sample) E2Ems() float64 { return float64(s.E2EUS) / 1000 }

// LatenessMs is how late the request was sent against its schedule.
func (s Sample) LatenessMs() float64 { return float64(s.SentUS-s.SchedUS) / 1000 }

// ServiceMs is the latency from the actual send: what a closed-loop rig
// would have reported (the difference to E2Ems is the queueing a slow
// server causes in front of itself, the coordinated omission).
func (s Sample) ServiceMs() float64 { return s.E2Ems() - s.LatenessMs() }

// TokensPerSecond is the request's decode speed: output tokens after the
// first over the time after the first (vLLM's 1/TPOT). A non-streamed
// request has no first-token time: its output tokens over its latency.
// NaN when it cannot be told (an error, or a single token).
func (s Sample) TokensPerSecond() float64 {
	if !s.OK() || s.OutputTokens == 0 {
		return math.NaN()
	}
	if s.TTFTUS == 0 {
		if !s.Stream && s.E2EUS > 0 {
			return float64(s.OutputTokens) / (float64(s.E2EUS) / 1e6)
		}
		return math.NaN()
	}
	gen := s.E2EUS - s.TTFTUS
	if s.OutputTokens < 2 || gen <= 0 {
		return math.NaN()
	}
	return float64(s.OutputTokens-1) / (float64(gen) / 1e6)
}

// GenerationMs is the time after the first token (bench.py's gen_time);
// the whole latency for a non-streamed request.
func (s Sample) GenerationMs() float64 {
	if s.TTFTUS == 0 {
		if s.Stream {
			return math.NaN()
		}
		return s.E2Ems()
	}
	return float64(s.E2EUS-s.TTFTUS) / 1000
}
