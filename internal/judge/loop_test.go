package judge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/internal/opikapi"
)

type fakeSource struct {
	cands []Candidate
	err   error
}

func (fakeSource) Name() string { return "fake" }
func (s fakeSource) Recent(_ context.Context, limit int) ([]Candidate, error) {
	if s.err != nil {
		return nil, s.err
	}
	return s.cands[:min(limit, len(s.cands))], nil
}

// fakeJudge answers by question: "noise" gets prose, "fail" an error,
// anything else scores.
type fakeJudge struct {
	mu     sync.Mutex
	asked  []string
	active int
	most   int
}

func (j *fakeJudge) Ask(_ context.Context, prompt string) (string, error) {
	j.mu.Lock()
	j.asked = append(j.asked, prompt)
	j.active++
	j.most = max(j.most, j.active)
	j.mu.Unlock()
	defer func() { j.mu.Lock(); j.active--; j.mu.Unlock() }()
	switch {
	case asksAbout(prompt, "noise"):
		return "I think it is fine.", nil
	case asksAbout(prompt, "fail"):
		return "", errors.New("connection refused")
	case asksAbout(prompt, "refuse me"):
		return "", &APIError{StatusCode: 400}
	}
	return `{"correctness": 0.9, "helpfulness": 0.7, "hallucination_free": 1}`, nil
}

// asksAbout says whether prompt's question is q (its data block's line).
func asksAbout(prompt, q string) bool {
	j, _ := json.Marshal(q)
	return strings.Contains(prompt, "Question:\n[BEGIN question ") && strings.Contains(prompt, "]\n"+string(j)+"\n[END question ")
}

type fakeWriter struct {
	batches [][]opikapi.Score
	err     error
}

func (w *fakeWriter) PutScores(_ context.Context, s []opikapi.Score) error {
	if w.err != nil {
		return w.err
	}
	w.batches = append(w.batches, append([]opikapi.Score(nil), s...))
	return nil
}

func opikCand(id, q string, scored ...string) Candidate {
	c := Candidate{OpikID: id, Question: q, Answer: "an answer", Model: "m", Scored: map[string]bool{}, Start: time.Now()}
	for _, s := range scored {
		c.Scored[s] = true
	}
	return c
}

func settings() Settings {
	return Settings{Limit: 20, Scores: DefaultScores, Prompt: DefaultPrompt, Project: "mlx", MaxInFlight: 2, Remember: 100}
}

func TestPassJudgesWritesAndSkips(t *testing.T) {
	src := fakeSource{cands: []Candidate{
		opikCand("t1", "what is a cache?"),
		opikCand("t2", "already", DefaultScores...),
		opikCand("t3", "partly", "correctness"),
		opikCand("t4", "noise"),
		{OpikID: "t6", Answer: "no question", Scored: map[string]bool{}},
		opikCand("t5", "fail"),
		opikCand("t7", "after the judge went down"),
	}}
	j, w := &fakeJudge{}, &fakeWriter{}
	l := &Loop{Settings: settings(), Source: src, Judge: j, Scores: w}
	p := l.Run(context.Background())
	want := map[string]string{"t1": ResultScored, "t2": ResultSkipped, "t3": ResultScored, "t4": ResultParseFailed, "t5": ResultJudgeError, "t6": ResultSkipped}
	for _, jd := range p.Judgements {
		if want[jd.Candidate.OpikID] != jd.Result {
			t.Errorf("%s: %s, want %s (%v)", jd.Candidate.OpikID, jd.Result, want[jd.Candidate.OpikID], jd.Err)
		}
	}
	if len(p.Judgements) != 6 || len(j.asked) != 4 || j.most != 1 || !p.JudgeDown {
		t.Errorf("%d judgements, %d asked, %d at once, judge down %v", len(p.Judgements), len(j.asked), j.most, p.JudgeDown)
	}
	if len(w.batches) != 1 || len(w.batches[0]) != 6 || p.Written != 6 {
		t.Fatalf("written %v", w.batches)
	}
	for _, s := range w.batches[0] {
		if (s.ID != "t1" && s.ID != "t3") || s.ProjectName != "mlx" || s.Source != "sdk" || s.CategoryName != "judge" || s.Reason != Reason {
			t.Errorf("score %+v", s)
		}
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	w := &fakeWriter{}
	s := settings()
	s.DryRun = true
	l := &Loop{Settings: s, Source: fakeSource{cands: []Candidate{opikCand("t1", "q")}}, Judge: &fakeJudge{}, Scores: w}
	p := l.Run(context.Background())
	if p.Count(ResultScored) != 1 || len(w.batches) != 0 || p.Written != 0 {
		t.Errorf("dry run: %d scored, batches %v", p.Count(ResultScored), w.batches)
	}
}

func TestBusyProxyStopsThePass(t *testing.T) {
	var cands []Candidate
	for i := range 5 {
		cands = append(cands, opikCand(fmt.Sprint("t", i), "q"))
	}
	inFlight := int64(0)
	j := &fakeJudge{}
	l := &Loop{Settings: settings(), Source: fakeSource{cands: cands}, Judge: j, Scores: &fakeWriter{},
		InFlight: func() (int64, error) {
			if len(j.asked) == 2 {
				inFlight = 3 // users arrived after two judgements
			}
			return inFlight, nil
		}}
	p := l.Run(context.Background())
	if !p.BackedOff || len(j.asked) != 2 || p.Count(ResultScored) != 2 {
		t.Errorf("backed off %v after %d judgements", p.BackedOff, len(j.asked))
	}
}

func TestReadAndWriteFailures(t *testing.T) {
	l := &Loop{Settings: settings(), Source: fakeSource{err: errors.New("connection refused")}, Judge: &fakeJudge{}}
	if p := l.Run(context.Background()); p.ReadErr == nil || len(p.Judgements) != 0 {
		t.Errorf("read failure: %+v", p)
	}
	w := &fakeWriter{err: &opikapi.StatusError{Code: 503}}
	l = &Loop{Settings: settings(), Source: fakeSource{cands: []Candidate{opikCand("t1", "q")}}, Judge: &fakeJudge{}, Scores: w}
	if p := l.Run(context.Background()); p.WriteErr == nil || p.Count(ResultScored) != 1 {
		t.Errorf("write failure: %+v", p)
	}
}

// A source without scores (Jaeger): what was judged once is skipped after.
func TestJudgedTracesAreRemembered(t *testing.T) {
	c := Candidate{TraceID: [16]byte{1}, SpanID: [8]byte{2}, HasIDs: true, Question: "q", Answer: "a"}
	j := &fakeJudge{}
	l := &Loop{Settings: settings(), Source: fakeSource{cands: []Candidate{c}}, Judge: j}
	first := l.Run(context.Background())
	second := l.Run(context.Background())
	if first.Count(ResultScored) != 1 || second.Count(ResultSkipped) != 1 || len(j.asked) != 1 {
		t.Errorf("first %v, second %v, asked %d", first.Judgements, second.Judgements, len(j.asked))
	}
}

func TestMemoryIsBounded(t *testing.T) {
	s := settings()
	s.Remember = 10
	l := &Loop{Settings: s}
	for i := range 100 {
		l.remember(Candidate{TraceID: [16]byte{byte(i)}})
	}
	if n := len(l.judged); n > 10 {
		t.Errorf("%d remembered, bound 10", n)
	}
}

func TestShutdownStopsAPass(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var cands []Candidate
	for i := range 5 {
		cands = append(cands, opikCand(fmt.Sprint("t", i), "q"))
	}
	j := &blockingJudge{started: make(chan struct{}, 5)}
	l := &Loop{Settings: settings(), Source: fakeSource{cands: cands}, Judge: j}
	done := make(chan Pass)
	go func() { done <- l.Run(ctx) }()
	<-j.started
	cancel()
	select {
	case p := <-done:
		if p.Count(ResultJudgeError) != 0 || len(p.Judgements) != 0 {
			t.Errorf("a cut judgement was counted: %+v", p.Judgements)
		}
	case <-time.After(time.Second):
		t.Fatal("the pass did not stop within a second")
	}
}

type blockingJudge struct{ started chan struct{} }

func (j *blockingJudge) Ask(ctx context.Context, _ string) (string, error) {
	j.started <- struct{}{}
	<-ctx.Done()
	return "", ctx.Err()
}

// A refusal of the request (4xx) would be the same next pass: such a trace
// is asked once, from any source. A reply that does not parse is asked
// again, in ParseTries passes in all, then left alone. A judge that does
// not answer ends the pass, and its traces are asked next pass.
func TestFailedTracesAreAskedOnce(t *testing.T) {
	jaegerNoise := Candidate{TraceID: [16]byte{9}, SpanID: [8]byte{1}, HasIDs: true, Question: "noise", Answer: "a"}
	refused := opikCand("t-refused", "refuse me")
	down := opikCand("t-down", "fail")
	src := fakeSource{cands: []Candidate{opikCand("t-noise", "noise"), jaegerNoise, refused, down}}
	j := &fakeJudge{}
	l := &Loop{Settings: settings(), Source: src, Judge: j, Scores: &fakeWriter{}}
	var passes []Pass
	for range ParseTries + 1 {
		passes = append(passes, l.Run(context.Background()))
	}
	first, second, last := passes[0], passes[1], passes[ParseTries]
	if first.Count(ResultParseFailed) != 2 || first.Count(ResultJudgeError) != 2 || !first.JudgeDown {
		t.Errorf("first pass: %+v", first.Judgements)
	}
	if second.Count(ResultParseFailed) != 2 || second.Count(ResultSkipped) != 1 || second.Count(ResultJudgeError) != 1 {
		t.Errorf("second pass: %+v", second.Judgements)
	}
	if last.Count(ResultSkipped) != 3 || last.Count(ResultJudgeError) != 1 {
		t.Errorf("pass %d: %+v", ParseTries+1, last.Judgements)
	}
	asked := map[string]int{}
	for _, p := range j.asked {
		for _, q := range []string{"noise", "refuse me", "fail"} {
			if asksAbout(p, q) {
				asked[q]++
			}
		}
	}
	if asked["noise"] != 2*ParseTries || asked["refuse me"] != 1 || asked["fail"] != ParseTries+1 {
		t.Errorf("asked %v; want noise %d times (two traces) each, the refusal once, the down judge every pass", asked, ParseTries)
	}
}

// A trace from Jaeger whose scores go to Opik is remembered only once they
// are written: a write that failed judges it again next pass.
func TestAFailedWriteJudgesAgain(t *testing.T) {
	c := Candidate{TraceID: [16]byte{1}, SpanID: [8]byte{2}, HasIDs: true, OpikID: "0190b6d0-0000-7000-8000-000000000001", Question: "q", Answer: "a"}
	j := &fakeJudge{}
	w := &fakeWriter{err: &opikapi.StatusError{Code: 503}}
	l := &Loop{Settings: settings(), Source: fakeSource{cands: []Candidate{c}}, Judge: j, Scores: w}
	if p := l.Run(context.Background()); p.WriteErr == nil {
		t.Fatalf("the write should fail: %+v", p)
	}
	w.err = nil
	if p := l.Run(context.Background()); p.Count(ResultScored) != 1 || p.Written != 3 {
		t.Errorf("judged again after the failed write: %+v", p)
	}
	if p := l.Run(context.Background()); p.Count(ResultSkipped) != 1 || len(j.asked) != 2 {
		t.Errorf("written once, then skipped: %+v, asked %d", p, len(j.asked))
	}
}

// Batches hold at most opikapi.MaxScoreBatch scores and never split a
// trace's scores.
func TestBatchesKeepATracesScoresTogether(t *testing.T) {
	var cands []Candidate
	for i := range 400 {
		cands = append(cands, opikCand(fmt.Sprint("t", i), "q"))
	}
	s := settings()
	s.Limit = 400
	w := &fakeWriter{}
	l := &Loop{Settings: s, Source: fakeSource{cands: cands}, Judge: &fakeJudge{}, Scores: w}
	p := l.Run(context.Background())
	if p.Written != 1200 || len(w.batches) != 2 || len(w.batches[0]) != 999 || len(w.batches[1]) != 201 {
		t.Errorf("written %d in batches of %d and %d", p.Written, len(w.batches[0]), len(w.batches[len(w.batches)-1]))
	}
}

// Right after a judgement the proxy may still count the judge's own
// request for a moment: that is not a user, and the pass goes on.
func TestTheJudgesOwnRequestIsNotABusyProxy(t *testing.T) {
	var cands []Candidate
	for i := range 3 {
		cands = append(cands, opikCand(fmt.Sprint("t", i), "q"))
	}
	j := &fakeJudge{}
	reads := 0
	l := &Loop{Settings: settings(), Source: fakeSource{cands: cands}, Judge: j, Scores: &fakeWriter{},
		InFlight: func() (int64, error) {
			reads++
			if reads%2 == 1 && len(j.asked) > 0 {
				return 1, nil // the judge's last request, not yet uncounted
			}
			return 0, nil
		}}
	l.Settings.MaxInFlight = 1
	p := l.Run(context.Background())
	if p.BackedOff || p.Count(ResultScored) != 3 {
		t.Errorf("backed off %v, scored %d", p.BackedOff, p.Count(ResultScored))
	}
}

// A judge that refuses every request for its own reasons (a wrong key or
// model) is the judge's state: no trace is remembered as failed.
func TestAMisconfiguredJudgeForgetsNoTrace(t *testing.T) {
	c := opikCand("t-auth", "q")
	l := &Loop{Settings: settings(), Source: fakeSource{cands: []Candidate{c}}, Judge: errJudge{&APIError{StatusCode: 401}}}
	if p := l.Run(context.Background()); p.Count(ResultJudgeError) != 1 || !p.JudgeDown {
		t.Fatalf("first pass: %+v", p.Judgements)
	}
	if l.remembered(c) {
		t.Error("a 401 made the trace a failed one for good")
	}
}

type errJudge struct{ err error }

func (j errJudge) Ask(context.Context, string) (string, error) { return "", j.err }
