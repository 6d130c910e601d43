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
	return runClosed(ctx, rec, cl.Workers, cl.Settle, cl.Duration, cl.MaxRequests,
		func(w, _, n int, now time.Time) (Result, int) { return t.Do(ctx, cl.Call(w, n), now), cl.Level })
}

// runClosed is the closed loop of ClosedLoop and Interleaved: workers that
// each send their k-th request (the n-th of the run) once the previous one
// is answered, until the time or count bound. send sends it and says under
// which level it is recorded.
func runClosed(ctx context.Context, rec *Recorder, workers int, settle, duration time.Duration, maxRequests int,
	send func(w, k, n int, now time.Time) (Result, int)) (window [2]int64) {
	start := time.Now()
	settleEnd := start.Add(settle)
	end := settleEnd.Add(duration)
	if duration <= 0 && maxRequests <= 0 {
		return [2]int64{rec.US(start), rec.US(start)} // unbounded: nothing is sent
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; ctx.Err() == nil; k++ {
				now := time.Now()
				if duration > 0 && !now.Before(end) {
					return
				}
				n := int(next.Add(1)) - 1
				if maxRequests > 0 && n >= maxRequests {
					return
				}
				res, level := send(w, k, n, now)
				rec.Add(res, level, w, func(s *Sample) { s.Warmup = now.Before(settleEnd) })
			}
		}()
	}
	wg.Wait()
	stop := time.Now()
	if duration > 0 && stop.After(end) {
		stop = end
	}
	return [2]int64{rec.US(settleEnd), rec.US(stop)}
}
