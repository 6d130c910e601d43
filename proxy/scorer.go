package proxy

import (
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/confidence"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/heuristics"
)

// scorer is the recorder that scores finished answers: token confidence
// from their logprobs, and the text heuristics. End only copies what it
// needs into a job and queues it; one goroutine does the work, so a long
// answer's scoring (a few milliseconds per 1,000 tokens) never delays the
// end of a response. A full queue drops the job and counts it.
type scorer struct {
	metrics   *qualityFamilies
	models    *labelSet // the proxy's model label set: one bound for all series
	checker   *heuristics.Checker
	lowConfid float64
	log       *zap.Logger
	onPanic   panicReporter

	queue   chan scoreJob
	mu      sync.Mutex
	done    chan struct{} // closed when the worker has ended; nil when not running
	stopped bool          // stop was called: nothing reads the queue any more

	queued, scored atomic.Int64 // jobs queued and jobs scored, for idle
}

// scoreJob is what scoring needs of one answer: the record does not
// outlive End.
type scoreJob struct {
	span        *pendingSpan // the request's span, nil when untraced
	model, kind string
	source      string // "" when no logprobs were asked for
	greedy      bool
	heuristics  heuristics.Input
	// text is the generated text in generation order (reasoning, content,
	// tool calls as the model wrote them) for the sampled-token walk.
	text     string
	logprobs []json.RawMessage
}

func newScorer(cfg Config, m *qualityFamilies, models *labelSet, log *zap.Logger) *scorer {
	rules := heuristics.Default
	rules.FlagThreshold = cfg.HallucinationFlagThreshold
	return &scorer{
		metrics:   m,
		models:    models,
		checker:   heuristics.Compile(rules),
		lowConfid: cfg.LowConfidenceThreshold,
		log:       log,
		queue:     make(chan scoreJob, max(cfg.ScoringQueue, 1)),
	}
}

// start runs the worker until stop.
func (s *scorer) start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done != nil {
		return
	}
	s.done = make(chan struct{})
	go s.run(s.queue, s.done)
}

// stop scores what is queued and ends the worker. Safe without start and
// more than once; an End after it counts its answer as dropped.
func (s *scorer) stop() {
	s.mu.Lock()
	q, done := s.queue, s.done
	s.stopped = true
	if done != nil {
		s.queue = make(chan scoreJob, cap(q))
		s.done = nil
	}
	s.mu.Unlock()
	if done != nil {
		close(q)
		<-done
	}
}

// idle reports that every job queued so far is scored.
func (s *scorer) idle() bool { return s.scored.Load() == s.queued.Load() }

func (s *scorer) run(q <-chan scoreJob, done chan<- struct{}) {
	defer close(done)
	for job := range q {
		s.run1(&job)
		s.scored.Add(1)
	}
}

// run1 does one job; a panic in it loses that job only.
func (s *scorer) run1(job *scoreJob) {
	defer func() {
		if r := recover(); r != nil {
			s.metrics.mlxScoringDroppedTotal.Inc()
			if job.span != nil {
				job.span.drop()
			}
			s.onPanic.report(panicScorer, r)
		}
	}()
	hook(panicScorer)
	s.do(job)
}

// Begin implements Recorder.
func (s *scorer) Begin(*Record) {}

// End implements Recorder: an answer that reached the client whole with a
// 2xx status is queued for scoring. Only the first choice is scored
// (mlx_lm always sends one). Its span rides along, and the worker finishes
// it after scoring, so the scores are on it; any other request's span, and
// the span of an answer the full queue could not take, is finished
// without scores by the tracer's own worker.
func (s *scorer) End(rec *Record) {
	job, scored := s.jobOf(rec)
	span := rec.span
	rec.span = nil
	if scored {
		job.span = span
		if s.enqueue(job) {
			return
		}
		s.metrics.mlxScoringDroppedTotal.Inc()
	}
	if span != nil {
		span.finishLater()
	}
}

// enqueue queues a job unless the queue is full or the scorer stopped (a
// request cut at shutdown ended after the worker).
func (s *scorer) enqueue(job scoreJob) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return false
	}
	select {
	case s.queue <- job:
		s.queued.Add(1)
		return true
	default:
		return false
	}
}

// jobOf is the scoring job of a finished request; scored is false when
// the answer is not scored.
func (s *scorer) jobOf(rec *Record) (job scoreJob, scored bool) {
	if rec.Outcome != OutcomeComplete || rec.Status < 200 || rec.Status > 299 || !rec.scoredOrigin() {
		return job, false
	}
	if len(rec.Choices) == 0 {
		if rec.LogprobsSource != "" {
			// Logprobs were due, but the answer could not be read (too
			// large, not JSON): say so rather than nothing.
			s.metrics.mlxConfidenceUnscoredTotal.WithLabelValues(s.models.value(rec.Model), rec.LogprobsSource).Inc()
		}
		return job, false
	}
	ch := rec.Choices[0]
	for _, c := range rec.Choices[1:] {
		if c.Index < ch.Index {
			ch = c
		}
	}
	job = scoreJob{
		model:  s.models.value(rec.Model),
		kind:   rec.Kind,
		source: rec.LogprobsSource,
		greedy: rec.HasTemperature && rec.Temperature == 0,
		heuristics: heuristics.Input{
			Text:         ch.Text.String(),
			ToolsOffered: rec.ToolsOffered,
			ToolCalled:   len(ch.ToolCalls) > 0,
			ToolResults:  rec.ToolResults,
		},
		logprobs: ch.Logprobs,
	}
	if job.source == SourceStreamed && rec.ChunksUnread > 0 {
		job.logprobs = nil // a chunk went by unread: a part of the answer would be scored as the whole
	}
	if job.source == "" && len(ch.Logprobs) > 0 {
		job.source = SourceClient // sent although nobody asked: the engine's own
	}
	if job.source != "" {
		job.text = generatedText(ch)
	}
	return job, true
}

// generatedText is the choice's output in the order the model wrote it:
// reasoning, content, then each tool call as a Hermes-style model writes
// it between its tool-call tags.
func generatedText(ch *Choice) string {
	var b strings.Builder
	b.WriteString(ch.Reasoning.String())
	b.WriteString(ch.Text.String())
	for _, tc := range ch.ToolCalls {
		b.WriteString(confidence.ToolCallText(tc.Name, tc.Arguments))
	}
	return b.String()
}

// do scores the job's answer (when due) and finishes its span.
func (s *scorer) do(job *scoreJob) {
	h, sc := s.score(job)
	if job.span != nil {
		job.span.finish(h, sc)
	}
}

// score returns the heuristics and, when the answer had logprobs, its
// confidence (nil otherwise).
func (s *scorer) score(job *scoreJob) (*heuristics.Result, *confidence.Score) {
	r := s.checker.Evaluate(job.heuristics)
	s.metrics.observeHeuristics(job.model, job.kind, &r)
	if job.source == "" {
		return &r, nil
	}
	lp := &confidence.Logprobs{}
	for _, raw := range job.logprobs {
		lp.Add(raw)
	}
	sc := lp.Score(confidence.Options{Greedy: job.greedy, Text: job.text, LowConfidence: s.lowConfid})
	s.metrics.observeConfidence(job.model, job.source, &sc)
	return &r, &sc
}
