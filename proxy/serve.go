package proxy

import (
	"context"
	"crypto/tls"
	"errors"
	stdlog "log"
	"net"
	"net/http"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Serve answers on ln until Shutdown, and starts probing the engine.
func (p *Proxy) Serve(ln net.Listener) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.server = &http.Server{
		Handler:           p,
		ReadHeaderTimeout: p.cfg.ReadHeaderTimeout,
		IdleTimeout:       p.cfg.IdleTimeout,
		MaxHeaderBytes:    p.cfg.MaxHeaderBytes,
		ErrorLog:          debugStdLog(p.log),
	}
	limited := limitConnections(ln, p.cfg.MaxConnections, p.cfg.MaxConnectionsPerClient, func(reason string) {
		p.metrics.mlxProxyConnectionsRefusedTotal.WithLabelValues(reason).Inc()
	})
	p.server.ConnState = limited.connState
	ln = limited
	if p.cfg.TLS != nil {
		// Outermost: net/http sees *tls.Conn (r.TLS), and the limits
		// count connections before any handshake. HTTP/1.1 only: the
		// config offers no h2 in ALPN.
		ln = tls.NewListener(ln, p.cfg.TLS)
	}
	p.logAccessPolicy(ln.Addr())
	p.served = make(chan struct{})
	go func(srv *http.Server, done chan struct{}) {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			p.log.Error("Proxy stopped serving", zap.Error(err))
		}
	}(p.server, p.served)

	p.scorer.start()
	p.tracer.startWorker()
	p.access.start()
	p.feedback.outbox.start()
	p.live.outbox.start()
	p.live.startStatus()
	ctx, cancel := context.WithCancel(context.Background())
	p.stopProbe = cancel
	p.probeDone = make(chan struct{})
	go p.probeLoop(ctx, p.probeDone)
}

// Shutdown stops accepting requests and lets those in progress finish for
// up to ShutdownTimeout (or until ctx is done), then cuts them. It is safe
// to call without Serve, and more than once.
func (p *Proxy) Shutdown(ctx context.Context) error {
	p.mu.Lock()
	srv, served, stop, probed := p.server, p.served, p.stopProbe, p.probeDone
	msrv, mserved := p.metricsServer, p.metricsServed
	p.server, p.stopProbe, p.metricsServer = nil, nil, nil
	p.mu.Unlock()

	if msrv != nil {
		_ = msrv.Close() // a scrape is short; nothing to drain
		<-mserved
	}

	if stop != nil {
		stop()
		<-probed
	}
	var err error
	if srv != nil {
		if p.cfg.ShutdownTimeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, p.cfg.ShutdownTimeout)
			defer cancel()
		}
		if srv.Shutdown(ctx) != nil {
			// Streams still running: cut them (their upstream requests are
			// cancelled with them).
			err = srv.Close()
		}
		<-served
	}
	// Score what is queued, then stop; a request cut by Close that ends
	// after this is counted as not scored.
	p.scorer.stop()
	p.tracer.stopWorker()
	// Hand what is buffered to the pipelines that are still attached.
	flushCtx, cancel := context.WithTimeout(context.Background(), telemetryFlushTimeout)
	defer cancel()
	p.live.stopStatusLoop()
	p.tracer.outbox.shutdown(flushCtx)
	p.access.shutdown(flushCtx)
	p.feedback.outbox.shutdown(flushCtx)
	p.live.outbox.shutdown(flushCtx)
	p.transport.CloseIdleConnections()
	if p.router != nil {
		for _, e := range p.router.engines {
			e.transport.CloseIdleConnections()
		}
	}
	return err
}

// telemetryFlushTimeout bounds the hand-over of buffered spans and access
// records at shutdown.
const telemetryFlushTimeout = 2 * time.Second

// SpanSink takes the proxy's ended spans, in batches, from one goroutine.
// A sink that returns an error or blocks loses spans (counted in
// mlx_spans_dropped_total), never a request.
type SpanSink func(ctx context.Context, spans []*Span) error

// AccessLogSink takes the proxy's access log records, likewise.
type AccessLogSink func(ctx context.Context, records []*AccessRecord) error

// AttachSpans makes sink the consumer of the proxy's spans: from now on
// completion requests are traced (unless they send X-Mlx-Trace: 0). The
// returned function detaches it: it hands sink what is buffered (within
// its ctx) and returns once sink is not called any more. Without a sink
// nothing is traced.
func (p *Proxy) AttachSpans(sink SpanSink) (detach func(context.Context)) {
	return p.tracer.outbox.attach(sink)
}

// LiveSink takes the proxy's live stream records, likewise.
type LiveSink func(ctx context.Context, records []*LiveRecord) error

// AttachLive makes sink the consumer of the live stream: from now on
// completion requests make live records, and status records go out.
func (p *Proxy) AttachLive(sink LiveSink) (detach func(context.Context)) {
	detach = p.live.outbox.attach(sink)
	p.live.sayModel.Do(func() {
		say := p.log.Info
		if p.live.modelFallback {
			say = p.log.Warn
		}
		say("Live stream model.id", zap.String("model.id", p.live.modelID), zap.String("why", p.live.modelWhy))
	})
	p.live.status() // the receiver shows model and topology at once
	return detach
}

// CountLiveDrops counts n live records lost after the proxy handed them
// over (a POST that failed), in mlx_live_records_dropped_total{reason}.
func (p *Proxy) CountLiveDrops(reason string, n int) {
	p.metrics.mlxLiveRecordsDroppedTotal.WithLabelValues(reason).Add(float64(n))
}

// AttachAccessLog makes sink the consumer of the access log, likewise.
func (p *Proxy) AttachAccessLog(sink AccessLogSink) (detach func(context.Context)) {
	return p.access.attach(sink)
}

// debugStdLog routes net/http's own messages (a client that sent garbage, a
// relay read error) to the logger at debug level: they are per-request
// noise, and never carry bodies or headers.
func debugStdLog(log *zap.Logger) *stdlog.Logger {
	l, err := zap.NewStdLogAt(log, zapcore.DebugLevel)
	if err != nil {
		return zap.NewStdLog(log)
	}
	return l
}
