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
//     ClientWriteTimeout; a write that cannot finish in time (the client's
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

// deadlineWriter gives every write to the client a deadline.
type deadlineWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	rec     *Record
}

func newDeadlineWriter(w http.ResponseWriter, timeout time.Duration, rec *Record) *deadlineWriter {
	return &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: timeout, rec: rec}
}

func (w *deadlineWriter) Write(b []byte) (int, error) {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.timeout))
	n, err := w.ResponseWriter.Write(b)
	w.noteStall(err)
	return n, err
}

// Flush flushes with the same deadline: a flush is where a stream's bytes
// reach the socket.
func (w *deadlineWriter) Flush() {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.timeout))
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
