package bench

import (
	"context"
	"sync"
	"time"
)

// OpenLoop is one level of an open-loop run (--rate): requests start on a
// schedule (Schedule) whatever the server does. Each request's latency is
// measured from its scheduled start, so a server that falls behind shows
// its queueing in the figures instead of slowing the rig down (coordinated
// omission). MaxInFlight bounds the requests waiting on the server; when
// it is reached the next send waits for a slot and goes out late, which
// the summary reports (late sends, lateness), and its latency still counts
// from its schedule.
type OpenLoop struct {
	Level       int
	Rate        float64
	Arrival     string
	Seed        uint64
	Settle      time.Duration
	Duration    time.Duration
	MaxRequests int
	MaxInFlight int
	// Call builds the n-th request of the level.
	Call func(n int) Call
}

// Run sends the schedule and waits for the answers.
func (ol OpenLoop) Run(ctx context.Context, t *Target, rec *Recorder) error {
	sched, err := Schedule(ol.Arrival, ol.Rate, ol.Settle+ol.Duration, ol.MaxRequests, ol.Seed)
	if err != nil {
		return err
	}
	inFlight := ol.MaxInFlight
	if inFlight <= 0 {
		inFlight = 1024
	}
	slots := make(chan struct{}, inFlight)
	var wg sync.WaitGroup
	defer wg.Wait()
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	start := time.Now()
	for n, off := range sched {
		at := start.Add(off)
		if d := time.Until(at); d > 0 {
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-ctx.Done():
				return nil
			}
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			res := t.Do(ctx, ol.Call(n), at)
			rec.Add(res, ol.Level, n, func(s *Sample) { s.Warmup = off < ol.Settle })
		}()
	}
	return nil
}
