package proxy

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

// outbox is a bounded buffer between the request path and a consumer the
// collector side attaches (the pipeline of spans, of access log records).
// offer never blocks: with no consumer attached, or with the buffer full,
// the item is dropped and counted. One goroutine hands what is buffered to
// the consumer in batches; a consumer that blocks only fills the buffer.
type outbox[T any] struct {
	name    string // for the log: "spans", "access log"
	ch      chan T
	dropped prometheus.Counter
	log     *zap.Logger

	consumer atomic.Pointer[consumerRef[T]]

	mu      sync.Mutex
	stop    context.CancelFunc
	stopped chan struct{}
}

// consumerRef boxes a consumer so it can sit in an atomic.Pointer.
type consumerRef[T any] struct {
	consume func(context.Context, []T) error
}

// maxBatch bounds one hand-over to the consumer (and a batch is never
// larger than the buffer, so at most twice its size is held).
const maxBatch = 512

// batchLinger is how long the drain waits for more items after the first,
// so that a busy proxy hands over fewer, larger batches.
const batchLinger = 50 * time.Millisecond

func newOutbox[T any](name string, size int, dropped prometheus.Counter, log *zap.Logger) *outbox[T] {
	return &outbox[T]{name: name, ch: make(chan T, max(size, 1)), dropped: dropped, log: log}
}

// attached reports whether a consumer takes what is offered: when false,
// the request path need not build anything.
func (o *outbox[T]) attached() bool { return o.consumer.Load() != nil }

// attach makes consume the consumer, replacing any other. The returned
// function detaches it (and only it).
func (o *outbox[T]) attach(consume func(context.Context, []T) error) (detach func()) {
	ref := &consumerRef[T]{consume: consume}
	o.consumer.Store(ref)
	return func() { o.consumer.CompareAndSwap(ref, nil) }
}

// offer buffers item for the consumer, or drops and counts it.
func (o *outbox[T]) offer(item T) {
	if o.consumer.Load() == nil {
		o.dropped.Inc()
		return
	}
	select {
	case o.ch <- item:
	default:
		o.dropped.Inc()
	}
}

// start runs the drain until stop.
func (o *outbox[T]) start() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.stop != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	o.stop, o.stopped = cancel, make(chan struct{})
	go o.drain(ctx, o.stopped)
}

// shutdown hands what is buffered to the consumer, within ctx, then ends
// the drain. Safe without start and more than once.
func (o *outbox[T]) shutdown(ctx context.Context) {
	o.mu.Lock()
	stop, stopped := o.stop, o.stopped
	o.stop = nil
	o.mu.Unlock()
	if stop == nil {
		return
	}
	stop()
	<-stopped
	for {
		batch := o.take(nil, false)
		if len(batch) == 0 || ctx.Err() != nil {
			return
		}
		o.hand(ctx, batch)
	}
}

func (o *outbox[T]) drain(ctx context.Context, stopped chan<- struct{}) {
	defer close(stopped)
	for {
		var first T
		select {
		case <-ctx.Done():
			return
		case first = <-o.ch:
		}
		batch := o.take([]T{first}, true)
		o.hand(ctx, batch)
	}
}

// take adds what is buffered to batch, up to maxBatch; with linger it
// waits up to batchLinger for the batch to fill.
func (o *outbox[T]) take(batch []T, linger bool) []T {
	var timeout <-chan time.Time
	if linger {
		t := time.NewTimer(batchLinger)
		defer t.Stop()
		timeout = t.C
	}
	limit := min(maxBatch, cap(o.ch))
	for len(batch) < limit {
		select {
		case item := <-o.ch:
			batch = append(batch, item)
			continue
		default:
		}
		if timeout == nil {
			return batch
		}
		select {
		case item := <-o.ch:
			batch = append(batch, item)
		case <-timeout:
			return batch
		}
	}
	return batch
}

// hand gives one batch to the consumer. A consumer that panics or fails
// loses that batch (counted); the drain goes on.
func (o *outbox[T]) hand(ctx context.Context, batch []T) {
	ref := o.consumer.Load()
	if ref == nil {
		o.dropped.Add(float64(len(batch)))
		return
	}
	defer func() {
		if r := recover(); r != nil {
			o.dropped.Add(float64(len(batch)))
			o.log.Error("Telemetry consumer panicked; batch dropped", zap.String("signal", o.name), zap.Any("panic", r))
		}
	}()
	if err := ref.consume(ctx, batch); err != nil {
		o.dropped.Add(float64(len(batch)))
		o.log.Debug("Telemetry consumer refused a batch", zap.String("signal", o.name), zap.Int("items", len(batch)), zap.Error(err))
	}
}
