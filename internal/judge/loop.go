package judge

import (
	"context"
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
	// Remember bounds how many judged traces the loop remembers, for
	// sources that do not keep scores (Jaeger).
	Remember int
}

// The outcomes of a trace in a pass (mlx_judge_traces_total{result}).
const (
	ResultScored      = "scored"
	ResultSkipped     = "skipped"
	ResultParseFailed = "parse_failed"
	ResultJudgeError  = "judge_error"
)

// Judgement is what happened to one trace in a pass.
type Judgement struct {
	Candidate Candidate
	Result    string
	Scores    map[string]float64 // when scored
	Reply     string             // the judge's reply (scored or parse_failed)
	Err       error              // parse_failed, judge_error
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

	mu sync.Mutex
	// judged and judgedOrder are what was judged from sources without
	// scores, the oldest first, at most Settings.Remember.
	judged      map[string]bool
	judgedOrder []string
}

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
	var batch []opikapi.Score
	judgedN := 0
	for _, c := range cands {
		if ctx.Err() != nil {
			break
		}
		if c.Question == "" || c.Answer == "" || c.complete(l.Settings.Scores) || l.remembered(c) {
			p.Judgements = append(p.Judgements, Judgement{Candidate: c, Result: ResultSkipped})
			continue
		}
		if judgedN >= l.Settings.Limit {
			break
		}
		if l.busy() {
			p.BackedOff = true
			break
		}
		judgedN++
		j := l.judge(ctx, c)
		if ctx.Err() != nil && j.Result == ResultJudgeError {
			break // shutting down: not the judge's fault
		}
		p.Judgements = append(p.Judgements, j)
		if j.Result != ResultScored {
			continue
		}
		l.remember(c)
		if c.OpikID == "" {
			continue
		}
		for _, name := range l.Settings.Scores {
			batch = append(batch, opikapi.Score{ID: c.OpikID, ProjectName: l.Settings.Project, Name: name,
				Value: j.Scores[name], Reason: Reason, CategoryName: Category, Source: "sdk"})
		}
	}
	if l.Scores != nil && !l.Settings.DryRun {
		for len(batch) > 0 && p.WriteErr == nil {
			n := min(len(batch), opikapi.MaxScoreBatch)
			if err := l.Scores.PutScores(ctx, batch[:n]); err != nil {
				p.WriteErr = err
				break
			}
			p.Written += n
			batch = batch[n:]
		}
	}
	return p
}

func (l *Loop) judge(ctx context.Context, c Candidate) Judgement {
	j := Judgement{Candidate: c}
	prompt, err := Render(l.Settings.Prompt, c.Question, c.Answer)
	if err != nil { // checked at configuration; kept for safety
		j.Result, j.Err = ResultJudgeError, err
		return j
	}
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
// busy: a judge without a proxy in front still works.
func (l *Loop) busy() bool {
	if l.InFlight == nil || l.Settings.MaxInFlight <= 0 {
		return false
	}
	n, err := l.InFlight()
	return err == nil && n >= l.Settings.MaxInFlight
}

// remembered reports whether a trace from a source without scores was
// judged already.
func (l *Loop) remembered(c Candidate) bool {
	if c.Scored != nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.judged[c.key()]
}

func (l *Loop) remember(c Candidate) {
	if c.Scored != nil {
		return
	}
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
