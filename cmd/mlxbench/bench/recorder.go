package bench

import (
	"sync"
	"time"
)

// Recorder collects the samples of a run. It is safe for concurrent use;
// OnSample (optional) sees each sample as it is added, for live progress.
type Recorder struct {
	T0       time.Time
	OnSample func(Sample)

	mu      sync.Mutex
	samples []Sample
}

// NewRecorder starts a run's clock.
func NewRecorder() *Recorder { return &Recorder{T0: time.Now()} }

// Add records a result as a sample of level and worker and returns it.
func (r *Recorder) Add(res Result, level, worker int, edit func(*Sample)) Sample {
	s := NewSample(res, r.T0, level, worker)
	if edit != nil {
		edit(&s)
	}
	r.mu.Lock()
	r.samples = append(r.samples, s)
	r.mu.Unlock()
	if r.OnSample != nil {
		r.OnSample(s)
	}
	return s
}

// Samples returns a copy of the samples so far.
func (r *Recorder) Samples() []Sample {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Sample(nil), r.samples...)
}

// Since is the time since the run started in seconds.
func (r *Recorder) Since(t time.Time) float64 { return t.Sub(r.T0).Seconds() }

// US is t in microseconds since the run started.
func (r *Recorder) US(t time.Time) int64 { return t.Sub(r.T0).Microseconds() }
