package judgereceiver

import (
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/mlx-otelcol/mlx-otelcol/internal/judge"
)

// The outcomes of a pass (mlx_judge_passes_total{result}).
const (
	passOK          = "ok"
	passReadFailed  = "read_failed"
	passWriteFailed = "write_failed"
	passBackedOff   = "backed_off"
	passPanicked    = "panicked"
)

var (
	traceResults = []string{judge.ResultScored, judge.ResultSkipped, judge.ResultParseFailed, judge.ResultJudgeError,
		judge.ResultFiltered, judge.ResultSampledOut, judge.ResultRateLimited}
	passResults = []string{passOK, passReadFailed, passWriteFailed, passBackedOff, passPanicked}
)

// maxModels bounds the model label: the first models seen keep their
// name, later ones are "other" (the proxy's rule for its model label).
const maxModels = 8

// maxModelLen bounds a model name, in the label and on the events (the
// proxy's bound): it comes from trace content, which the loopback OTLP
// receiver or any writer to the Opik project can fill with megabytes.
const maxModelLen = 200

// otherModel is the label of the models not kept by name.
const otherModel = "other"

// hist is a histogram's state.
type hist struct {
	counts []uint64 // per bucket, the last for +Inf
	sum    float64
}

func newHist(bounds []float64) *hist { return &hist{counts: make([]uint64, len(bounds)+1)} }

func (h *hist) observe(bounds []float64, v float64) {
	i, _ := slices.BinarySearch(bounds, v)
	h.counts[i]++
	h.sum += v
}

func (h *hist) clone() *hist { return &hist{counts: slices.Clone(h.counts), sum: h.sum} }

type scoreKey struct{ name, model string }

// stats is what the loop has done since the receiver started.
type stats struct {
	mu          sync.Mutex
	traces      map[string]float64
	passes      map[string]float64
	scores      map[scoreKey]*hist
	passSeconds *hist
	models      []string
	// served, when set, are the only names kept (Config.Models).
	served []string
	// injections counts the judged traces that looked like a try at
	// steering the judge (judge.SuspectedInjection).
	injections float64
}

func newStats(served []string) *stats {
	s := &stats{traces: map[string]float64{}, passes: map[string]float64{}, scores: map[scoreKey]*hist{}, passSeconds: newHist(passBounds), served: served}
	for _, r := range traceResults {
		s.traces[r] = 0
	}
	for _, r := range passResults {
		s.passes[r] = 0
	}
	return s
}

// record counts a pass.
func (s *stats) record(p *judge.Pass) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.passes[passOutcome(p)]++
	if p.ReadErr != nil {
		return
	}
	s.passSeconds.observe(passBounds, p.End.Sub(p.Start).Seconds())
	for _, j := range p.Judgements {
		s.traces[j.Result]++
		if j.SuspectedInjection {
			s.injections++
		}
		model := s.modelLabel(j.Candidate.Model)
		for name, v := range j.Scores {
			k := scoreKey{name, model}
			h := s.scores[k]
			if h == nil {
				h = newHist(scoreBounds)
				s.scores[k] = h
			}
			h.observe(scoreBounds, v)
		}
	}
}

// panicked counts a pass that panicked.
func (s *stats) panicked() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.passes[passPanicked]++
}

func passOutcome(p *judge.Pass) string {
	switch {
	case p.ReadErr != nil:
		return passReadFailed
	case p.WriteErr != nil:
		return passWriteFailed
	case p.BackedOff:
		return passBackedOff
	}
	return passOK
}

func (s *stats) modelLabel(m string) string {
	named := m != ""
	if !named {
		m = "unknown" // the request named none: the served default
	}
	if slices.Contains(s.models, m) {
		return m
	}
	if len(m) > maxModelLen || !utf8.ValidString(m) || named && len(s.served) > 0 && !slices.Contains(s.served, m) {
		return otherModel
	}
	if len(s.models) < maxModels {
		s.models = append(s.models, m)
		return m
	}
	return otherModel
}

// boundModel is a model name cut to maxModelLen bytes (at a rune's start),
// for the events.
func boundModel(m string) string {
	if len(m) <= maxModelLen {
		return m
	}
	i := maxModelLen
	for i > 0 && !utf8.RuneStart(m[i]) {
		i--
	}
	return m[:i]
}

func (s *stats) snapshot() snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := snapshot{traces: map[string]float64{}, passes: map[string]float64{}, scores: map[scoreKey]*hist{}, passSeconds: s.passSeconds.clone(), injections: s.injections}
	for k, v := range s.traces {
		out.traces[k] = v
	}
	for k, v := range s.passes {
		out.passes[k] = v
	}
	for k, h := range s.scores {
		out.scores[k] = h.clone()
	}
	return out
}
