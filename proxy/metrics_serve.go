package proxy

import (
	"crypto/subtle"
	"errors"
	"net"
	"net/http"
	"strings"

	"go.uber.org/zap"
)

// Where the proxy's series are served. /metrics on the proxy's own port is
// the original's (:8080/metrics) and stays unless switched off; a listener
// of its own serves /metrics alone, so that the series can be reachable on
// another interface than the OpenAI API, or only there. A bearer token,
// when configured, is required on both.

// metricsHandler answers scrapes: GET or HEAD, with the token when one is
// set.
func (p *Proxy) metricsHandler() http.Handler {
	token := []byte(p.cfg.MetricsBearerToken)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 {
			// A scrape takes no body: one sent is dropped with the
			// connection, never waited for (admit.go, lastAnswer).
			lastAnswer(w, r)
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if len(token) > 0 && !bearerMatches(r.Header.Get("Authorization"), token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mlx-otelcol metrics"`)
			http.Error(w, "a bearer token is required for /metrics", http.StatusUnauthorized)
			return
		}
		p.scrape.ServeHTTP(w, r)
	})
}

// bearerMatches compares in constant time, so the token cannot be guessed
// byte by byte from response times.
func bearerMatches(header string, token []byte) bool {
	scheme, got, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), token) == 1
}

// ServeMetrics serves /metrics alone on ln until Shutdown: the
// metrics_endpoint listener.
func (p *Proxy) ServeMetrics(ln net.Listener) {
	mux := http.NewServeMux()
	mux.Handle("/metrics", p.metricsHandler())
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: p.cfg.ReadHeaderTimeout,
		IdleTimeout:       p.cfg.IdleTimeout,
		ErrorLog:          debugStdLog(p.log),
	}
	done := make(chan struct{})
	p.mu.Lock()
	p.metricsServer, p.metricsServed = srv, done
	p.mu.Unlock()
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			p.log.Error("Metrics listener stopped serving", zap.Error(err))
		}
	}()
}
