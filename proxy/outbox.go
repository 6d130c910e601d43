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
	name string // for the log: "spans", "access log"
	ch   chan T
	drop dropFunc
	log  *zap.Logger

	consumer atomic.Pointer[consumerRef[T]]
	// handing is held (read) while a batch is with the consumer; detach
	// takes it (write), so that no batch reaches a consumer after its
	// detach returned.
	handing sync.RWMutex

	mu      sync.Mutex
	stop    context.CancelFunc
	stopped chan struct{}
}

// consumerRef is one attached consumer; ctx is cancelled when it is
// detached, so that a batch in its hands gives up.
type consumerRef[T any] struct {
	consume func(context.Context, []T) error
	ctx     context.Context
	cancel  context.CancelFunc
}

// maxBatch bounds one hand-over to the consumer (and a batch is never
// larger than the buffer, so at most twice its size is held).
const maxBatch = 512

// batchLinger is how long the drain waits for more items after the first,
// so that a busy proxy hands over fewer, larger batches.
const batchLinger = 50 * time.Millisecond

// Why an outbox dropped items (the reason label of the counters that
// have one).
const (
	dropQueueFull  = "queue_full"  // the buffer was full
	dropNoPipeline = "no_pipeline" // no consumer was attached
	dropRefused    = "refused"     // the consumer refused the batch (or panicked)
	// dropExportFailed: handed over, then lost by the exporter (a POST
	// failed); the collector side counts these (CountLiveDrops).
	dropExportFailed = "export_failed"
)

// dropFunc counts n items dropped for reason.
type dropFunc func(reason string, n int)

// countAll counts every drop in one counter, whatever the reason.
func countAll(c prometheus.Counter) dropFunc {
	return func(_ string, n int) { c.Add(float64(n)) }
}

func newOutbox[T any](name string, size int, drop dropFunc, log *zap.Logger) *outbox[T] {
	if log == nil {
		log = zap.NewNop()
	}
	return &outbox[T]{name: name, ch: make(chan T, max(size, 1)), drop: drop, log: log}
}

// attached reports whether a consumer takes what is offered: when false,
// the request path need not build anything.
func (o *outbox[T]) attached() bool { return o.consumer.Load() != nil }

// attach makes consume the consumer, replacing any other. The returned
// function detaches it (and only it): it first hands what is buffered to
// it, within ctx, then waits for a batch still in its hands (which it
// asks to give up when ctx ends); after it returns, consume is not called
// again.
func (o *outbox[T]) attach(consume func(context.Context, []T) error) (detach func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	ref := &consumerRef[T]{consume: consume, ctx: ctx, cancel: cancel}
	o.consumer.Store(ref)
	return func(dctx context.Context) {
		if o.consumer.Load() != ref {
			return
		}
		// When dctx ends, a batch with the consumer is asked to give up.
		stop := context.AfterFunc(dctx, cancel)
		defer stop()
		o.flush(dctx)
		o.handing.Lock()
		o.consumer.CompareAndSwap(ref, nil)
		o.handing.Unlock()
		cancel()
	}
}

// offer buffers item for the consumer, or drops and counts it; it says
// whether item was buffered.
func (o *outbox[T]) offer(item T) bool {
	if o.consumer.Load() == nil {
		o.drop(dropNoPipeline, 1)
		return false
	}
	select {
	case o.ch <- item:
		return true
	default:
		o.drop(dropQueueFull, 1)
		return false
	}
}

// start runs the drain until shutdown.
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

// shutdown ends the drain and hands what is buffered to the consumer, if
// one is still attached, within ctx. Safe without start and more than once.
func (o *outbox[T]) shutdown(ctx context.Context) {
	o.mu.Lock()
	stop, stopped := o.stop, o.stopped
	o.stop = nil
	o.mu.Unlock()
	if stop == nil {
		return
	}
	stop()
	select {
	case <-stopped:
	case <-ctx.Done():
		return
	}
	o.flush(ctx)
}

// flush hands what is buffered to the consumer until the buffer is empty
// or ctx ends.
func (o *outbox[T]) flush(ctx context.Context) {
	for ctx.Err() == nil {
		batch := o.take(nil, false)
		if len(batch) == 0 {
			return
		}
		o.hand(batch)
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
		o.hand(o.take([]T{first}, true))
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
func (o *outbox[T]) hand(batch []T) {
	o.handing.RLock()
	defer o.handing.RUnlock()
	ref := o.consumer.Load()
	if ref == nil {
		o.drop(dropNoPipeline, len(batch))
		return
	}
	defer func() {
		if r := recover(); r != nil {
			o.drop(dropRefused, len(batch))
			o.log.Error("Telemetry consumer panicked; batch dropped", zap.String("signal", o.name), zap.Any("panic", r))
		}
	}()
	if err := ref.consume(ref.ctx, batch); err != nil {
		o.drop(dropRefused, len(batch))
		o.log.Debug("Telemetry consumer refused a batch", zap.String("signal", o.name), zap.Int("items", len(batch)), zap.Error(err))
	}
}
