package proxy

import (
	"net/http"
	"sync/atomic"

	"go.uber.org/zap"
)

// Panics. A bug in one request, one scoring job or one probe must not take
// the collector down (a panic in a goroutine the proxy started would), nor
// pass unseen (net/http swallows a handler's panic into its error log, at
// debug level here). Each recovered panic is logged at error level with
// its stack and counted in mlx_proxy_panics_total{where}; the thing that
// panicked is lost (the request's connection, the job, the probe) and the
// proxy goes on.

// The places a panic is recovered (the where label; metadata.yaml's
// enum, labelValuesWhere).
const (
	panicHandler    = "handler"
	panicScorer     = "scorer"
	panicSpan       = "span"
	panicProbe      = "probe"
	panicLiveStatus = "live_status"
)

// panicHook, when set (tests only), is called at each place a panic is
// recovered, so a test can make it panic there. Atomic: the workers of an
// earlier test's proxy may still read it while a test sets it.
var panicHook atomic.Pointer[func(where string)]

func hook(where string) {
	if h := panicHook.Load(); h != nil {
		(*h)(where)
	}
}

// panicReporter records a recovered panic; the proxy gives one to each
// of its workers (nil: not recorded, as in unit tests of a worker alone).
type panicReporter func(where string, r any)

func (f panicReporter) report(where string, r any) {
	if f != nil {
		f(where, r)
	}
}

// reporter is the proxy's panicReporter.
func (p *Proxy) reporter() panicReporter {
	return func(where string, r any) { p.metrics.recovered(p.log, where, r) }
}

const recoveredMessage = "Recovered a panic; the proxy goes on"

// recovered logs and counts a recovered panic.
func (m *Metrics) recovered(log *zap.Logger, where string, r any) {
	m.mlxProxyPanicsTotal.WithLabelValues(where).Inc()
	if log != nil {
		log.Error(recoveredMessage, zap.String("where", where), zap.Any("panic", r), zap.Stack("stack"))
	}
}

// recoverHandler ends a request whose handler panicked: counted, logged,
// and its connection aborted (net/http's own way to drop a response
// half-written). ReverseProxy's deliberate abort passes as it is.
func (p *Proxy) recoverHandler() {
	r := recover()
	if r == nil {
		return
	}
	if r != http.ErrAbortHandler {
		p.metrics.recovered(p.log, panicHandler, r)
	}
	panic(http.ErrAbortHandler)
}
