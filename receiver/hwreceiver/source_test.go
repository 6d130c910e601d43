package hwreceiver

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func okSource(name string, set func(*sample)) *source {
	return &source{name: name, collect: func(context.Context) (func(*sample), error) { return set, nil }}
}

// blockingSource ignores its context, as a read stuck in the kernel does,
// until release is closed.
func blockingSource(name string, release <-chan struct{}) *source {
	return &source{name: name, collect: func(context.Context) (func(*sample), error) {
		<-release
		return func(s *sample) { s.load1 = fp(99) }, nil
	}}
}

func TestRunSourcesKeepsOrderAndErrors(t *testing.T) {
	boom := errors.New("boom")
	srcs := []*source{
		okSource("a", func(s *sample) { s.load1 = fp(1) }),
		{name: "b", collect: func(context.Context) (func(*sample), error) { return nil, boom }},
		{name: "c", collect: func(context.Context) (func(*sample), error) { panic("parser bug") }},
	}
	rs := runSources(context.Background(), srcs, time.Second)
	require.Len(t, rs, 3)
	assert.Equal(t, []string{"a", "b", "c"}, []string{rs[0].name, rs[1].name, rs[2].name})
	assert.NoError(t, rs[0].err)
	assert.ErrorIs(t, rs[1].err, boom)
	assert.ErrorContains(t, rs[2].err, "panic: parser bug", "a panicking source is a failed source")
}

// A source that never returns does not hold the others, nor the next
// scrape: it is reported failed, and not started a second time.
func TestRunSourcesDoesNotWaitForAHungSource(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	hung := blockingSource("hung", release)
	srcs := []*source{okSource("fast", func(s *sample) { s.load5 = fp(5) }), hung}

	done := make(chan []sourceResult)
	go func() { done <- runSources(context.Background(), srcs, 50*time.Millisecond) }()
	var rs []sourceResult
	select {
	case rs = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("runSources waited for the hung source")
	}
	assert.NoError(t, rs[0].err)
	assert.ErrorContains(t, rs[1].err, "no answer within 50ms")
	assert.Nil(t, rs[1].apply)

	rs = runSources(context.Background(), srcs, 50*time.Millisecond)
	assert.NoError(t, rs[0].err)
	assert.ErrorIs(t, rs[1].err, errSourceBusy, "the hung run is still going: no second one")
}

func TestRunSourcesRunsAgainOnceTheSlowRunEnds(t *testing.T) {
	release := make(chan struct{})
	src := blockingSource("slow", release)
	rs := runSources(context.Background(), []*source{src}, 20*time.Millisecond)
	require.Error(t, rs[0].err)
	close(release)
	require.Eventually(t, func() bool { return !src.busy.Load() }, 10*time.Second, 5*time.Millisecond)
	rs = runSources(context.Background(), []*source{src}, time.Second)
	require.NoError(t, rs[0].err)
	s := newSample()
	rs[0].apply(s)
	assert.Equal(t, 99.0, *s.load1)
}

func TestSourcesGetTheDeadline(t *testing.T) {
	var deadline time.Time
	src := &source{name: "d", collect: func(ctx context.Context) (func(*sample), error) {
		deadline, _ = ctx.Deadline()
		return nil, nil
	}}
	before := time.Now()
	rs := runSources(context.Background(), []*source{src}, time.Minute)
	require.NoError(t, rs[0].err)
	assert.WithinRange(t, deadline, before.Add(time.Minute), time.Now().Add(time.Minute))
	assert.NotNil(t, rs[0].apply, "a source with nothing to apply gets a no-op")
}
