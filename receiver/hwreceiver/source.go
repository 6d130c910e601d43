package hwreceiver

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// errNotApplicable is returned by a source that has nothing to read on this
// host (no temperature sensor, no nvidia-smi): it is then not reported in
// mlx_hw_source_up at all, rather than reported as failing.
var errNotApplicable = errors.New("not applicable on this host")

// errSourceBusy: the source's run of an earlier scrape has not returned yet
// (a read blocked in the kernel, such as statfs on a dead NFS mount, cannot
// be interrupted). A second run is not started beside it.
var errSourceBusy = errors.New("still running since an earlier scrape")

// collectFunc reads one source. It returns a function that writes what was
// read into a sample, so the reading (concurrent, bounded in time) and the
// writing (sequential, in a fixed order) are apart. A collectFunc must
// honour ctx.
type collectFunc func(ctx context.Context) (apply func(*sample), err error)

// source is one fast-cadence source, run at every scrape.
type source struct {
	name    string
	collect collectFunc
	busy    atomic.Bool
}

// sourceResult is the outcome of one source at one scrape.
type sourceResult struct {
	name  string
	apply func(*sample)
	err   error
}

// resultGrace is how long past the deadline runSources waits for sources
// to return: a command killed at the deadline needs a moment to be reaped.
const resultGrace = waitDelay + 250*time.Millisecond

// runSources runs the sources concurrently, each with ctx bounded by
// timeout, and returns one result per source in the order given. A source
// that has not returned by the deadline (plus resultGrace) is reported as
// failed and its late result is dropped, so one hung source never stalls
// the scrape.
func runSources(ctx context.Context, srcs []*source, timeout time.Duration) []sourceResult {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	results := make([]sourceResult, len(srcs))
	type indexed struct {
		i int
		r sourceResult
	}
	// Buffered for every source, so a source that returns after we stopped
	// waiting never blocks.
	done := make(chan indexed, len(srcs))
	pending := 0
	for i, src := range srcs {
		if !src.busy.CompareAndSwap(false, true) {
			results[i] = sourceResult{name: src.name, err: errSourceBusy}
			continue
		}
		// Stays the result unless the source answers in time.
		results[i] = sourceResult{name: src.name, err: fmt.Errorf("no answer within %s", timeout)}
		pending++
		go func() {
			defer src.busy.Store(false)
			apply, err := safeCollect(ctx, src.collect)
			done <- indexed{i, sourceResult{name: src.name, apply: apply, err: err}}
		}()
	}
	deadline, _ := ctx.Deadline()
	giveUp := time.NewTimer(time.Until(deadline) + resultGrace)
	defer giveUp.Stop()
	for ; pending > 0; pending-- {
		select {
		case d := <-done:
			results[d.i] = d.r
		case <-giveUp.C:
			return results
		}
	}
	return results
}

// safeCollect turns a panic in a source into an error: a parser or a
// library bug must not take the collector down.
func safeCollect(ctx context.Context, f collectFunc) (apply func(*sample), err error) {
	defer func() {
		if p := recover(); p != nil {
			apply, err = nil, fmt.Errorf("panic: %v", p)
		}
	}()
	apply, err = f(ctx)
	if err == nil && apply == nil {
		apply = func(*sample) {}
	}
	return apply, err
}
