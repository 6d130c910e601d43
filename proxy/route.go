package proxy

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/upstream"
)

// router sends each completion to one of several engines (Config.Upstreams):
// the choice is proxy/upstream's (affinity, spill-over, ejection); here
// are the engines' connections, their probes, and the one retry a request
// that never reached an engine gets. With one engine (Config.Upstream)
// there is no router and the relay goes where it always went.
type router struct {
	pool    *upstream.Pool
	engines []*engine
	log     *zap.Logger

	// An upstream is up when its last probe answered 200 and no
	// supervisor says its engine is not ready: two verdicts, kept apart
	// so that neither undoes the other.
	mu       sync.Mutex
	probed   []bool
	notReady []bool
	// anyUp hears whether any engine is up (mlx_up, with several).
	anyUp func(bool)
	// created is /v1/models' created: when the router was made, as
	// mlx_lm gives its start.
	created int64
	metrics *routingFamilies
	// affinity: keep conversations on their engine (routing.affinity).
	affinity bool
}

// engine is one upstream: where it is and how the proxy reaches it.
type engine struct {
	cfg       UpstreamConfig
	url       *url.URL
	transport *http.Transport
}

// routeChoice is a request's upstream: its index in the router's engines
// (-1: none), how it was chosen, and whether it was already retried.
type routeChoice struct {
	i       int
	reason  upstream.Reason
	key     string
	retried bool
	ended   bool
}

func newRouter(cfg Config, transport func(*tls.Config) *http.Transport, log *zap.Logger) (*router, error) {
	rt := &router{log: log, created: time.Now().Unix(), affinity: cfg.Routing.Affinity != AffinityNone, probed: make([]bool, len(cfg.Upstreams)), notReady: make([]bool, len(cfg.Upstreams))}
	for i := range rt.probed {
		rt.probed[i] = true // up until a probe says otherwise (upstream.NewPool)
	}
	var ms []upstream.Member
	for _, u := range cfg.Upstreams {
		addr, err := url.Parse(u.Endpoint)
		if err != nil {
			return nil, fmt.Errorf("upstreams: %s: %w", u.Name, err)
		}
		rt.engines = append(rt.engines, &engine{cfg: u, url: addr, transport: transport(u.TLS)})
		ms = append(ms, upstream.Member{Name: u.Name, Models: u.Models, MaxInFlight: u.MaxInFlight})
	}
	rt.pool = upstream.NewPool(ms, upstream.EjectionPolicy{
		Failures: cfg.Routing.EjectAfterFailures, Base: cfg.Routing.EjectBase, Max: cfg.Routing.EjectMax})
	return rt, nil
}

// pick chooses rec's upstream; false when none that serves its model is
// up (the caller answers 503).
func (rt *router) pick(rec *Record, r *http.Request, fields map[string]json.RawMessage) bool {
	key := ""
	if rt.affinity {
		key = upstream.AffinityKey(namedSession(r, fields), fields["messages"], fields["prompt"])
	}
	i, reason := rt.pool.Pick(rec.Model, key, nil, time.Now())
	rec.routed = &routeChoice{i: i, reason: reason, key: key}
	if i < 0 {
		return false
	}
	rt.place(rec)
	rt.metrics.sent(rt.engines[i], rec.Model, reason.String())
	return true
}

// place writes rec's engine into its facts (the span's mlx.upstream,
// mlx.node, mlx.route, server.address and server.port).
func (rt *router) place(rec *Record) {
	ch := rec.routed
	if ch.i < 0 {
		return
	}
	e := rt.engines[ch.i]
	rec.Upstream, rec.UpstreamNode, rec.Chosen = e.cfg.Name, e.cfg.Node, ch.reason.String()
	if ch.retried {
		rec.Chosen = "retried:" + rec.Chosen
	}
	if h, p, ok := splitHostPort(e.url.Host); ok {
		rec.ServerAddress, rec.ServerPort = h, p
	}
}

// end gives back rec's place in its upstream's requests in flight; a
// request that got an answer's headers reached the engine, which clears
// the upstream's failed connections.
func (rt *router) end(rec *Record) {
	ch := rec.routed
	if ch == nil || ch.i < 0 || ch.ended {
		return
	}
	rt.finish(ch, true, false)
}

// finish ends choice ch on its upstream: its place in flight given back,
// and reached (a connection was made) clearing the upstream's failed
// connections or, false, counting toward its ejection; retried says the
// request goes on at another upstream.
func (rt *router) finish(ch *routeChoice, reached, retried bool) {
	ch.ended = true
	ejected := rt.pool.Done(ch.i, reached, time.Now())
	rt.metrics.ended(rt.engines[ch.i], ejected, retried)
}

// target points out at engine m: its URL, and its own credential when it
// has one (the caller's never goes to an engine behind another door).
func (m *engine) target(out *http.Request) {
	out.URL.Scheme, out.URL.Host = m.url.Scheme, m.url.Host
	out.URL.Path, out.URL.RawPath = joinPath(m.url.Path, out.URL.Path), ""
	out.Host = ""
	if m.cfg.APIKey != "" {
		out.Header.Set("Authorization", "Bearer "+m.cfg.APIKey)
	}
}

func joinPath(base, p string) string {
	if base == "" || base == "/" {
		return p
	}
	if base[len(base)-1] == '/' {
		base = base[:len(base)-1]
	}
	return base + p
}

// RoundTrip sends a routed request to its upstream. A request that never
// reached it (the connection failed: nothing was sent, the engine cannot
// have started it) counts toward the upstream's ejection and is sent once
// more, to the next upstream the choice gives; one the engine may have
// started is never sent again (no doubled generation or tool call).
func (rt *router) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := recordOf(req.Context())
	if rec == nil || rec.routed == nil || rec.routed.i < 0 {
		return nil, errors.New("no upstream chosen for the request")
	}
	ch := rec.routed
	m := rt.engines[ch.i]
	out := req.Clone(req.Context())
	m.target(out)
	res, err := m.transport.RoundTrip(out)
	if err == nil || !neverReached(err) || ch.retried || req.GetBody == nil {
		return res, err
	}
	// The next choice leaves the failed upstream out (tried), so it is
	// made before that upstream's failure is counted.
	tried := make([]bool, len(rt.engines))
	tried[ch.i] = true
	next, reason := rt.pool.Pick(rec.Model, ch.key, tried, time.Now())
	rt.finish(ch, false, next >= 0)
	if next < 0 {
		return nil, err
	}
	rt.metrics.sent(rt.engines[next], rec.Model, upstream.Retried)
	rt.log.Debug("Upstream unreachable; the request goes to another", zap.String("failed", m.cfg.Name),
		zap.String("upstream", rt.engines[next].cfg.Name), zap.Error(err))
	*ch = routeChoice{i: next, reason: reason, key: ch.key, retried: true}
	rt.place(rec)
	body, berr := req.GetBody()
	if berr != nil {
		return nil, err
	}
	again := req.Clone(req.Context())
	again.Body = body
	rt.engines[next].target(again)
	res, err = rt.engines[next].transport.RoundTrip(again)
	if err != nil && neverReached(err) {
		// The second engine could not be reached either: its failure
		// counts toward its ejection too, and the request ends here.
		rt.finish(ch, false, false)
	}
	return res, err
}

// neverReached: the connection to the engine failed, so no byte of the
// request was sent.
func neverReached(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// probeAll asks each upstream's /health (Proxy.probeOnce, every
// upstream_probe_interval): 200 is up; anything else, or no answer, is
// down (mlx_lm answers 503 once its generation thread is dead, from
// mlx-lm #1791 on).
func (rt *router) probeAll(ctx context.Context, timeout time.Duration) {
	for i := range rt.engines {
		rt.probe(ctx, i, timeout)
	}
}

func (rt *router) probe(ctx context.Context, i int, timeout time.Duration) {
	m := rt.engines[i]
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.url.JoinPath("/health").String(), nil)
	if err != nil {
		return
	}
	if m.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+m.cfg.APIKey)
	}
	up := false
	if res, err := m.transport.RoundTrip(req); err == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 4<<10))
		res.Body.Close()
		up = res.StatusCode == http.StatusOK
	}
	rt.mu.Lock()
	rt.probed[i] = up
	rt.mu.Unlock()
	rt.update(i)
}

// update gives the pool upstream i's verdict, logging changes only.
func (rt *router) update(i int) {
	rt.mu.Lock()
	up := rt.probed[i] && !rt.notReady[i]
	was := rt.pool.SetUp(i, up)
	any := false
	ups := make([]bool, len(rt.probed))
	for j := range rt.probed {
		ups[j] = rt.probed[j] && !rt.notReady[j]
		any = any || ups[j]
	}
	rt.metrics.verdicts(rt.engines, ups)
	rt.mu.Unlock()
	if rt.anyUp != nil {
		rt.anyUp(any)
	}
	if was != up {
		name := zap.String("upstream", rt.engines[i].cfg.Name)
		if up {
			rt.log.Info("Upstream engine up", name)
		} else {
			rt.log.Warn("Upstream engine down: no request goes to it until it is up", name)
		}
	}
}

// SetEngineReady takes a supervisor's verdict on the engine at endpoint:
// not ready (a wedged or dead generation thread, which /health under
// mlx_lm v0.31.3 does not show) takes it out whatever its /health says,
// until the supervisor says ready again. Ready is also a probe that
// answered: the supervisor says so only when its own check of the engine
// (/health, /v1/models or a one-token completion) just did. So an engine
// the supervisor started or restarted is in at once, not after the next
// upstream_probe_interval (15 s by default) with the front door sending its
// model's every request to the others, or answering 503 if there are none.
func (rt *router) SetEngineReady(endpoint string, ready bool) {
	for i, m := range rt.engines {
		if sameEndpoint(m.url, endpoint) {
			rt.mu.Lock()
			rt.notReady[i] = !ready
			if ready {
				rt.probed[i] = true
			}
			rt.mu.Unlock()
			rt.update(i)
		}
	}
}

func sameEndpoint(u *url.URL, endpoint string) bool {
	e, err := url.Parse(endpoint)
	return err == nil && e.Host == u.Host && e.Scheme == u.Scheme
}

// serveRead answers /health and /v1/models itself with several engines:
// /health is 200 while any engine is up (503 when none is), /v1/models
// lists the models the upstreams serve, in OpenAI's shape (mlx_lm's own
// lists its whole model cache, which is not what it serves).
func (rt *router) serveRead(w http.ResponseWriter, r *http.Request, models bool, served []string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if !models {
		up := false
		for _, s := range rt.pool.Snapshot() {
			up = up || s.Up
		}
		if !up {
			h.Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"status": "unavailable"}`))
			return
		}
		_, _ = w.Write([]byte(`{"status": "ok"}`))
		return
	}
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{}}
	want := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/v1/models"), "/")
	seen := map[string]bool{}
	for _, m := range served {
		if seen[m] || (want != "" && m != want) {
			continue
		}
		seen[m] = true
		list.Data = append(list.Data, model{ID: m, Object: "model", Created: rt.created, OwnedBy: "mlx-otelcol"})
	}
	b, _ := json.Marshal(list)
	_, _ = w.Write(b)
}

// SetEngineReady takes a supervisor's word on the engine at endpoint
// (router.SetEngineReady); with one engine it changes nothing: the
// supervisor restarts it, and mlx_server_ready says so.
func (p *Proxy) SetEngineReady(endpoint string, ready bool) {
	if p.router != nil {
		p.router.SetEngineReady(endpoint, ready)
	}
}
