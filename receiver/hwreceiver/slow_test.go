package hwreceiver

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeClock is a settable clock for the slow loop.
type fakeClock struct{ t atomic.Pointer[time.Time] }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.set(time.Unix(1_700_000_000, 0))
	return c
}
func (c *fakeClock) set(t time.Time)         { c.t.Store(&t) }
func (c *fakeClock) now() time.Time          { return *c.t.Load() }
func (c *fakeClock) advance(d time.Duration) { c.set(c.now().Add(d)) }

func slowSrc(name string, collect collectFunc) slowSource {
	return slowSource{name: name, collect: collect}
}

func TestSlowResultIsEmittedWhileFresh(t *testing.T) {
	clock := newFakeClock()
	l := newSlowLoop([]slowSource{slowSrc("powermetrics", func(context.Context) (func(*sample), error) {
		return func(s *sample) { s.gpuPowerMW = fp(190) }, nil
	})}, 15*time.Second, time.Second, 34*time.Second)
	l.now = clock.now

	s := newSample()
	assert.Empty(t, l.results(s, clock.now()), "nothing reported before the first run")

	l.runOnce(context.Background(), l.sources[0])
	s = newSample()
	assert.Equal(t, map[string]error{"powermetrics": nil}, l.results(s, clock.now()))
	assert.Equal(t, 190.0, *s.gpuPowerMW)

	clock.advance(35 * time.Second)
	s = newSample()
	errs := l.results(s, clock.now())
	assert.ErrorContains(t, errs["powermetrics"], "last sample is 35s old")
	assert.Nil(t, s.gpuPowerMW, "a stale sample is not emitted")
}

func TestSlowFailureReplacesTheLastSample(t *testing.T) {
	fail := atomic.Bool{}
	l := newSlowLoop([]slowSource{slowSrc("powermetrics", func(context.Context) (func(*sample), error) {
		if fail.Load() {
			return nil, errors.New("sudo: a password is required")
		}
		return func(s *sample) { s.cpuPowerMW = fp(475) }, nil
	})}, time.Second, time.Second, time.Hour)
	l.runOnce(context.Background(), l.sources[0])
	fail.Store(true)
	l.runOnce(context.Background(), l.sources[0])
	s := newSample()
	assert.ErrorContains(t, l.results(s, time.Now())["powermetrics"], "password")
	assert.Nil(t, s.cpuPowerMW, "no value from a sample before the failure")
}

func TestSlowSourceNotApplicableIsNotReported(t *testing.T) {
	l := newSlowLoop([]slowSource{slowSrc("nvidia_smi", func(context.Context) (func(*sample), error) {
		return nil, errNotApplicable
	})}, time.Second, time.Second, time.Hour)
	l.runOnce(context.Background(), l.sources[0])
	assert.Empty(t, l.results(newSample(), time.Now()))
}

// A slow source whose very first run never ends is reported once it has
// been silent for longer than staleAfter; scrapes meanwhile go on.
func TestSlowSourceHungFromTheStart(t *testing.T) {
	clock := newFakeClock()
	release := make(chan struct{})
	l := newSlowLoop([]slowSource{slowSrc("powermetrics", func(context.Context) (func(*sample), error) {
		<-release // ignores its context: an unkillable sudo'd command
		return nil, nil
	})}, time.Hour, time.Millisecond, 10*time.Second)
	l.now = clock.now
	l.start()
	require.Eventually(t, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		_, ok := l.firstRun["powermetrics"]
		return ok
	}, 10*time.Second, time.Millisecond)

	assert.Empty(t, l.results(newSample(), clock.now()))
	clock.advance(11 * time.Second)
	assert.ErrorContains(t, l.results(newSample(), clock.now())["powermetrics"], "no answer since 11s")

	// Shutdown does not wait past its context for the stuck run.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, l.stop(ctx), context.DeadlineExceeded)
	close(release)
	assert.NoError(t, l.stop(context.Background()))
}

func TestSlowLoopRunsAtStartAndStops(t *testing.T) {
	var runs atomic.Int32
	l := newSlowLoop([]slowSource{slowSrc("x", func(ctx context.Context) (func(*sample), error) {
		runs.Add(1)
		_, hasDeadline := ctx.Deadline()
		if !hasDeadline {
			return nil, errors.New("no deadline")
		}
		return nil, nil
	})}, time.Hour, time.Second, time.Hour)
	l.start()
	require.Eventually(t, func() bool { return runs.Load() == 1 }, 10*time.Second, time.Millisecond)
	require.NoError(t, l.stop(context.Background()))
	assert.Equal(t, map[string]error{"x": nil}, l.results(newSample(), time.Now()), "runs carry the loop's timeout")
	assert.NoError(t, (&slowLoop{}).stop(context.Background()), "stop without start")
}
