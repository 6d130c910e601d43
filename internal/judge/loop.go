package judge

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/internal/opikapi"
)

// Source gives the recent traces, newest first.
type Source interface {
	Name() string
	Recent(ctx context.Context, limit int) ([]Candidate, error)
}

// Asker asks the judge.
type Asker interface {
	Ask(ctx context.Context, prompt string) (string, error)
}

// ScoreWriter writes Opik feedback scores.
type ScoreWriter interface {
	PutScores(ctx context.Context, scores []opikapi.Score) error
}

// Settings are the loop's knobs (the original's flags).
type Settings struct {
	Limit   int      // traces read, and judged at most, per pass (20)
	Scores  []string // score names (DefaultScores)
	Prompt  string   // the judge prompt (DefaultPrompt)
	Project string   // the Opik project the scores name
	DryRun  bool     // judge, but write no score
	// MaxInFlight: a pass stops before a judgement while the proxy serves
	// this many requests or more (0: never back off).
	MaxInFlight int64
	// Remember bounds how many judged traces the loop remembers: scored
	// ones from sources that do not keep scores (Jaeger), failed ones, and
	// those left out (filtered, sampled_out, rate_limited).
	Remember int
	// Filter is which traces are judged (by model, origin, answer length).
	Filter Filter
	// SampleRate is the fraction of the traces that pass the filter that
	// are judged, chosen by trace (sampled); 0 or 1 and more: all.
	SampleRate float64
	// MaxPerMinute caps the judgements in any minute (0: no cap). A trace
	// past it is counted rate_limited and left, not queued.
	MaxPerMinute int
	// Reason is the reason of every score written to Opik, which cites the
	// judge model (ReasonFor); empty: Reason.
	Reason string
}

// The outcomes of a trace in a pass (mlx_judge_traces_total{result}).
const (
	ResultScored      = "scored"
	ResultSkipped     = "skipped"
	ResultParseFailed = "parse_failed"
	ResultJudgeError  = "judge_error"
	// ResultFiltered: the trace did not pass Settings.Filter.
	ResultFiltered = "filtered"
	// ResultSampledOut: the trace is not in the Settings.SampleRate sample.
	ResultSampledOut = "sampled_out"
	// ResultRateLimited: Settings.MaxPerMinute judgements were made in the
	// last minute; the trace is left, not queued.
	ResultRateLimited = "rate_limited"
)

// Judgement is what happened to one trace in a pass.
type Judgement struct {
	Candidate Candidate
	Result    string
	Scores    map[string]float64 // when scored
	Reply     string             // the judge's reply (scored or parse_failed)
	Err       error              // parse_failed, judge_error
	// SuspectedInjection: the judged text names a score or holds a chat
	// special token (SuspectedInjection); it was judged all the same.
	SuspectedInjection bool
}

// Pass is the report of one pass.
type Pass struct {
	Start, End time.Time
	Judgements []Judgement
	// ReadErr: the source could not be read (nothing was judged).
	ReadErr error
	// WriteErr: the scores could not be written to Opik.
	WriteErr error
	// Written is how many scores went to Opik.
	Written int
	// BackedOff: the pass stopped early because the proxy was busy.
	BackedOff bool
	// JudgeDown: the pass stopped at a judge that did not answer; the
	// rest of the traces wait for the next pass.
	JudgeDown bool
}

// Count is how many judgements had result r.
func (p *Pass) Count(r string) int {
	n := 0
	for _, j := range p.Judgements {
		if j.Result == r {
			n++
		}
	}
	return n
}

// Loop runs passes. Scores may be nil (no Opik to write to); InFlight may
// be nil (never busy).
type Loop struct {
	Settings Settings
	Source   Source
	Judge    Asker
	Scores   ScoreWriter
	InFlight func() (int64, error)
	// Now is the clock of the rate limit (nil: time.Now).
	Now func() time.Time

	rate rateLimit
	mu   sync.Mutex
	// judged and judgedOrder are the traces not to judge again (see
	// remembered), the oldest first, at most Settings.Remember.
	judged      map[string]bool
	judgedOrder []string
	// parseFailures counts the replies that did not parse, by trace, until
	// the trace is remembered (at most Settings.Remember entries).
	parseFailures map[string]int
}

// ParseTries is how many passes ask the judge about a trace whose replies
// do not parse before it is left alone (and counted parse_failed each
// time).
const ParseTries = 3

// Run makes one pass: read the newest traces, judge those without every
// score (at most Limit, one at a time), write the scores in batches.
func (l *Loop) Run(ctx context.Context) Pass {
	p := Pass{Start: time.Now()}
	defer func() { p.End = time.Now() }()
	cands, err := l.Source.Recent(ctx, l.Settings.Limit)
	if err != nil {
		p.ReadErr = fmt.Errorf("%s: %w", l.Source.Name(), err)
		p.End = time.Now()
		return p
	}
	// Scores for Opik, grouped by trace so that a batch never splits one;
	// a trace from a source without scores (Jaeger) is remembered once its
	// scores are written, so a failed write judges it again next pass.
	var groups []scoreGroup
	judgedN := 0
	for _, c := range cands {
		if ctx.Err() != nil {
			break
		}
		if c.Question == "" || c.Answer == "" || c.complete(l.Settings.Scores) || l.remembered(c) || isJudgePrompt(l.Settings.Prompt, c.Question) {
			p.Judgements = append(p.Judgements, Judgement{Candidate: c, Result: ResultSkipped})
			continue
		}
		// Left out by the rules: counted once, then remembered (skipped).
		if r := l.leftOut(c); r != "" {
			p.Judgements = append(p.Judgements, Judgement{Candidate: c, Result: r})
			l.remember(c)
			continue
		}
		if judgedN >= l.Settings.Limit {
			break
		}
		if l.busy() {
			p.BackedOff = true
			break
		}
		if !l.rate.allow(l.Settings.MaxPerMinute, l.now()) {
			p.Judgements = append(p.Judgements, Judgement{Candidate: c, Result: ResultRateLimited})
			l.remember(c)
			continue
		}
		judgedN++
		j := l.judge(ctx, c)
		if ctx.Err() != nil && j.Result == ResultJudgeError {
			break // shutting down: not the judge's fault
		}
		p.Judgements = append(p.Judgements, j)
		switch {
		case j.Result == ResultParseFailed:
			// Asked again next pass, up to ParseTries in all: one bad
			// reply (cut short, or steered by the judged text) must not
			// exempt a trace from judgement for good.
			if l.failedParse(c) >= ParseTries {
				l.remember(c)
			}
			continue
		case j.Result == ResultJudgeError && refusedTrace(j.Err):
			// The judge's refusal of this trace's request would be the
			// same next pass: not asked again.
			l.remember(c)
			continue
		case j.Result == ResultJudgeError:
			// The judge is down or timing out: the rest waits for the next
			// pass rather than waiting on it once per trace.
			p.JudgeDown = true
		}
		if p.JudgeDown {
			break
		}
		if c.OpikID == "" || l.Scores == nil || l.Settings.DryRun {
			l.rememberScored(c)
			continue
		}
		g := scoreGroup{c: c}
		for _, name := range l.Settings.Scores {
			g.scores = append(g.scores, opikapi.Score{ID: c.OpikID, ProjectName: l.Settings.Project, Name: name,
				Value: j.Scores[name], Reason: l.reason(), CategoryName: Category, Source: "sdk"})
		}
		groups = append(groups, g)
	}
	l.write(ctx, &p, groups)
	return p
}

// leftOut is why the rules leave c unjudged (ResultFiltered,
// ResultSampledOut), or "".
func (l *Loop) leftOut(c Candidate) string {
	if !l.Settings.Filter.pass(&c) {
		return ResultFiltered
	}
	if r := l.Settings.SampleRate; r > 0 && !sampled(c.key(), r) {
		return ResultSampledOut
	}
	return ""
}

func (l *Loop) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

func (l *Loop) reason() string {
	if l.Settings.Reason != "" {
		return l.Settings.Reason
	}
	return Reason
}

// scoreGroup is one trace's scores.
type scoreGroup struct {
	c      Candidate
	scores []opikapi.Score
}

// write puts the scores in batches of at most opikapi.MaxScoreBatch,
// whole traces each, and stops at the first failure.
func (l *Loop) write(ctx context.Context, p *Pass, groups []scoreGroup) {
	for len(groups) > 0 {
		var batch []opikapi.Score
		n := 0
		for n < len(groups) && (n == 0 || len(batch)+len(groups[n].scores) <= opikapi.MaxScoreBatch) {
			batch = append(batch, groups[n].scores...)
			n++
		}
		if err := l.Scores.PutScores(ctx, batch); err != nil {
			p.WriteErr = err
			return
		}
		p.Written += len(batch)
		for _, g := range groups[:n] {
			l.rememberScored(g.c)
		}
		groups = groups[n:]
	}
}

// refusedTrace says whether the judge refused this trace's request itself
// (400, 413, 422: the prompt is too long for its context, say), which it
// would do again. Any other error (401 and 403 a key, 404 a model, 408 and
// 429 load, 5xx, no answer) is the judge's state, not the trace's.
func refusedTrace(err error) bool {
	var apiErr *APIError
	if !errors.As(err, &apiErr) {
		return false
	}
	switch apiErr.StatusCode {
	case 400, 413, 422:
		return true
	}
	return false
}

func (l *Loop) judge(ctx context.Context, c Candidate) Judgement {
	j := Judgement{Candidate: c}
	prompt, err := Render(l.Settings.Prompt, c.Question, c.Answer)
	if err != nil { // checked at configuration; kept for safety
		j.Result, j.Err = ResultJudgeError, err
		return j
	}
	j.SuspectedInjection = SuspectedInjection(c.Question, c.Answer, l.Settings.Scores)
	reply, err := l.Judge.Ask(ctx, prompt)
	if err != nil {
		j.Result, j.Err = ResultJudgeError, err
		return j
	}
	j.Reply = reply
	scores, err := ParseScores([]byte(reply), l.Settings.Scores)
	if err != nil {
		j.Result, j.Err = ResultParseFailed, err
		return j
	}
	j.Result, j.Scores = ResultScored, scores
	return j
}

// busy asks the proxy how many requests it serves. Not knowing is not
// busy: a judge without a proxy in front still works. A busy answer is
// asked again a moment later: the proxy counts a request until its
// handler returns, just after the client has the whole answer, so right
// after a judgement the judge's own request may still be counted.
func (l *Loop) busy() bool {
	if l.InFlight == nil || l.Settings.MaxInFlight <= 0 {
		return false
	}
	for i := 0; ; i++ {
		n, err := l.InFlight()
		if err != nil || n < l.Settings.MaxInFlight {
			return false
		}
		if i == 1 {
			return true
		}
		time.Sleep(ownRequestSettles)
	}
}

// ownRequestSettles is how long the loop gives the proxy to stop counting
// the judge's own finished request.
const ownRequestSettles = 50 * time.Millisecond

// remembered reports whether a trace was judged already: scored, from a
// source that keeps no scores (Jaeger), or failed for good (replies that
// did not parse ParseTries times, a refusal), from any source.
func (l *Loop) remembered(c Candidate) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.judged[c.key()]
}

// rememberScored remembers a scored trace unless its source keeps the
// scores itself (Opik: complete() skips it next pass).
func (l *Loop) rememberScored(c Candidate) {
	if c.Scored == nil {
		l.remember(c)
	}
}

// failedParse counts a reply about c that did not parse and returns how
// many there were.
func (l *Loop) failedParse(c Candidate) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.parseFailures == nil || len(l.parseFailures) >= max(l.Settings.Remember, 1) {
		l.parseFailures = map[string]int{} // bounded: a trace that old is past any lookback
	}
	key := c.key()
	l.parseFailures[key]++
	n := l.parseFailures[key]
	if n >= ParseTries {
		delete(l.parseFailures, key)
	}
	return n
}

// remember adds a trace to the bounded memory of judged traces.
func (l *Loop) remember(c Candidate) {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := c.key()
	if l.judged[key] {
		return
	}
	if l.judged == nil {
		l.judged = map[string]bool{}
	}
	l.judged[key] = true
	l.judgedOrder = append(l.judgedOrder, key)
	// Forget the oldest: a trace that old is past any lookback.
	for len(l.judgedOrder) > max(l.Settings.Remember, 1) {
		delete(l.judged, l.judgedOrder[0])
		l.judgedOrder = l.judgedOrder[1:]
	}
}
