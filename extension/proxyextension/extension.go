package proxyextension

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.uber.org/zap"

	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet"
	"github.com/mlx-otelcol/mlx-otelcol/proxy"
)

type proxyExtension struct {
	cfg     *Config
	logger  *zap.Logger
	version string // the collector's (component.BuildInfo)

	mu    sync.Mutex
	proxy *proxy.Proxy
	agent *fleet.Agent
	addr  net.Addr
	https bool
}

// Start listens on the endpoint: an address in use fails the collector's
// start with a clear message rather than a proxy that is silently absent.
func (e *proxyExtension) Start(ctx context.Context, _ component.Host) error {
	pc, err := e.cfg.proxyConfig()
	if err != nil {
		return err
	}
	if e.cfg.TLS.HasValue() {
		if pc.TLS, err = e.cfg.TLS.Get().LoadTLSConfig(ctx); err != nil {
			return fmt.Errorf("mlx_proxy tls: %w", err)
		}
	}
	for i, u := range e.cfg.Upstreams {
		// An https endpoint gets the client TLS (the system's roots when
		// tls says nothing); an http one none.
		if !strings.HasPrefix(u.Endpoint, "https:") {
			continue
		}
		if pc.Upstreams[i].TLS, err = u.TLS.LoadTLSConfig(ctx); err != nil {
			return fmt.Errorf("mlx_proxy upstreams[%d] (%s) tls: %w", i, u.Name, err)
		}
	}
	p, err := proxy.New(pc, e.logger)
	if err != nil {
		return err
	}
	// The proxy role of the fleet contract: up while it serves.
	agent := fleet.New(fleet.Settings{Role: fleet.RoleProxy, Node: p.Node(), Version: e.version, Model: pc.Model,
		StateDir: e.cfg.Agent.StateDirectory})
	if err := p.RegisterAgent(agent); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", e.cfg.Endpoint)
	if err != nil {
		return fmt.Errorf("mlx_proxy cannot listen on %s: %w", e.cfg.Endpoint, err)
	}
	var mln net.Listener
	if e.cfg.MetricsEndpoint != "" {
		if mln, err = net.Listen("tcp", e.cfg.MetricsEndpoint); err != nil {
			_ = ln.Close()
			return fmt.Errorf("mlx_proxy cannot listen on its metrics_endpoint %s: %w", e.cfg.MetricsEndpoint, err)
		}
	}
	if err := agent.Start(time.Now()); err != nil {
		_ = ln.Close()
		if mln != nil {
			_ = mln.Close()
		}
		return err
	}
	p.Serve(ln)
	agent.SetUp(true)
	if mln != nil {
		p.ServeMetrics(mln)
		e.logger.Info("Proxy metrics listening", zap.String("metrics_endpoint", mln.Addr().String()))
	}
	e.mu.Lock()
	e.proxy, e.agent, e.addr, e.https = p, agent, ln.Addr(), pc.TLS != nil
	e.mu.Unlock()
	e.logger.Info("Proxy listening", zap.String("endpoint", ln.Addr().String()), zap.String("upstream", e.cfg.Upstream))
	return nil
}

// Shutdown lets requests in progress finish (up to timeouts.shutdown),
// then cuts them. Safe without Start.
func (e *proxyExtension) Shutdown(ctx context.Context) error {
	e.mu.Lock()
	p, agent := e.proxy, e.agent
	e.proxy, e.agent = nil, nil
	e.mu.Unlock()
	if p == nil {
		return nil
	}
	agent.SetUp(false)
	err := p.Shutdown(ctx)
	return errors.Join(err, agent.Stop())
}

// AttachSpans hands the proxy's request spans to sink (the mlx_proxy
// receiver's traces pipeline) until the returned function is called. The
// collector starts extensions before pipelines, so the proxy is there.
func (e *proxyExtension) AttachSpans(sink proxy.SpanSink) (detach func(context.Context), err error) {
	p, err := e.running()
	if err != nil {
		return nil, err
	}
	return p.AttachSpans(sink), nil
}

// AttachAccessLog hands the proxy's access log to sink until the returned
// function is called.
func (e *proxyExtension) AttachAccessLog(sink proxy.AccessLogSink) (detach func(context.Context), err error) {
	p, err := e.running()
	if err != nil {
		return nil, err
	}
	return p.AttachAccessLog(sink), nil
}

// AttachLive hands the proxy's live stream records to sink until the
// returned function is called.
func (e *proxyExtension) AttachLive(sink proxy.LiveSink) (detach func(context.Context), err error) {
	p, err := e.running()
	if err != nil {
		return nil, err
	}
	return p.AttachLive(sink), nil
}

// AttachFeedback hands the feedback people give (POST /v1/feedback) to
// sink until the returned function is called.
func (e *proxyExtension) AttachFeedback(sink proxy.FeedbackSink) (detach func(context.Context), err error) {
	p, err := e.running()
	if err != nil {
		return nil, err
	}
	return p.AttachFeedback(sink), nil
}

// CountLiveDrops counts live records an exporter lost (the mlx_live
// exporter's failed POSTs) in the proxy's mlx_live_records_dropped_total.
func (e *proxyExtension) CountLiveDrops(reason string, n int) {
	if p, err := e.running(); err == nil {
		p.CountLiveDrops(reason, n)
	}
}

// UpstreamWait is how long the proxy waits for the engine's answer to
// begin (timeouts.upstream_response_header; 0: no limit).
func (e *proxyExtension) UpstreamWait() time.Duration {
	return e.cfg.UpstreamResponseHeaderTimeout
}

// InFlight is how many completion requests the proxy is serving (0 when
// it is not running).
func (e *proxyExtension) InFlight() int64 {
	if p, err := e.running(); err == nil {
		return p.InFlight()
	}
	return 0
}

// LastEngineActivity is when the engine last sent stream bytes through
// the proxy (zero when it never did, or the proxy is not running).
func (e *proxyExtension) LastEngineActivity() time.Time {
	if p, err := e.running(); err == nil {
		return p.LastEngineActivity()
	}
	return time.Time{}
}

// SetEngineReady takes a supervisor's word on the engine at endpoint: with
// several upstreams, one that is not ready takes no request.
func (e *proxyExtension) SetEngineReady(endpoint string, ready bool) {
	if p, err := e.running(); err == nil {
		p.SetEngineReady(endpoint, ready)
	}
}

// LastEngineAnswer is when the engine last gave a whole successful answer
// through the proxy (zero when it never did, or the proxy is not running).
func (e *proxyExtension) LastEngineAnswer() time.Time {
	if p, err := e.running(); err == nil {
		return p.LastEngineAnswer()
	}
	return time.Time{}
}

// BaseURL is the proxy's OpenAI API base as this host reaches it
// (http://127.0.0.1:8080/v1 when it listens on every address).
func (e *proxyExtension) BaseURL() (string, error) {
	e.mu.Lock()
	addr, https := e.addr, e.https
	e.mu.Unlock()
	if addr == nil {
		return "", errors.New("the mlx_proxy extension is not running")
	}
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "", err
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	scheme := "http://"
	if https {
		scheme = "https://"
	}
	return scheme + net.JoinHostPort(host, port) + "/v1", nil
}

func (e *proxyExtension) running() (*proxy.Proxy, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.proxy == nil {
		return nil, errors.New("the mlx_proxy extension is not running")
	}
	return e.proxy, nil
}

// SetKVCacheUsage takes the mlx_kvcache receiver's latest utilisation for
// vllm:kv_cache_usage_perc (served with compat [vllm]); a no-op when the
// proxy is not running.
func (e *proxyExtension) SetKVCacheUsage(u float64, known bool) {
	if p, err := e.running(); err == nil {
		p.SetKVCacheUsage(u, known)
	}
}
