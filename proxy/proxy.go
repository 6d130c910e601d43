// Package proxy is the OpenAI-compatible front door to mlx_lm.server: it
// relays every request unchanged (streams event by event), and measures
// each completion on the way: requests, tokens, latencies, tool calls,
// finish reasons, errors, context use. It serves those series on /metrics
// of its own listener. It knows nothing of the collector: the mlx_proxy
// extension wires it in.
package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.uber.org/zap"

	"github.com/mlx-otelcol/mlx-otelcol/internal/ringhosts"
)

// Proxy relays requests to the engine and records completions.
type Proxy struct {
	cfg       Config
	log       *zap.Logger
	upstream  *url.URL
	transport *http.Transport
	relay     *httputil.ReverseProxy
	metrics   *Metrics
	recorders []Recorder
	scorer    *scorer
	tracer    *tracer
	allow     allowlist
	callers   *callers
	models    *modelsCache
	access    *outbox[*AccessRecord]
	live      *live
	// active counts completion requests between begin and the end of
	// their recorders (tests wait for it to drop to 0).
	active atomic.Int64
	// engineActivity is when the engine last sent stream bytes through the
	// proxy (Unix nanoseconds).
	engineActivity atomic.Int64
	// engineAnswered is when the engine last gave a whole 2xx answer to a
	// completion request (Unix nanoseconds).
	engineAnswered atomic.Int64
	// admitted counts completion requests from arrival (before their body
	// is read) to the end, against MaxConcurrentRequests.
	admitted atomic.Int64
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
}

// New builds a proxy. It does not listen yet: see Serve.
func New(cfg Config, log *zap.Logger) (*Proxy, error) {
	u, err := url.Parse(cfg.Upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("upstream %q is not an http(s) URL", cfg.Upstream)
	}
	if log == nil {
		log = zap.NewNop()
	}
	p := &Proxy{cfg: cfg, log: log, upstream: u, metrics: newMetrics(cfg), allow: newAllowlist(cfg),
		callers: newCallers(cfg.Access), models: newModelsCache(cfg.ModelsCacheTTL)}
	p.tracer = newTracer(cfg.Traces, u.Host,
		newOutbox[sdktrace.ReadOnlySpan]("spans", cfg.Traces.QueueSize, countAll(p.metrics.spansDropped), log))
	p.access = newOutbox[*AccessRecord]("access log", cfg.AccessLogQueue, countAll(p.metrics.accessDropped), log)
	if cfg.Live.Topology == "" && cfg.Live.RingHostfile != "" {
		hf, err := ringhosts.Read(cfg.Live.RingHostfile)
		if err != nil {
			return nil, fmt.Errorf("live: ring_hostfile: %w", err)
		}
		cfg.Live.Topology = hf.Topology()
	}
	liveWarn := &everyMinute{}
	p.live = newLive(cfg.Live, cfg.modelLabel(), cfg.Traces.outputsShown(), newOutbox[*LiveRecord]("live stream", cfg.Live.QueueSize,
		func(reason string, n int) {
			p.metrics.liveDropped.WithLabelValues(reason).Add(float64(n))
			if liveWarn.due() {
				log.Warn("Live stream records dropped (counted in mlx_live_records_dropped_total)", zap.String("reason", reason))
			}
		}, log))
	p.scorer = newScorer(cfg, newQualityMetrics(p.metrics.Registry, cfg.modelLabel()), p.metrics.models, log)
	p.scorer.onPanic, p.tracer.onPanic, p.live.onPanic = p.reporter(), p.reporter(), p.reporter()
	p.recorders = []Recorder{p.metrics, p.scorer}
	// With metrics_open_metrics, OpenMetrics when the scraper asks for it
	// (Prometheus does), so the units reach it; the classic text format
	// otherwise (VictoriaMetrics asks for it).
	p.scrape = promhttp.HandlerFor(p.metrics.Registry, promhttp.HandlerOpts{EnableOpenMetrics: cfg.MetricsOpenMetrics})
	p.metricsOnPort = p.metricsHandler()
	p.transport = &http.Transport{
		// The engine is on this machine: never through an HTTP proxy.
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          512,
		MaxIdleConnsPerHost:   512,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: cfg.UpstreamResponseHeaderTimeout,
		// Accept-Encoding passes through as the client sent it, and the
		// answer comes back as the engine encoded it.
		DisableCompression: true,
	}
	p.relay = &httputil.ReverseProxy{
		Rewrite:        p.rewrite,
		Transport:      p.transport,
		FlushInterval:  -1, // every write reaches the client at once
		ModifyResponse: p.onResponse,
		ErrorHandler:   p.onUpstreamError,
		ErrorLog:       debugStdLog(log),
		// Without a pool the relay allocates a 32 KiB copy buffer for
		// every response: the largest allocation per request in the
		// profile of the proxy under load.
		BufferPool: relayBuffers{},
	}
	p.loadModelFacts()
	return p, nil
}

// ServeHTTP serves /metrics, and the API as the steps a request meets in
// order: who calls (origin, key, host), how many are in progress, what
// route, then for a completion the body read, parsed and checked, the plan
// of what the proxy asks the engine, and the relay.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.serveMetrics(w, r) {
		return
	}
	defer p.recoverHandler()
	hook(panicHandler)
	start := time.Now()
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
	if !p.admitRequest(w, rec) {
		return
	}
	defer p.admitted.Add(-1)
	if rec == nil {
		p.serveRead(w, r)
		return
	}
	rec.Client = who.client
	body, ok := p.readCompletion(w, r, rec)
	if !ok {
		return
	}
	pb, ok := p.checkCompletion(w, rec, body)
	if !ok {
		return
	}
	p.relayCompletion(w, r, rec, defaultedModel(body, pb), pb.fields, start)
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
	rec := &Record{Route: route, Path: r.URL.Path, Start: start, Model: p.cfg.modelLabel(), Kind: KindChat}
	if p.tracer.on() {
		rec.parent, rec.traced = parentOf(r)
	}
	return rec
}

// logAccess wraps w so that the request's access record is offered when
// the returned function runs.
func (p *Proxy) logAccess(w http.ResponseWriter, r *http.Request, rec *Record, who *caller, start time.Time) (http.ResponseWriter, func()) {
	acc := newAccessRecord(r, start)
	sw := &statusWriter{ResponseWriter: w}
	return sw, func() {
		acc.End, acc.Status = time.Now(), sw.status
		acc.Client = who.client
		if rec != nil {
			if rec.Status != 0 {
				acc.Status = rec.Status
			}
			if rec.spanCtx.IsValid() {
				acc.TraceID, acc.SpanID = rec.spanCtx.TraceID(), rec.spanCtx.SpanID()
			}
		}
		p.access.offer(acc)
	}
}

// admitCaller answers a preflight, and refuses a caller the access
// settings do not let in (caller.go).
func (p *Proxy) admitCaller(w http.ResponseWriter, r *http.Request, rec *Record) (caller, bool) {
	if d := p.callers.checkOrigin(r); d != nil {
		p.deny(w, r, rec, d)
		return caller{}, false
	}
	if r.Method == http.MethodOptions {
		p.callers.preflight(w, r)
		return caller{}, false
	}
	who, d := p.callers.admit(r)
	if d != nil {
		p.deny(w, r, rec, d)
		return caller{}, false
	}
	return who, true
}

func (p *Proxy) deny(w http.ResponseWriter, r *http.Request, rec *Record, d *denial) {
	d.write(w)
	if rec != nil {
		p.refuse(rec, d.status)
		return
	}
	p.metrics.refusedOther(d.status)
}

// admitRequest counts the request against MaxConcurrentRequests, from
// before its body is read, so clients still sending bodies count too and
// a full proxy spends nothing on a refused one. Past the cap: 429.
func (p *Proxy) admitRequest(w http.ResponseWriter, rec *Record) bool {
	n := p.admitted.Add(1)
	if limit := p.cfg.MaxConcurrentRequests; limit > 0 && n > int64(limit) {
		p.admitted.Add(-1)
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusTooManyRequests, "rate_limit_exceeded", "too_many_requests",
			fmt.Sprintf("the server has %d requests in progress, its limit; retry shortly", limit))
		if rec != nil {
			p.refuse(rec, http.StatusTooManyRequests)
		} else {
			p.metrics.refusedOther(http.StatusTooManyRequests)
		}
		return false
	}
	return true
}

// serveRead relays the engine's read-only routes and answers every other
// path itself (readonly.go).
func (p *Proxy) serveRead(w http.ResponseWriter, r *http.Request) {
	models, ok := readRoute(r)
	switch {
	case models:
		p.serveModels(w, r)
	case ok:
		out := r.Clone(r.Context())
		out.Body, out.ContentLength = http.NoBody, 0
		p.relay.ServeHTTP(w, out)
	case routeKnown(r.URL.Path):
		w.Header().Set("Allow", allowedMethods(r.URL.Path))
		writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "method_not_allowed",
			fmt.Sprintf("%s is not allowed on %s", r.Method, r.URL.Path))
		p.metrics.refusedOther(http.StatusMethodNotAllowed)
	default:
		writeError(w, http.StatusNotFound, "invalid_request_error", "not_found",
			"Unknown path: this server answers /v1/chat/completions, /chat/completions, /v1/completions, /v1/models and /health")
		p.metrics.refusedOther(http.StatusNotFound)
	}
}

// readCompletion checks the Content-Type and reads the body (413, 408,
// 400, 415 otherwise).
func (p *Proxy) readCompletion(w http.ResponseWriter, r *http.Request, rec *Record) ([]byte, bool) {
	if !isJSONContent(r.Header.Get("Content-Type")) {
		// A page's form or text/plain POST needs no CORS preflight; this
		// makes every browser call to a completion route ask first.
		writeError(w, http.StatusUnsupportedMediaType, "invalid_request_error", "unsupported_media_type",
			"the request body must be sent with Content-Type: application/json")
		p.refuse(rec, http.StatusUnsupportedMediaType)
		return nil, false
	}
	body, err := p.readBody(w, r)
	if err == nil {
		return body, true
	}
	var tooLarge *http.MaxBytesError
	var netErr net.Error
	slow := errors.As(err, &netErr) && netErr.Timeout()
	// A body cut short is a client that went away; any other read error
	// is a body that cannot be framed (a malformed chunk), answered
	// with 400 rather than nothing, which net/http would send as an
	// empty 200.
	gone := errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, net.ErrClosed)
	malformed := !slow && !gone && !errors.As(err, &tooLarge)
	switch {
	case errors.As(err, &tooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "request_too_large",
			fmt.Sprintf("request body is larger than %d bytes", p.cfg.MaxRequestBodyBytes))
		p.begin(rec)
		rec.Outcome, rec.Status = OutcomeTooLarge, http.StatusRequestEntityTooLarge
		p.end(rec)
	case slow:
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusRequestTimeout, "invalid_request_error", "request_timeout",
			fmt.Sprintf("the request body did not arrive within %s", p.cfg.BodyReadTimeout))
		p.refuse(rec, http.StatusRequestTimeout)
	case malformed:
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusBadRequest, "invalid_request_error", "malformed_body",
			"the request body could not be read: "+err.Error())
		p.refuse(rec, http.StatusBadRequest)
	default:
		// Most often nobody reads this; a client that only half-closed
		// its side gets an answer instead of an empty 200.
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusBadRequest, "invalid_request_error", "incomplete_body",
			"the request body ended before its declared length")
		p.begin(rec)
		rec.Outcome = OutcomeClientGone
		p.end(rec)
	}
	return nil, false
}

// checkCompletion parses the body as mlx_lm will (parse.go), fills rec
// from it, and refuses what must not reach the engine (allow.go).
func (p *Proxy) checkCompletion(w http.ResponseWriter, rec *Record, body []byte) (parsedBody, bool) {
	pb, err := parseBody(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_json", err.Error())
		p.refuse(rec, http.StatusBadRequest)
		return parsedBody{}, false
	}
	p.parseRequest(rec, pb.fields)
	if ref, refused := p.allow.check(pb); refused {
		ref.write(w)
		p.refuse(rec, ref.status)
		return parsedBody{}, false
	}
	return pb, true
}

// relayCompletion plans what the proxy asks the engine for (logprobs,
// usage), then relays the request and accounts for it.
func (p *Proxy) relayCompletion(w http.ResponseWriter, r *http.Request, rec *Record, body []byte, fields map[string]json.RawMessage, start time.Time) {
	if rec.traced {
		rec.request = requestBody{raw: body, fields: fields}
	}
	if p.live.on() {
		rec.live = p.live.begin(r, fields, start, optedOut(r))
	}
	body = p.planLogprobs(rec, body)
	if rec.Streaming && !rec.Destreamed {
		// planLogprobs leaves a stream it does not destream as it is:
		// fields still describe this body.
		body, rec.UsageInjected = withUsageRequested(body, fields["stream_options"])
	}
	p.begin(rec)
	defer p.end(rec) // also when the relay aborts the response

	// The engine's request ends with the client's, or before it when the
	// engine stalls (stall.go).
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	rec.cancelUpstream = cancel
	if d := p.cfg.ClientWriteTimeout; d > 0 {
		w = newDeadlineWriter(w, d, rec)
	}
	out := r.WithContext(context.WithValue(ctx, recordKey{}, rec))
	// The whole body goes upstream with a Content-Length, as mlx_lm
	// answers 411 without one (a chunked client request included).
	out.ContentLength = int64(len(body))
	out.TransferEncoding = nil
	out.Body = io.NopCloser(bytes.NewReader(body))
	p.relay.ServeHTTP(w, out)
}

// isJSONContent: the media type is application/json (parameters such as
// charset allowed).
func isJSONContent(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// refuse records a completion the proxy answered itself (status already
// written): counted as a request and an error, and in
// mlx_http_refusals_total.
func (p *Proxy) refuse(rec *Record, status int) {
	rec.Outcome, rec.Status = OutcomeRefused, status
	p.metrics.refused(rec.Route, status)
	p.begin(rec)
	p.end(rec)
}

// initialBodyBuffer is what a body buffer starts at whatever the client
// declares: memory follows the bytes that arrived, so slow clients
// declaring large bodies pin nothing they have not sent.
const initialBodyBuffer = 64 << 10

// readBody reads the whole request body, at most MaxRequestBodyBytes,
// within BodyReadTimeout.
func (p *Proxy) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	limit := p.cfg.MaxRequestBodyBytes
	if r.ContentLength > limit {
		return nil, &http.MaxBytesError{Limit: limit}
	}
	if r.ContentLength == 0 {
		return nil, nil
	}
	if d := p.cfg.BodyReadTimeout; d > 0 {
		rc := http.NewResponseController(w)
		if rc.SetReadDeadline(time.Now().Add(d)) == nil {
			defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
		}
	}
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(min(r.ContentLength, initialBodyBuffer)))
	}
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, limit))
	return buf.Bytes(), err
}

type recordKey struct{}

func recordOf(ctx context.Context) *Record {
	rec, _ := ctx.Value(recordKey{}).(*Record)
	return rec
}

// rewrite sends the request to the engine. Headers pass as the client
// sent them, Authorization included when the proxy has no API keys (it
// never logs or labels it) and left out when it has; hop-by-hop headers
// are dropped, as any HTTP proxy must.
func (p *Proxy) rewrite(pr *httputil.ProxyRequest) {
	pr.SetURL(p.upstream)
	if len(p.callers.keys) > 0 {
		pr.Out.Header.Del("Authorization") // the proxy's own credential
	}
	rec := recordOf(pr.In.Context())
	if rec != nil {
		rec.Sent = time.Now()
	}
	if rec != nil && rec.rewritesAnswer() {
		// The proxy reads and rewrites this answer: it must come plain
		// (mlx_lm never compresses; other engines might).
		pr.Out.Header.Del("Accept-Encoding")
	}
	// ReverseProxy drops forwarding headers in Rewrite mode; keep the
	// client's, and add none of ours.
	for _, h := range []string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"} {
		if v, ok := pr.In.Header[h]; ok {
			pr.Out.Header[h] = v
		}
	}
}

// onResponse sees the engine's response headers and puts a tap on 2xx
// completion bodies.
func (p *Proxy) onResponse(res *http.Response) error {
	p.setUp(true)
	stripCORS(res.Header) // the proxy answers CORS itself (caller.go)
	ctx := res.Request.Context()
	rec := recordOf(ctx)
	if rec == nil {
		return nil
	}
	rec.Headers = time.Now()
	rec.Status = res.StatusCode
	if res.StatusCode < 200 || res.StatusCode > 299 || encoded(res) {
		// Errors pass through untouched; an encoded body cannot be read.
		rec.Outcome = OutcomeComplete
		return nil
	}
	if rec.rewritesAnswer() && !isEventStream(res) {
		return p.rewriteAnswer(res, rec)
	}
	if isEventStream(res) {
		if rec.UsageInjected {
			// The client's stream will be shorter than the engine's.
			res.Header.Del("Content-Length")
			res.ContentLength = -1
		}
		tap := newStreamTap(ctx, res.Body, rec, rec.UsageInjected)
		tap.watchStalls(p.cfg.StreamStallTimeout, rec.cancelUpstream)
		tap.activity = &p.engineActivity
		res.Body = tap
		return nil
	}
	res.Body = newBodyTap(ctx, res.Body, rec)
	return nil
}

func isEventStream(res *http.Response) bool {
	ct := res.Header.Get("Content-Type")
	return len(ct) >= 17 && ct[:17] == "text/event-stream"
}

func encoded(res *http.Response) bool {
	ce := res.Header.Get("Content-Encoding")
	return ce != "" && ce != "identity"
}

// onUpstreamError answers when the engine gave no response: 503 when it
// cannot be reached, 504 when its headers did not come in time, 502 when it
// took the request and closed the connection (mlx_lm does that on a
// validation error it does not catch).
func (p *Proxy) onUpstreamError(w http.ResponseWriter, r *http.Request, err error) {
	rec := recordOf(r.Context())
	if r.Context().Err() != nil {
		if rec != nil {
			rec.Outcome = OutcomeClientGone
		}
		return
	}
	var (
		status  int
		outcome Outcome
		code    string
		msg     string
	)
	var opErr *net.OpError
	var netErr net.Error
	var restream *restreamError
	switch {
	case errors.As(err, &restream):
		// The engine answered, but the proxy cannot give the client the
		// stream it asked for: say so, loudly.
		p.log.Warn("Destreamed answer cannot be re-streamed", zap.String("path", r.URL.Path), zap.Error(err))
		status, outcome, code, msg = http.StatusBadGateway, OutcomeBadGateway, "restream_failed", "mlx upstream answer could not be re-streamed: "+restream.err.Error()
	case errors.As(err, &opErr) && opErr.Op == "dial":
		p.setUp(false)
		status, outcome, code, msg = http.StatusServiceUnavailable, OutcomeUnavailable, "upstream_unavailable", "mlx upstream unavailable"
	case errors.As(err, &netErr) && netErr.Timeout():
		status, outcome, code, msg = http.StatusGatewayTimeout, OutcomeTimeout, "upstream_timeout", "mlx upstream did not answer in time"
	default:
		status, outcome, code, msg = http.StatusBadGateway, OutcomeBadGateway, "upstream_error", "mlx upstream closed the connection without a response"
	}
	p.log.Debug("Upstream request failed", zap.String("path", r.URL.Path), zap.Int("status", status), zap.Error(err))
	writeError(w, status, "server_error", code, msg)
	if rec != nil {
		rec.Status, rec.Outcome = status, outcome
	}
}

// LastEngineActivity is when the engine last sent stream bytes (tokens,
// keepalive comments) through the proxy; zero if never. The supervisor
// takes it as proof that a busy engine is alive while its probe waits.
func (p *Proxy) LastEngineActivity() time.Time {
	if n := p.engineActivity.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// LastEngineAnswer is when the engine last gave a whole successful answer
// to a completion request through the proxy; zero if never. A user's answer
// proves the engine ready as well as the supervisor's completion probe
// does, so the supervisor probes only when there has been none for a while.
func (p *Proxy) LastEngineAnswer() time.Time {
	if n := p.engineAnswered.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// InFlight is how many completion requests are in progress, all models
// together (the judge loop backs off on it).
func (p *Proxy) InFlight() int64 { return p.active.Load() }

func (p *Proxy) begin(rec *Record) {
	p.active.Add(1)
	for _, r := range p.recorders {
		r.Begin(rec)
	}
}

func (p *Proxy) end(rec *Record) {
	rec.End = time.Now()
	if rec.Outcome == OutcomeComplete && rec.Status >= 200 && rec.Status < 300 {
		p.engineAnswered.Store(rec.End.UnixNano())
	}
	if rec.Outcome == OutcomePending {
		// The relay stopped without reaching the end of the answer and
		// without an upstream error: writing to the client failed.
		rec.Outcome = OutcomeClientGone
	}
	if rec.traced {
		// Started here, finished by the scorer's worker (it takes it).
		if rec.span = p.tracer.start(rec); rec.span != nil {
			rec.spanCtx = rec.span.span.SpanContext()
		}
	}
	for _, r := range p.recorders {
		r.End(rec)
	}
	if rec.live != nil {
		rec.live.end(rec)
	}
	p.active.Add(-1)
}
