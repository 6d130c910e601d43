package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/openai/openai-go/v3"
)

// Error causes of a request. An HTTP error status is "http_<code>".
const (
	// CauseTimeout: the request's --timeout passed (before or during the
	// answer).
	CauseTimeout = "timeout"
	// CauseBrokenStream: the answer started (200) but did not end
	// properly: cut before "data: [DONE]", an unreadable chunk, an
	// in-band error, or a non-streamed body that does not parse.
	CauseBrokenStream = "broken_stream"
	// CauseConnection: no answer at all: refused, reset, or closed
	// without a status line (mlx_lm does that on validation errors).
	CauseConnection = "connection"
	// CauseCancelled: the run was stopped (Ctrl-C) while the request was
	// in flight. Not an error of the server: never counted in error rates.
	CauseCancelled = "cancelled"
)

// StreamError is a 200 answer that went wrong after its headers.
type StreamError struct{ Reason string }

func (e *StreamError) Error() string { return "broken stream: " + e.Reason }

// Cause classifies the error of one request. runCancelled says the run
// itself was stopped, which wins over whatever the cancellation caused.
func Cause(err error, runCancelled bool) string {
	if err == nil {
		return ""
	}
	if runCancelled {
		return CauseCancelled
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return CauseTimeout
	}
	var ae *openai.Error
	if errors.As(err, &ae) {
		return HTTPCause(ae.StatusCode)
	}
	var se *StreamError
	if errors.As(err, &se) {
		return CauseBrokenStream
	}
	return CauseConnection
}

// HTTPCause is the cause of an error status.
func HTTPCause(status int) string { return "http_" + strconv.Itoa(status) }

// IsError says whether a cause counts as an error of the target.
func IsError(cause string) bool { return cause != "" && cause != CauseCancelled }

// errorDetail is a short text of err for the samples, so a report says
// what a cause was made of without logging whole bodies.
func errorDetail(err error) string {
	if err == nil {
		return ""
	}
	var ae *openai.Error
	if errors.As(err, &ae) {
		msg := ae.Message
		if msg == "" {
			msg = ae.RawJSON()
		}
		return truncate(fmt.Sprintf("%d %s", ae.StatusCode, msg), 160)
	}
	return truncate(err.Error(), 160)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
