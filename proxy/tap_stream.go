package proxy

import (
	"context"
	"io"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/sse"
)

// streamTap sits between the engine's SSE body and the client. Each Read
// returns the complete events that have arrived, byte for byte, and the
// relay flushes them at once, so nothing is held back but the unfinished
// tail of an event. On the way it fills the record from the chunks, and
// drops the usage chunk when the proxy asked for it on the client's
// behalf.
type streamTap struct {
	body  io.ReadCloser
	rec   *Record
	ctx   context.Context // the client's request: done when it went away
	strip bool

	chunk   []byte // one upstream read
	pending []byte // bytes read but not yet a complete event
	out     []byte // complete events ready for the client
	outPos  int
	err     error // the upstream's final error (io.EOF at the clean end)
	decoded completionJSON
}

// streamReadSize is small: a chunk from mlx_lm is a few hundred bytes, and
// a read returns as soon as any bytes are there, so this only bounds the
// copy per read.
const streamReadSize = 4096

func newStreamTap(ctx context.Context, body io.ReadCloser, rec *Record, strip bool) *streamTap {
	return &streamTap{body: body, rec: rec, ctx: ctx, strip: strip, chunk: make([]byte, streamReadSize)}
}

func (t *streamTap) Read(p []byte) (int, error) {
	for t.outPos == len(t.out) {
		if t.err != nil {
			return 0, t.err
		}
		t.out, t.outPos = t.out[:0], 0
		n, err := t.body.Read(t.chunk)
		if n > 0 {
			t.pending = append(t.pending, t.chunk[:n]...)
			t.split(time.Now())
		}
		if err != nil {
			t.finish(err)
		}
	}
	n := copy(p, t.out[t.outPos:])
	t.outPos += n
	return n, nil
}

// split moves the complete events from pending to out.
func (t *streamTap) split(now time.Time) {
	rest := t.pending
	for {
		ev, n, ok := sse.Next(rest)
		if !ok {
			break
		}
		if t.observe(ev, now) {
			t.out = append(t.out, ev.Raw...)
		}
		rest = rest[n:]
	}
	t.pending = append(t.pending[:0], rest...)
}

// observe reads one event into the record and says whether the client
// gets it.
func (t *streamTap) observe(ev sse.Event, now time.Time) (forward bool) {
	if !ev.HasData {
		return true // keepalive comments and the like pass as they are
	}
	if ev.IsDone() {
		t.rec.SawDone = true
		return true
	}
	t.decoded = completionJSON{}
	if decodeCompletion(ev.Data, &t.decoded) != nil {
		t.rec.live.chunk(ev.Data, t.rec.ResponseID, now)
		return true
	}
	t.rec.applyChunk(&t.decoded, now)
	forward = !(t.strip && t.decoded.isUsageChunk())
	if forward {
		t.rec.live.chunk(ev.Data, t.rec.ResponseID, now)
	}
	return forward
}

// finish ends the stream: whatever is left of an unfinished event goes to
// the client as it is, and the outcome is settled.
func (t *streamTap) finish(err error) {
	t.out = append(t.out, t.pending...)
	t.pending = nil
	t.err = err
	switch {
	case err == io.EOF && t.rec.SawDone:
		t.rec.Outcome = OutcomeComplete
	case t.ctx.Err() != nil:
		t.rec.Outcome = OutcomeClientGone
	default:
		// The engine closed the stream (or died) before [DONE].
		t.rec.Outcome = OutcomeIncomplete
	}
}

func (t *streamTap) Close() error { return t.body.Close() }
