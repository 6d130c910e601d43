package bench

import (
	"context"
	"sync"
	"sync/atomic"
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
	start := time.Now()
	settleEnd := start.Add(il.Settle)
	end := settleEnd.Add(il.Duration)
	if il.Duration <= 0 && il.MaxRequests <= 0 {
		return [2]int64{rec.US(start), rec.US(start)} // unbounded: nothing is sent
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range il.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; ctx.Err() == nil; k++ {
				now := time.Now()
				if il.Duration > 0 && !now.Before(end) {
					return
				}
				n := int(next.Add(1)) - 1
				if il.MaxRequests > 0 && n >= il.MaxRequests {
					return
				}
				p := (w + k) % 2
				res := il.Targets[p].Do(ctx, il.Call(w, n), now)
				rec.Add(res, il.Levels[p], w, func(s *Sample) { s.Warmup = now.Before(settleEnd) })
			}
		}()
	}
	wg.Wait()
	stop := time.Now()
	if il.Duration > 0 && stop.After(end) {
		stop = end
	}
	return [2]int64{rec.US(settleEnd), rec.US(stop)}
}
