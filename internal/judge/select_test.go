package judge

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func results(p Pass) map[string]string {
	out := map[string]string{}
	for _, j := range p.Judgements {
		out[j.Candidate.OpikID] = j.Result
	}
	return out
}

// The filters take users' traces by default (a trace that does not say
// its origin is a user's), the models named, answers long enough; what
// they leave is counted filtered once, then skipped.
func TestFiltersLeaveTracesOutOnce(t *testing.T) {
	c := func(id, model, origin, answer string) Candidate {
		x := opikCand(id, "q "+id)
		x.Model, x.Origin, x.Answer = model, origin, answer
		return x
	}
	src := fakeSource{cands: []Candidate{
		c("user", "m", "user", "a long enough answer"),
		c("unsaid", "m", "", "a long enough answer"),
		c("judge", "m", "judge", "a long enough answer"),
		c("probe", "m", "probe", "a long enough answer"),
		c("other-model", "other", "user", "a long enough answer"),
		c("default", "", "user", "a long enough answer"),
		c("short", "m", "user", "ok"),
	}}
	s := settings()
	s.Filter = Filter{Models: []string{"m", "default_model"}, Origins: []string{OriginUser}, MinAnswerChars: 5}
	j := &fakeJudge{}
	l := &Loop{Settings: s, Source: src, Judge: j}
	assert.Equal(t, map[string]string{"user": ResultScored, "unsaid": ResultScored, "judge": ResultFiltered, "probe": ResultFiltered,
		"other-model": ResultFiltered, "default": ResultScored, "short": ResultFiltered}, results(l.Run(context.Background())))
	assert.Len(t, j.asked, 3)
	second := results(l.Run(context.Background()))
	for _, id := range []string{"judge", "probe", "other-model", "short"} {
		assert.Equal(t, ResultSkipped, second[id], id)
	}

	s.Filter.Origins = []string{AnyOrigin}
	l = &Loop{Settings: s, Source: src, Judge: &fakeJudge{}}
	assert.Equal(t, ResultScored, results(l.Run(context.Background()))["judge"], "* takes every origin")
}

// A sampling rate judges about that fraction, and the same traces every
// time: the choice is the trace's, not the pass's.
func TestSamplingIsByTrace(t *testing.T) {
	var cands []Candidate
	for i := range 400 {
		cands = append(cands, opikCand(fmt.Sprintf("t%03d", i), fmt.Sprintf("q%d", i)))
	}
	s := settings()
	s.Limit, s.SampleRate = 1000, 0.25
	run := func() map[string]string {
		l := &Loop{Settings: s, Source: fakeSource{cands: cands}, Judge: &fakeJudge{}}
		return results(l.Run(context.Background()))
	}
	first := run()
	n := 0
	for _, r := range first {
		if r == ResultScored {
			n++
		} else {
			require.Equal(t, ResultSampledOut, r)
		}
	}
	assert.InDelta(t, 100, n, 30, "about a quarter of 400")
	assert.Equal(t, first, run(), "the same traces in and out")
}

// Past max_per_minute a trace is counted rate_limited and left, not
// queued; a minute later judging resumes.
func TestMaxPerMinute(t *testing.T) {
	var cands []Candidate
	for i := range 5 {
		cands = append(cands, opikCand(fmt.Sprintf("t%d", i), fmt.Sprintf("q%d", i)))
	}
	now := time.Unix(1000, 0)
	s := settings()
	s.MaxPerMinute = 2
	j := &fakeJudge{}
	l := &Loop{Settings: s, Source: fakeSource{cands: cands[:3]}, Judge: j, Now: func() time.Time { return now }}
	assert.Equal(t, map[string]string{"t0": ResultScored, "t1": ResultScored, "t2": ResultRateLimited}, results(l.Run(context.Background())))
	now = now.Add(30 * time.Second)
	l.Source = fakeSource{cands: cands}
	assert.Equal(t, map[string]string{"t0": ResultRateLimited, "t1": ResultRateLimited, "t2": ResultSkipped, "t3": ResultRateLimited, "t4": ResultRateLimited},
		results(l.Run(context.Background())), "the minute's two are spent (the fake source keeps no scores: t0 and t1 came again); t2 was counted already")
	assert.Len(t, j.asked, 2)
	now = now.Add(31 * time.Second)
	l.Source = fakeSource{cands: []Candidate{opikCand("t9", "q9")}}
	assert.Equal(t, map[string]string{"t9": ResultScored}, results(l.Run(context.Background())))
}

func TestRateLimitMemoryIsBounded(t *testing.T) {
	var r rateLimit
	now := time.Unix(0, 0)
	for i := range 1000 {
		r.allow(3, now.Add(time.Duration(i)*time.Second))
	}
	assert.LessOrEqual(t, len(r.times), 3)
	assert.True(t, r.allow(0, now), "0: no cap")
}

// Scores written to Opik carry the configured reason, which cites the
// judge model.
func TestScoresCiteTheJudge(t *testing.T) {
	s := settings()
	s.Reason = ReasonFor("qwen3-32b", "http://big-mac:8080/v1")
	w := &fakeWriter{}
	l := &Loop{Settings: s, Source: fakeSource{cands: []Candidate{opikCand("t1", "q")}}, Judge: &fakeJudge{}, Scores: w}
	l.Run(context.Background())
	require.Len(t, w.batches, 1)
	require.Len(t, w.batches[0], 3, "one score per rubric")
	for _, sc := range w.batches[0] {
		assert.Equal(t, "LLM-as-judge, judge model qwen3-32b at big-mac:8080 (0..1, higher is better)", sc.Reason)
	}
}

// The origin is read where each source keeps it: the opik exporter's
// trace metadata, Opik's OTLP mapping (the input), a Jaeger span.
func TestOriginOf(t *testing.T) {
	assert.Equal(t, "judge", originOf([]byte(`{"mlx.origin":"judge"}`), nil))
	assert.Equal(t, "bench", originOf([]byte(`{"otel_trace_id":"x"}`), []byte(`{"mlx.origin":"bench"}`)))
	assert.Equal(t, "", originOf(nil, []byte(`{"input.value":{}}`)))
}
