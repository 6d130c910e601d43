package proxy

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newTestOutbox(size int) (*outbox[int], prometheus.Counter) {
	dropped := prometheus.NewCounter(prometheus.CounterOpts{Name: "dropped"})
	return newOutbox[int]("test", size, countAll(dropped), nil), dropped
}

// Detaching hands the consumer what is buffered, and after it returns the
// consumer is never called again.
func TestDetachFlushesAndThenNeverCalls(t *testing.T) {
	o, dropped := newTestOutbox(100)
	var mu sync.Mutex
	var got []int
	var after atomic.Bool
	detach := o.attach(func(_ context.Context, b []int) error {
		if after.Load() {
			t.Errorf("consumer called after detach returned")
		}
		mu.Lock()
		got = append(got, b...)
		mu.Unlock()
		return nil
	})
	// Not started: nothing drains, so everything is still buffered.
	for i := range 10 {
		o.offer(i)
	}
	detach(context.Background())
	after.Store(true)
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, got)
	o.offer(10)
	assert.Equal(t, 1.0, testutil.ToFloat64(dropped), "offered with no consumer: dropped")
	o.start()
	o.shutdown(context.Background())
}

// A consumer that blocks holds up neither detach nor shutdown past their
// contexts, and never the one who offers.
func TestABlockedConsumerHoldsUpNothing(t *testing.T) {
	o, dropped := newTestOutbox(4)
	entered := make(chan struct{}, 1)
	detach := o.attach(func(ctx context.Context, _ []int) error {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-ctx.Done() // gives up only when asked to
		return ctx.Err()
	})
	o.start()
	o.offer(1)
	<-entered
	start := time.Now()
	for i := range 100 {
		o.offer(i)
	}
	assert.Less(t, time.Since(start), 100*time.Millisecond, "offer never waits")
	assert.GreaterOrEqual(t, testutil.ToFloat64(dropped), 90.0)

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start = time.Now()
	detach(ctx)
	assert.Less(t, time.Since(start), 2*time.Second)
	sctx, scancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer scancel()
	o.shutdown(sctx)
	require.False(t, o.attached())
}
