package bench

import (
	"context"
	"time"
)

// Interleaved is the overhead run: closed-loop workers whose requests
// alternate between two targets (direct to the engine, and through the
// proxy), so both paths see the same engine, the same load and the same
// moment; worker w starts on path w%2 so that the two paths are never in
// step. Levels are the two paths' level indexes.
type Interleaved struct {
	Levels      [2]int
	Targets     [2]*Target
	Workers     int
	Settle      time.Duration
	Duration    time.Duration
	MaxRequests int
	Call        func(worker, n int) Call
}

// Run runs both paths until the time or count bound.
func (il Interleaved) Run(ctx context.Context, rec *Recorder) (window [2]int64) {
	return runClosed(ctx, rec, il.Workers, il.Settle, il.Duration, il.MaxRequests,
		func(w, k, n int, now time.Time) (Result, int) {
			p := (w + k) % 2
			return il.Targets[p].Do(ctx, il.Call(w, n), now), il.Levels[p]
		})
}
