package proxy

import (
	"errors"
	"net"
	"net/http"
	"time"
)

// Stalls. An engine that stops mid-stream, or a client that stops
// reading, would otherwise hold a handler, an upstream connection and an
// engine slot for ever.
//
//   - Engine: the stream tap arms a timer of StreamStallTimeout, reset by
//     every byte the engine sends (mlx_lm sends keepalive comments while
//     it prefills, so a healthy long prompt never trips it). When it fires
//     the engine's request is cancelled and the client's stream ends
//     cleanly: an SSE error event (code upstream_stalled), then [DONE].
//   - Client: every write to the client gets a deadline of
//     ClientWriteTimeout (up to an eighth more, deadlineWriter); a write that cannot finish in time (the client's
//     socket buffer stayed full) fails, the relay aborts, and the engine's
//     request is cancelled with it.
//
// Both count in mlx_stream_stalls_total{side}, and the request as an error
// (5xx) or a client gone.

// The sides of a stall (the side label).
const (
	stallEngine = "engine"
	stallClient = "client"
)

// stalledEvent ends a stream the engine stopped sending.
const stalledEvent = `data: {"error": {"message": "the engine sent nothing for too long; the stream was ended", "type": "server_error", "param": null, "code": "upstream_stalled"}}` + "\n\n"

// deadlineWriter gives every write to the client a deadline of between
// timeout and 9/8 of it. Moving a connection's deadline takes a lock and a
// timer change, and a stream writes and flushes every chunk, so the
// deadline is set an eighth past the timeout and moved only once less
// than the timeout is left.
type deadlineWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	rec     *Record
	// renewAt: from then on the deadline set is less than timeout away.
	renewAt time.Time
}

func newDeadlineWriter(w http.ResponseWriter, timeout time.Duration, rec *Record) *deadlineWriter {
	return &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: timeout, rec: rec}
}

// arm makes sure the deadline is at least timeout away.
func (w *deadlineWriter) arm() {
	now := time.Now()
	if now.Before(w.renewAt) {
		return
	}
	slack := w.timeout / 8
	_ = w.rc.SetWriteDeadline(now.Add(w.timeout + slack))
	w.renewAt = now.Add(slack)
}

func (w *deadlineWriter) Write(b []byte) (int, error) {
	w.arm()
	n, err := w.ResponseWriter.Write(b)
	w.noteStall(err)
	return n, err
}

// Flush flushes with the same deadline: a flush is where a stream's bytes
// reach the socket.
func (w *deadlineWriter) Flush() {
	w.arm()
	w.noteStall(w.rc.Flush())
}

func (w *deadlineWriter) noteStall(err error) {
	var ne net.Error
	if err != nil && errors.As(err, &ne) && ne.Timeout() && w.rec.Stalled == "" {
		w.rec.Stalled = stallClient
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
