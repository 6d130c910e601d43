package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The engine's routes that are not completions. mlx_lm answers GET
// /health and GET /v1/models (by prefix: /v1/models/<org>/<repo> filters
// the list) and nothing else of use; the proxy relays those two and
// answers every other path itself, so that nothing but a completion or a
// read reaches the engine.
//
// /v1/models is served from a short cache: mlx_lm runs scan_cache_dir()
// over the whole Hugging Face cache for every call, on a thread of its
// own, so a client polling it (Open WebUI does, per page) would keep the
// disk busy. One call to the engine at a time fills the cache.

// serveRead relays the engine's read-only routes and answers every other
// path itself (readonly.go).
//
// None of these routes reads a body: one that came with a body is
// answered as the connection's last (admit.go, lastAnswer), so net/http
// neither waits for the body before the answer nor for long after it.
func (p *Proxy) serveRead(w http.ResponseWriter, r *http.Request) {
	models, ok := readRoute(r)
	if r.ContentLength != 0 {
		w.Header().Set("Connection", "close")
		defer dropBodyLater(w, r)
	}
	switch {
	case p.router != nil && (models || ok):
		p.router.serveRead(w, r, models, p.cfg.ServedModels)
	case models:
		p.serveModels(w, r)
	case ok:
		out := r.Clone(r.Context())
		out.Body, out.ContentLength = http.NoBody, 0
		p.relay.ServeHTTP(w, out)
	case routeKnown(r.URL.Path):
		p.refuse(w, r, nil, methodNotAllowed(allowedMethods(r.URL.Path), fmt.Sprintf("%s is not allowed on %s", r.Method, r.URL.Path)))
	default:
		p.refuse(w, r, nil, routeNotFound("Unknown path: this server answers /v1/chat/completions, /chat/completions, /v1/completions, /v1/models and /health"))
	}
}

// readRoute says whether r is one of the engine's read-only routes.
func readRoute(r *http.Request) (models, ok bool) {
	if r.Method != http.MethodGet {
		return false, false
	}
	switch p := r.URL.Path; {
	case p == "/health":
		return false, true
	case p == "/v1/models" || strings.HasPrefix(p, "/v1/models/"):
		return true, true
	}
	return false, false
}

// routeKnown: a path the proxy serves, on some method.
func routeKnown(path string) bool {
	return allowedMethods(path) != ""
}

// allowedMethods are the methods a path answers (its Allow header).
func allowedMethods(path string) string {
	switch {
	case path == "/v1/chat/completions" || path == "/chat/completions" || path == "/v1/completions":
		return "POST, OPTIONS"
	case path == "/health" || path == "/v1/models" || strings.HasPrefix(path, "/v1/models/"):
		return "GET, OPTIONS"
	case path == FeedbackPath:
		return "POST, OPTIONS"
	}
	return ""
}

// maxModelsAnswer bounds an answer of /v1/models the proxy keeps.
const maxModelsAnswer = 4 << 20

// maxModelsEntries bounds the cached answers (one per filter path).
const maxModelsEntries = 64

// modelsFetchTimeout bounds one call to the engine's /v1/models.
const modelsFetchTimeout = 30 * time.Second

type modelsCache struct {
	ttl  time.Duration
	fill chan struct{} // one engine call at a time

	mu      sync.Mutex
	entries map[string]*modelsAnswer
}

type modelsAnswer struct {
	at     time.Time
	status int
	header http.Header // the engine's, less CORS, Date and framing
	body   []byte
}

func newModelsCache(ttl time.Duration) *modelsCache {
	return &modelsCache{ttl: ttl, fill: make(chan struct{}, 1), entries: map[string]*modelsAnswer{}}
}

func (c *modelsCache) get(key string, now time.Time) *modelsAnswer {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a := c.entries[key]; a != nil && now.Sub(a.at) < c.ttl {
		return a
	}
	return nil
}

func (c *modelsCache) put(key string, a *modelsAnswer) {
	if c.ttl <= 0 || a.status != http.StatusOK {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= maxModelsEntries {
		for k, e := range c.entries {
			if a.at.Sub(e.at) >= c.ttl {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= maxModelsEntries {
			return
		}
	}
	c.entries[key] = a
}

// serveModels answers GET /v1/models[...] from the cache, or from one
// call to the engine.
func (p *Proxy) serveModels(w http.ResponseWriter, r *http.Request) {
	// The path only: mlx_lm reads no query, and a query per call would
	// make every listing a new scan.
	key := r.URL.EscapedPath()
	a := p.models.get(key, time.Now())
	if a == nil {
		select {
		case p.models.fill <- struct{}{}:
		case <-r.Context().Done():
			return
		}
		// Another request may have filled it while this one waited.
		if a = p.models.get(key, time.Now()); a == nil {
			var err error
			a, err = p.fetchModels(r.Context(), key)
			if err != nil {
				<-p.models.fill
				p.onUpstreamError(w, r, err)
				return
			}
			p.models.put(key, a)
		}
		<-p.models.fill
	}
	h := w.Header()
	for k, v := range a.header {
		h[k] = v
	}
	h.Set("Content-Length", strconv.Itoa(len(a.body)))
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body)
}

func (p *Proxy) fetchModels(ctx context.Context, requestURI string) (*modelsAnswer, error) {
	ctx, cancel := context.WithTimeout(ctx, modelsFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(p.upstream.String(), "/")+requestURI, nil)
	if err != nil {
		return nil, err
	}
	res, err := p.transport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	p.setUp(true)
	body, err := io.ReadAll(io.LimitReader(res.Body, maxModelsAnswer+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxModelsAnswer {
		return nil, errModelsTooLarge
	}
	header := res.Header.Clone()
	stripCORS(header)
	for _, k := range []string{"Date", "Content-Length", "Connection", "Keep-Alive", "Transfer-Encoding"} {
		header.Del(k)
	}
	return &modelsAnswer{at: time.Now(), status: res.StatusCode, header: header, body: body}, nil
}

var errModelsTooLarge = errors.New("the engine's model list is larger than the proxy relays")
