package proxy

import (
	"net"
	"net/http"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// AccessRecord is one request the proxy answered: the original's
// mlx.proxy.http access log line, with the request's span when it has one.
// It never carries a body, a header value or a query string.
type AccessRecord struct {
	Start, End    time.Time
	Method, Path  string
	Proto         string // "HTTP/1.1"
	Status        int    // 0: no response was sent
	ClientAddress string
	UserAgent     string
	// TraceID and SpanID are the request's span (zero when untraced).
	TraceID trace.TraceID
	SpanID  trace.SpanID
}

// AccessLogger is the logger name (instrumentation scope) of the access
// log, the original's.
const AccessLogger = "mlx.proxy.http"

// Line is the record as the original logged it: "request: " and Python's
// http.server log line without its time, e.g.
//
//	request: 127.0.0.1 - "POST /v1/chat/completions HTTP/1.1" 200 -
func (a *AccessRecord) Line() string {
	status := "-"
	if a.Status != 0 {
		status = strconv.Itoa(a.Status)
	}
	return "request: " + a.ClientAddress + ` - "` + a.Method + " " + a.Path + " " + a.Proto + `" ` + status + " -"
}

func newAccessRecord(r *http.Request, start time.Time) *AccessRecord {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return &AccessRecord{Start: start, Method: r.Method, Path: r.URL.Path, Proto: r.Proto,
		ClientAddress: host, UserAgent: r.UserAgent()}
}

// statusWriter remembers the status the relay sent, for the access log of
// requests that are not completions (those have it in their record).
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController flush through the wrapper.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
