package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// ClosedLoop is one level of a closed-loop run (--sweep, --sustain, the
// profile matrix): Workers each send a request, wait for its answer, and
// send the next, as bench_load.py's threads did. It is bounded by
// Settle+Duration (no request starts after) and by MaxRequests; requests
// in flight at the end finish (each within the target's timeout).
type ClosedLoop struct {
	Level    int
	Workers  int
	Settle   time.Duration
	Duration time.Duration
	// MaxRequests caps the level's requests (0 = only the time bound).
	MaxRequests int
	// Call builds the n-th request of the level (n from 0), sent by worker.
	Call func(worker, n int) Call
}

// Run runs the level and returns its measured window.
func (cl ClosedLoop) Run(ctx context.Context, t *Target, rec *Recorder) (window [2]int64) {
	start := time.Now()
	settleEnd := start.Add(cl.Settle)
	end := settleEnd.Add(cl.Duration)
	if cl.Duration <= 0 && cl.MaxRequests <= 0 {
		return [2]int64{rec.US(start), rec.US(start)} // unbounded: nothing is sent
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range cl.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				now := time.Now()
				if cl.Duration > 0 && !now.Before(end) {
					return
				}
				n := int(next.Add(1)) - 1
				if cl.MaxRequests > 0 && n >= cl.MaxRequests {
					return
				}
				res := t.Do(ctx, cl.Call(w, n), now)
				rec.Add(res, cl.Level, w, func(s *Sample) { s.Warmup = now.Before(settleEnd) })
			}
		}()
	}
	wg.Wait()
	stop := time.Now()
	if cl.Duration > 0 && stop.After(end) {
		stop = end
	}
	return [2]int64{rec.US(settleEnd), rec.US(stop)}
}
