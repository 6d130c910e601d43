package proxy

import (
	"bytes"
	"context"
	"io"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/confidence"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/sse"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/wire"
)

// streamTap sits between the engine's SSE body and the client. Each Read
// returns the complete events that have arrived, byte for byte, and the
// relay flushes them at once, so nothing is held back but the unfinished
// tail of an event. On the way it fills the record from the chunks, drops
// the usage chunk when the proxy asked for it on the client's behalf, and
// takes out of each chunk the logprobs the proxy asked for
// (stream_logprobs.go).
type streamTap struct {
	body  io.ReadCloser
	rec   *Record
	ctx   context.Context // the client's request: done when it went away
	strip bool
	// stripLogprobs: the proxy asked for this stream's logprobs.
	stripLogprobs bool

	bufs    *tapBuffers // where chunk, pending and out come from (tapBuffersPool)
	chunk   []byte      // one upstream read
	pending []byte      // bytes read but not yet a complete event
	// scanned: pending[:scanned] holds no event end (a blank line), so a
	// read scans only the bytes it added, not the whole unfinished event
	// again.
	scanned int
	// passing: an event grew past maxStreamEvent; its bytes go to the
	// client unread until it ends (last is the byte before the chunk).
	passing bool
	last    byte
	out     []byte // complete events ready for the client
	outPos  int
	err     error // the upstream's final error (io.EOF at the clean end)
	decoded wire.Completion
	// chunks decodes mlx_lm's chunks, most of them, without allocating.
	chunks wire.ChunkDecoder
	// kept: the logprobs values taken out of the event being read, one
	// per choice (slices of pending), when they were taken out.
	kept confidence.Kept
	// model is the member restoreModel writes, made once.
	model []byte

	// The engine stall watch (stall.go, watchStalls): fired when the
	// engine sent nothing for stream_stall.
	watch   *time.Timer
	stalled atomic.Bool
	// watchFrom and lastRead: the last read that brought bytes, as time
	// since watchFrom (monotonic: a step of the wall clock is no stall).
	watchFrom time.Time
	lastRead  atomic.Int64
	// watchDone: the stream ended; a timer that re-armed itself while it
	// was being stopped does nothing when it fires.
	watchDone atomic.Bool

	// activity, when set, gets the time of every read that brought bytes:
	// the engine is alive (the supervisor reads it, Proxy.LastEngineActivity).
	activity *atomic.Int64
}

// streamReadSize is small: a chunk from mlx_lm is a few hundred bytes, and
// a read returns as soon as any bytes are there, so this only bounds the
// copy per read.
const streamReadSize = 4096

// maxStreamEvent bounds one event held back while it arrives: mlx_lm's
// events are a few hundred bytes (a few KiB with logprobs); past this the
// event is relayed unread, and counted.
const maxStreamEvent = 1 << 20

func newStreamTap(ctx context.Context, body io.ReadCloser, rec *Record, strip bool) *streamTap {
	bufs := tapBuffersPool.Get().(*tapBuffers)
	return &streamTap{
		body: body, rec: rec, ctx: ctx, strip: strip, bufs: bufs,
		chunk: bufs.chunk, pending: bufs.pending[:0], out: bufs.out[:0],
		stripLogprobs: rec.LogprobsSource == SourceStreamed,
	}
}

// tapBuffers are a tap's read, pending and output buffers, lent by
// tapBuffersPool for the stream's life: a stream grows them to a few
// KiB, and a new set per stream was a tenth of what the collector
// allocated under streamed load.
type tapBuffers struct{ chunk, pending, out []byte }

var tapBuffersPool = sync.Pool{New: func() any { return &tapBuffers{chunk: make([]byte, streamReadSize)} }}

// maxPooledTapBuffer: a buffer grown past this by a large event is left
// to the garbage collector rather than kept.
const maxPooledTapBuffer = 64 << 10

// giveBack returns the buffers to the pool; the tap reads no more.
func (t *streamTap) giveBack() {
	if t.bufs == nil {
		return
	}
	if cap(t.pending) <= maxPooledTapBuffer && cap(t.out) <= maxPooledTapBuffer {
		t.bufs.pending, t.bufs.out = t.pending[:0], t.out[:0]
		tapBuffersPool.Put(t.bufs)
	}
	t.bufs, t.chunk, t.pending, t.out, t.outPos = nil, nil, nil, nil, 0
	if t.err == nil {
		t.err = io.ErrClosedPipe
	}
}

// watchStalls ends the stream when the engine sends nothing for d: the
// engine's request is cancelled, which ends the pending read.
func (t *streamTap) watchStalls(d time.Duration, cancel context.CancelFunc) {
	if d <= 0 || cancel == nil {
		return
	}
	t.watchFrom = time.Now()
	// The timer is not moved by every read (a stream reads every chunk):
	// when it fires, it looks at the last read and waits out the rest.
	// (Armed only once t.watch is set: the function re-arms it.)
	t.watch = time.AfterFunc(math.MaxInt64, func() {
		if t.watchDone.Load() {
			return
		}
		if quiet := time.Since(t.watchFrom) - time.Duration(t.lastRead.Load()); quiet < d {
			t.watch.Reset(d - quiet)
			return
		}
		t.stalled.Store(true)
		cancel()
	})
	t.watch.Reset(d)
}

func (t *streamTap) Read(p []byte) (int, error) {
	for t.outPos == len(t.out) {
		if t.err != nil {
			return 0, t.err
		}
		t.out, t.outPos = t.out[:0], 0
		n, err := t.body.Read(t.chunk)
		if n > 0 {
			now := time.Now()
			if t.watch != nil {
				t.lastRead.Store(int64(now.Sub(t.watchFrom)))
			}
			if t.activity != nil {
				t.activity.Store(now.UnixNano())
			}
			t.take(t.chunk[:n], now)
		}
		if err != nil {
			t.finish(err)
		}
	}
	n := copy(p, t.out[t.outPos:])
	t.outPos += n
	return n, nil
}

// take adds one upstream read: to pending, or straight to the client
// while an oversized event passes.
func (t *streamTap) take(b []byte, now time.Time) {
	if t.passing {
		end := sse.EventEnd(t.last, b)
		if end < 0 {
			t.out = append(t.out, b...)
			t.last = b[len(b)-1]
			return
		}
		t.out = append(t.out, b[:end]...)
		t.passing, b = false, b[end:]
	}
	t.pending = append(t.pending, b...)
	t.split(now)
	if len(t.pending) > maxStreamEvent {
		t.rec.EventCut = true
		t.out = append(t.out, t.pending...)
		t.passing, t.last = true, t.pending[len(t.pending)-1]
		t.pending, t.scanned = t.pending[:0], 0
	}
}

// split moves the complete events from pending to out.
func (t *streamTap) split(now time.Time) {
	// Without a possible event end since the last scan there is nothing
	// to parse yet.
	if !sse.MayEndEvent(t.pending, t.scanned) {
		t.scanned = len(t.pending)
		return
	}
	rest := t.pending
	for {
		ev, n, ok := sse.Next(rest)
		if !ok {
			break
		}
		t.event(ev, now)
		rest = rest[n:]
	}
	t.pending = append(t.pending[:0], rest...)
	t.scanned = 0
}

// event reads one event into the record and appends it to what the client
// gets: without the logprobs the proxy asked for, with the model name the
// client sent; and gives its data to the live stream.
func (t *streamTap) event(ev sse.Event, now time.Time) {
	if !ev.HasData {
		t.out = append(t.out, ev.Raw...) // keepalive comments and the like
		return
	}
	at, data, stripped := len(t.out), ev.Data, true
	if t.stripLogprobs {
		// Taken out first: the record reads the client's chunk, without
		// the logprobs that are most of the engine's, and the logprobs
		// from this same pass (observe).
		t.out, data, stripped = appendStripped(t.out, ev, &t.kept)
	} else {
		t.out = append(t.out, ev.Raw...)
	}
	if ev.IsDone() {
		t.rec.SawDone = true
	} else {
		if !t.observe(ev, data, now) {
			t.out = t.out[:at]
			return
		}
		t.rec.live.chunk(data, t.rec.ResponseID, now) // before data's bytes move
	}
	if !stripped {
		t.rec.ChunksUnread++
	}
	if t.rec.restoreModel != nil {
		t.restoreModel(at)
	}
}

// restoreModel is restoreModel on the event at out[at:], in place: every
// chunk echoes the name, and a copy of each would cost an allocation.
func (t *streamTap) restoreModel(at int) {
	i := bytes.Index(t.out[at:], echoedDefault)
	if i < 0 {
		return
	}
	if t.model == nil {
		t.model = append([]byte(`"model": `), t.rec.restoreModel...)
	}
	i += at
	t.out = slices.Replace(t.out, i, i+len(echoedDefault), t.model...)
}

// observe reads one chunk into the record and says whether the client
// gets it. client is the chunk's data as the client gets it; with the
// logprobs taken out of it, t.kept holds them.
func (t *streamTap) observe(ev sse.Event, client []byte, now time.Time) (forward bool) {
	if !t.decode(ev, client) {
		if t.stripLogprobs {
			t.rec.ChunksUnread++
		}
		return true
	}
	t.rec.applyChunk(&t.decoded, now)
	usage := t.decoded.IsUsageChunk()
	// The chunk decoder's text is a slice of pending, whose bytes move
	// once the event is read: nothing is to hold it past here.
	t.decoded = wire.Completion{}
	t.chunks.Release()
	return !(t.strip && usage)
}

// decode decodes the chunk into t.decoded, from the client's chunk and
// t.kept where it can (wire.DecodeStripped), and says whether it could.
func (t *streamTap) decode(ev sse.Event, client []byte) bool {
	t.decoded = wire.Completion{}
	if len(t.kept.Values) > 0 && wire.DecodeStripped(&t.decoded, ev.Data, client, t.kept, &t.chunks) {
		t.decoded.LogprobsLent = true // slices of pending: the record copies them
		return true
	}
	t.decoded = wire.Completion{}
	return t.chunks.Decode(ev.Data, &t.decoded) || wire.Decode(ev.Data, &t.decoded) == nil
}

// finish ends the stream: whatever is left of an unfinished event goes to
// the client as it is, and the outcome is settled.
func (t *streamTap) finish(err error) {
	t.out = append(t.out, t.pending...)
	t.pending = t.pending[:0] // back to the pool with the rest (giveBack)
	t.err = err
	if t.watch != nil {
		t.watchDone.Store(true)
		t.watch.Stop()
	}
	if t.stalled.Load() && !t.rec.SawDone && t.rec.Outcome == OutcomePending {
		// The engine went quiet: end the client's stream cleanly.
		t.out = append(t.out, stalledEvent+"data: [DONE]\n\n"...)
		t.err = io.EOF
		t.rec.Stalled = stallEngine
		t.rec.Outcome = OutcomeIncomplete
		return
	}
	switch {
	case t.rec.SawDone && (err == io.EOF || t.ctx.Err() != nil):
		// The engine finished its answer. A client that closes as soon as
		// it reads [DONE] (the openai clients do) cancels the read that
		// would have seen the engine's EOF: its answer is still whole.
		t.rec.Outcome = OutcomeComplete
	case t.ctx.Err() != nil:
		t.rec.Outcome = OutcomeClientGone
	default:
		// The engine closed the stream (or died) before [DONE].
		t.rec.Outcome = OutcomeIncomplete
	}
}

// Close stops the stall watch too: the relay closes without a last Read
// when the client has gone, and the timer's closure would otherwise keep
// the request's record (its body, answer and logprobs) alive until it
// fired.
func (t *streamTap) Close() error {
	if t.watch != nil {
		t.watchDone.Store(true)
		t.watch.Stop()
	}
	t.giveBack()
	return t.body.Close()
}
