package proxy

import (
	"net"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

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
	// Client is the caller's client label (its API key's name, "local" or
	// "anonymous"; "" when it was refused before it was known).
	Client string
	// Upstream and UpstreamNode are the engine that served the request and
	// its node, with several (upstreams); "" otherwise.
	Upstream, UpstreamNode string
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

// Bounds of what a client puts in its access record: a record is written
// for every request, refused ones included, and its queue and the sinks'
// persistent queues count records, not bytes.
const (
	maxAccessPath      = 2048
	maxAccessUserAgent = 256
	maxAccessMethod    = 16
)

func newAccessRecord(r *http.Request, start time.Time) *AccessRecord {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return &AccessRecord{Start: start, Method: cut(r.Method, maxAccessMethod), Path: cut(r.URL.Path, maxAccessPath), Proto: r.Proto,
		ClientAddress: host, UserAgent: cut(r.UserAgent(), maxAccessUserAgent)}
}

// cut bounds s to n bytes, on a rune boundary, marking the cut with "…".
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
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
