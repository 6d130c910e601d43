package hwreceiver

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// slowSource is a source that blocks for about a second (powermetrics
// samples for one) or may be slow to answer (nvidia-smi without persistence
// mode). It runs in the background at slow_interval; scrapes emit its last
// result.
type slowSource struct {
	name    string
	collect collectFunc
}

// slowResult is the last outcome of a slow source.
type slowResult struct {
	at    time.Time // when the run ended
	apply func(*sample)
	err   error
}

// slowLoop runs each slow source in its own goroutine: immediately at
// start, then every interval. A run that hangs holds up only that
// source's next runs, never a scrape.
type slowLoop struct {
	sources    []slowSource
	interval   time.Duration
	timeout    time.Duration
	staleAfter time.Duration
	now        func() time.Time

	mu   sync.Mutex
	last map[string]slowResult
	// firstRun is when each source's first run started, so a source whose
	// very first run hangs is reported too.
	firstRun map[string]time.Time

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newSlowLoop(sources []slowSource, interval, timeout, staleAfter time.Duration) *slowLoop {
	return &slowLoop{
		sources: sources, interval: interval, timeout: timeout, staleAfter: staleAfter,
		now: time.Now, last: map[string]slowResult{}, firstRun: map[string]time.Time{},
	}
}

func (l *slowLoop) start() {
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	for _, src := range l.sources {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			t := time.NewTicker(l.interval)
			defer t.Stop()
			for {
				l.runOnce(ctx, src)
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		}()
	}
}

// runOnce runs a source with the loop's timeout and keeps the result.
func (l *slowLoop) runOnce(ctx context.Context, src slowSource) {
	l.mu.Lock()
	if _, ok := l.firstRun[src.name]; !ok {
		l.firstRun[src.name] = l.now()
	}
	l.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	apply, err := safeCollect(rctx, src.collect)
	if ctx.Err() != nil {
		return // shutting down: the result is of no use
	}
	l.mu.Lock()
	l.last[src.name] = slowResult{at: l.now(), apply: apply, err: err}
	l.mu.Unlock()
}

// stop ends the loop and waits for the running sources, at most until ctx
// is done: a command that cannot be killed (sudo's child) must not hold up
// the collector's shutdown.
func (l *slowLoop) stop(ctx context.Context) error {
	if l.cancel == nil {
		return nil
	}
	l.cancel()
	done := make(chan struct{})
	go func() { l.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("slow sources still running at shutdown: %w", ctx.Err())
	}
}

// results returns, for each slow source that has run and applies to this
// host, its last error (nil when it worked), and applies the fresh
// successful results to s. A result older than staleAfter counts as a
// failure: its source has not answered for two runs.
func (l *slowLoop) results(s *sample, now time.Time) map[string]error {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]error{}
	for _, src := range l.sources {
		r, ok := l.last[src.name]
		switch {
		case !ok:
			if t, started := l.firstRun[src.name]; started && now.Sub(t) > l.staleAfter {
				out[src.name] = fmt.Errorf("no answer since %s", now.Sub(t).Round(time.Second))
			}
		case errors.Is(r.err, errNotApplicable):
		case r.err != nil:
			out[src.name] = r.err
		case now.Sub(r.at) > l.staleAfter:
			out[src.name] = fmt.Errorf("last sample is %s old", now.Sub(r.at).Round(time.Second))
		default:
			out[src.name] = nil
			r.apply(s)
		}
	}
	return out
}
