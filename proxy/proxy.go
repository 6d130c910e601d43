// Package proxy is the OpenAI-compatible front door to mlx_lm.server: it
// relays every request unchanged (streams event by event), and measures
// each completion on the way: requests, tokens, latencies, tool calls,
// finish reasons, errors, context use. It serves those series on /metrics
// of its own listener. It knows nothing of the collector: the mlx_proxy
// extension wires it in.
package proxy

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"

	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet"
	"github.com/mlx-otelcol/mlx-otelcol/internal/ringhosts"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/span"
)

// Proxy relays requests to the engine and records completions.
type Proxy struct {
	cfg       Config
	log       *zap.Logger
	upstream  *url.URL
	transport *http.Transport
	// router chooses among several engines (Config.Upstreams); nil with
	// one.
	router *router
	// engineModels are the model names sent to the engine as
	// default_model (oneModelName).
	engineModels map[string]bool
	relay        *httputil.ReverseProxy
	metrics      *Metrics
	recorders    []Recorder
	scorer       *scorer
	tracer       *tracer
	allow        allowlist
	callers      *callers
	origins      origins
	models       *modelsCache
	access       *outbox[*AccessRecord]
	feedback     *feedback
	live         *live
	// active counts completion requests between begin and the end of
	// their recorders (tests wait for it to drop to 0).
	active atomic.Int64
	// engineActivity is when the engine last sent stream bytes through the
	// proxy (Unix nanoseconds).
	engineActivity atomic.Int64
	// streamLogprobs: whether the engine sends logprobs in stream chunks,
	// as the proxy last saw (stream_logprobs.go).
	streamLogprobs streamLogprobsProbe
	// engineAnswered is when the engine last gave a whole 2xx answer to a
	// completion request (Unix nanoseconds).
	engineAnswered atomic.Int64
	// admitted counts requests from arrival (before their body is read)
	// to the end, against MaxConcurrentRequests; slots counts them per
	// client, against MaxConcurrentRequestsPerClient (admit.go).
	admitted atomic.Int64
	slots    *requestSlots
	scrape   http.Handler
	// metricsOnPort answers /metrics on the proxy's port; metricsServer is
	// the metrics_endpoint listener, when there is one.
	metricsOnPort http.Handler
	metricsServer *http.Server
	metricsServed chan struct{}
	upState       upState

	mu          sync.Mutex
	server      *http.Server
	served      chan struct{}
	stopProbe   context.CancelFunc
	probeDone   chan struct{}
	factsLoaded bool
	factsWarned bool
	// limits are the served model's facts the checks need (params.go,
	// context_check.go), set when its config.json is read.
	limits atomic.Pointer[modelLimits]
	// routedLimits are those of each served model, with several upstreams
	// (loadRoutedFacts); factsWarnedFor says the first not found was told.
	routedLimits   map[string]*atomic.Pointer[modelLimits]
	factsWarnedFor atomic.Bool
}

// modelLimits returns the served model's facts the checks need (zero
// until its config.json is read).
func (p *Proxy) modelLimits() modelLimits {
	if m := p.limits.Load(); m != nil {
		return *m
	}
	return modelLimits{}
}

// Node is the node label of the proxy's series and spans: traces.node,
// else $MLX_NODE_NAME, else the host name (internal/fleet).
func (p *Proxy) Node() string { return fleet.NodeName(p.cfg.Traces.Node) }

// RegisterAgent serves the proxy role's fleet series (mlx_agent_*) with
// the proxy's own on /metrics.
func (p *Proxy) RegisterAgent(a *fleet.Agent) error {
	return p.metrics.Registry.Register(fleet.NewCollector(a))
}

// New builds a proxy. It does not listen yet: see Serve.
func New(cfg Config, log *zap.Logger) (*Proxy, error) {
	if len(cfg.Upstreams) > 0 {
		// The relay's first target; the router sets each request's own.
		cfg.Upstream = cfg.Upstreams[0].Endpoint
	}
	u, err := url.Parse(cfg.Upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("upstream %q is not an http(s) URL", cfg.Upstream)
	}
	if log == nil {
		log = zap.NewNop()
	}
	cfg = cfg.withUpstreamDefaults()
	p := &Proxy{cfg: cfg, engineModels: cfg.engineModels(), log: log, upstream: u, metrics: newMetrics(cfg), allow: newAllowlist(cfg),
		callers: newCallers(cfg.Access), origins: newOrigins(cfg.TrafficOrigins), models: newModelsCache(cfg.ModelsCacheTTL),
		slots: newRequestSlots(cfg.MaxConcurrentRequestsPerClient)}
	p.tracer = newTracer(cfg.Traces, u.Host,
		newOutbox[*Span]("spans", cfg.Traces.QueueSize, countAll(p.metrics.mlxSpansDroppedTotal), log))
	p.access = newOutbox[*AccessRecord]("access log", cfg.AccessLogQueue, countAll(p.metrics.mlxAccessLogDroppedTotal), log)
	p.feedback = &feedback{cfg: cfg.Feedback, index: newFeedbackIndex(cfg.Feedback.MaxTraces),
		outbox:  newOutbox[*FeedbackRecord]("feedback", cfg.Feedback.QueueSize, countAll(p.metrics.mlxUserFeedbackDroppedTotal), log),
		counted: p.metrics.mlxUserFeedbackTotal, content: cfg.Traces.CaptureContent}
	if cfg.Live.Topology == "" && cfg.Live.RingHostfile != "" {
		hf, err := ringhosts.Read(cfg.Live.RingHostfile)
		if err != nil {
			return nil, fmt.Errorf("live: ring_hostfile: %w", err)
		}
		cfg.Live.Topology = hf.Topology()
	}
	liveWarn := &everyMinute{}
	liveID, liveWhy, liveFallback := cfg.liveModel()
	p.live = newLive(cfg.Live, liveID, cfg.Traces.outputsShown(), newOutbox[*LiveRecord]("live stream", cfg.Live.QueueSize,
		func(reason string, n int) {
			p.metrics.mlxLiveRecordsDroppedTotal.WithLabelValues(reason).Add(float64(n))
			if liveWarn.due() {
				log.Warn("Live stream records dropped (counted in mlx_live_records_dropped_total)", zap.String("reason", reason))
			}
		}, log))
	p.live.modelWhy, p.live.modelFallback = liveWhy, liveFallback
	p.scorer = newScorer(cfg, newQualityMetrics(p.metrics.Registry, cfg.modelLabel()), p.metrics.models, log)
	p.scorer.onPanic, p.tracer.onPanic, p.live.onPanic = p.reporter(), p.reporter(), p.reporter()
	p.recorders = []Recorder{p.metrics, p.scorer}
	// With metrics_open_metrics, OpenMetrics when the scraper asks for it
	// (Prometheus does), so the units reach it; the classic text format
	// otherwise (VictoriaMetrics asks for it).
	// Every series names its node (internal/fleet): whoever scrapes it,
	// or pushes it on, knows where it came from.
	p.scrape = promhttp.HandlerFor(fleet.WithNode(p.metrics.Registry, p.Node()), promhttp.HandlerOpts{EnableOpenMetrics: cfg.MetricsOpenMetrics})
	p.metricsOnPort = p.metricsHandler()
	newTransport := func(tlsCfg *tls.Config) *http.Transport {
		return &http.Transport{
			// The engine is on this machine or this LAN: never through an
			// HTTP proxy.
			Proxy:                 nil,
			DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSClientConfig:       tlsCfg,
			MaxIdleConns:          512,
			MaxIdleConnsPerHost:   512,
			IdleConnTimeout:       90 * time.Second,
			ResponseHeaderTimeout: cfg.UpstreamResponseHeaderTimeout,
			// Accept-Encoding passes through as the client sent it, and
			// the answer comes back as the engine encoded it.
			DisableCompression: true,
		}
	}
	p.transport = newTransport(nil)
	var relayTransport http.RoundTripper = p.transport
	if len(cfg.Upstreams) > 0 {
		if p.router, err = newRouter(cfg, newTransport, log); err != nil {
			return nil, err
		}
		relayTransport = p.router
		p.router.anyUp = p.setUp
		p.router.metrics = newRoutingMetrics(registrar{p.metrics.Registry}, p.router.engines)
		p.routedLimits = map[string]*atomic.Pointer[modelLimits]{}
		for _, m := range cfg.ServedModels {
			p.routedLimits[m] = &atomic.Pointer[modelLimits]{}
		}
	}
	p.relay = &httputil.ReverseProxy{
		Rewrite:        p.rewrite,
		Transport:      relayTransport,
		FlushInterval:  -1, // every write reaches the client at once
		ModifyResponse: p.onResponse,
		ErrorHandler:   p.onUpstreamError,
		ErrorLog:       debugStdLog(log),
		// Without a pool the relay allocates a 32 KiB copy buffer for
		// every response: the largest allocation per request in the
		// profile of the proxy under load.
		BufferPool: relayBuffers{},
	}
	if p.router != nil {
		p.loadRoutedFacts()
	} else {
		p.loadModelFacts()
	}
	return p, nil
}

// ServeHTTP serves /metrics, and the API as the steps a request meets, in
// order, each in a file of its name: admit (who calls, caller.go; how many
// are in progress), the route (readonly.go for all but completions), read
// (the body), check (parse.go, allow.go), relay (the plan of what the
// proxy asks the engine, logprobs.go; the relay and its taps), and account
// (recorders and the access record), which runs as the request ends.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.serveMetrics(w, r) {
		return
	}
	defer p.recoverHandler()
	hook(panicHandler)
	start := time.Now()
	p.bodyDeadline(w, r, start)
	rec := p.newRecord(r, start)
	var who caller
	if p.access.attached() {
		var done func()
		w, done = p.logAccess(w, r, rec, &who, start)
		defer done()
	}
	p.callers.corsHeaders(w.Header(), r)

	var ok bool
	if who, ok = p.admitCaller(w, r, rec); !ok {
		return
	}
	release, ok := p.admitRequest(w, r, rec, who)
	if !ok {
		return
	}
	defer release()
	if rec == nil {
		if r.URL.Path == FeedbackPath {
			p.serveFeedback(w, r, who)
			return
		}
		p.serveRead(w, r)
		return
	}
	rec.admitted = true
	rec.Client, rec.Origin = who.client, p.origins.of(r, who)
	if rec.ids.trace.IsValid() {
		// Only now: a caller refused before this gets no trace id, as it
		// makes no span (account.go, refuse).
		w.Header().Set(TraceIDHeader, rec.ids.trace.String())
		w.Header().Set(SpanIDHeader, rec.ids.span.String())
	}
	body, ok := p.readCompletion(w, r, rec)
	if !ok {
		return
	}
	pb, ok := p.checkCompletion(w, r, rec, body)
	if !ok {
		return
	}
	upstream, restore := p.oneModelName(body, pb)
	rec.restoreModel = restore
	p.relayCompletion(w, r, rec, body, upstream, pb.fields, start)
}

// serveMetrics answers GET /metrics on the proxy's port, and says whether
// it did.
func (p *Proxy) serveMetrics(w http.ResponseWriter, r *http.Request) bool {
	if r.URL.Path != "/metrics" || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		return false
	}
	if !p.cfg.MetricsOnProxyPort {
		http.NotFound(w, r) // served on metrics_endpoint only
		return true
	}
	p.metricsOnPort.ServeHTTP(w, r)
	return true
}

// newRecord is a completion request's record (nil for every other route),
// with its trace context when spans are made.
func (p *Proxy) newRecord(r *http.Request, start time.Time) *Record {
	route := routeOf(r)
	if route == RouteOther {
		return nil
	}
	rec := &Record{Route: route, Facts: span.Facts{Operation: operationName(route), Path: r.URL.Path, Start: start, Model: p.cfg.modelLabel(),
		Kind: KindChat, Origin: OriginUser, Session: strings.TrimSpace(r.Header.Get(SessionHeader))}}
	if p.tracer.on() {
		rec.parent, rec.traced = parentOf(r)
		if rec.traced {
			rec.parent, rec.ids = assignIDs(rec.parent)
		}
	}
	return rec
}

// LastEngineActivity is when the engine last sent stream bytes (tokens,
// keepalive comments) through the proxy; zero if never. The supervisor
// takes it as proof that a busy engine is alive while its probe waits.
//
// With several engines it is zero: the bytes could be any engine's, and a
// supervisor must not take another's stream for its own engine's life.
func (p *Proxy) LastEngineActivity() time.Time {
	if p.router != nil {
		return time.Time{}
	}
	if n := p.engineActivity.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// LastEngineAnswer is when the engine last gave a whole successful answer
// to a completion request through the proxy; zero if never. A user's answer
// proves the engine ready as well as the supervisor's completion probe
// does, so the supervisor probes only when there has been none for a while.
// With several engines it is zero, as LastEngineActivity: the supervisor
// probes its own engine.
func (p *Proxy) LastEngineAnswer() time.Time {
	if p.router != nil {
		return time.Time{}
	}
	if n := p.engineAnswered.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// InFlight is how many completion requests are in progress, all models
// together (the judge loop backs off on it).
func (p *Proxy) InFlight() int64 { return p.active.Load() }
