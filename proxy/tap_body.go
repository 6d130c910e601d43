package proxy

import (
	"context"
	"io"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/wire"
)

// bodyTap relays a non-streamed answer as it arrives and keeps a copy (up
// to maxParsedBody) to read the usage, finish reasons, tool calls, text and
// logprobs from once it is complete.
type bodyTap struct {
	body     io.ReadCloser
	rec      *Record
	ctx      context.Context
	buf      []byte
	overflow bool
	done     bool
}

// maxParsedBody bounds the copy of a non-streamed answer: larger answers
// are relayed but not read.
const maxParsedBody = 16 << 20

func newBodyTap(ctx context.Context, body io.ReadCloser, rec *Record) *bodyTap {
	return &bodyTap{body: body, rec: rec, ctx: ctx}
}

func (t *bodyTap) Read(p []byte) (int, error) {
	n, err := t.body.Read(p)
	if n > 0 && !t.overflow && !t.rec.responseRead {
		if len(t.buf)+n > maxParsedBody {
			t.overflow, t.buf = true, nil
		} else {
			t.buf = append(t.buf, p[:n]...)
		}
	}
	if err != nil && !t.done {
		t.done = true
		t.finish(err)
	}
	return n, err
}

func (t *bodyTap) finish(err error) {
	switch {
	case err == io.EOF:
		t.rec.Outcome = OutcomeComplete
		if !t.overflow && !t.rec.responseRead {
			var c wire.Completion
			if wire.Decode(t.buf, &c) == nil {
				t.rec.applyResponse(&c)
			}
		}
	case t.ctx.Err() != nil:
		t.rec.Outcome = OutcomeClientGone
	default:
		t.rec.Outcome = OutcomeIncomplete
	}
	t.buf = nil
}

func (t *bodyTap) Close() error { return t.body.Close() }
