package proxy

import (
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"net/http"
	"os"
	"strings"

	"go.uber.org/zap"
)

// Who may call the API, from where, and from which web pages. The proxy is
// the front door on a network: the engine behind it has no authentication
// and answers every browser origin (Access-Control-Allow-Origin: *), so
// the proxy decides all of it and strips the engine's CORS headers.
//
//   - Keys: a caller presents Authorization: Bearer <key>; keys are
//     compared in constant time, and a key's name is the caller's client
//     label. A wrong key is 401 from anywhere. The key is the proxy's: it
//     is not passed on to the engine. Without keys configured, a token is
//     ignored and passed on as it came (OpenAI clients always send one).
//   - Without a key: a loopback client is "local" (unless
//     require_key_on_loopback), a remote one is refused with 403 unless
//     allow_unauthenticated_remote, when it is "anonymous".
//   - Browsers: a request with an Origin not in allowed_origins gets 403,
//     as Ollama answers; OPTIONS (a CORS preflight) is answered here and
//     never reaches the engine.
//   - DNS rebinding: a caller let in for being on loopback must name this
//     machine in its Host header (localhost, the host name, an IP address
//     or allowed_hosts). A page whose DNS name was made to resolve to
//     127.0.0.1 sends its own name, and is refused.

// caller is what the front door knows of who sent a request.
type caller struct {
	// client is the client label value: a key's name, ClientLocal or
	// ClientAnonymous.
	client string
}

// callers checks requests against the access settings.
type callers struct {
	cfg  Access
	keys []hashedKey
	// origins: the allowed origins, lower-cased; anyOrigin for "*".
	origins   map[string]bool
	anyOrigin bool
	// hosts: Host names a loopback caller may use (lower-cased, no port).
	hosts map[string]bool
}

// hashedKey keeps a key's SHA-256, so every comparison is of 32 bytes,
// whatever the lengths of the key and the presented token.
type hashedKey struct {
	name string
	sum  [sha256.Size]byte
}

func newCallers(cfg Access) *callers {
	c := &callers{cfg: cfg, origins: map[string]bool{}, hosts: map[string]bool{"localhost": true}}
	for _, k := range cfg.APIKeys {
		c.keys = append(c.keys, hashedKey{name: k.Name, sum: sha256.Sum256([]byte(k.Key))})
	}
	for _, o := range cfg.AllowedOrigins {
		if o == "*" {
			c.anyOrigin = true
		}
		c.origins[strings.ToLower(strings.TrimSuffix(o, "/"))] = true
	}
	if name, err := os.Hostname(); err == nil && name != "" {
		name = strings.ToLower(name)
		c.hosts[name] = true
		c.hosts[strings.TrimSuffix(name, ".local")+".local"] = true
	}
	for _, h := range cfg.AllowedHosts {
		c.hosts[strings.ToLower(h)] = true
	}
	return c
}

// checkOrigin refuses a browser request from a page whose origin is not
// allowed (preflights included).
func (c *callers) checkOrigin(r *http.Request) *refusal {
	if origin := r.Header.Get("Origin"); origin != "" && !c.originAllowed(origin) {
		return forbidden("origin_not_allowed", "this server does not accept requests from the web page's origin (see allowed_origins)").ptr()
	}
	return nil
}

// admit identifies the caller of r, or says why it is refused.
func (c *callers) admit(r *http.Request) (caller, *refusal) {
	// Without keys a token means nothing: OpenAI clients send one whatever
	// the server (lm-studio, ollama, sk-no-key-required).
	if token, ok := bearer(r); ok && len(c.keys) > 0 {
		if name, found := c.match(token); found {
			return caller{client: name}, nil
		}
		return caller{}, unauthorized("invalid_api_key", "Incorrect API key provided.").ptr()
	}
	loopback := isLoopback(r.RemoteAddr)
	var keyless string // the client label of a caller let in without a key
	switch {
	case loopback && !(c.cfg.RequireKeyOnLoopback && len(c.keys) > 0):
		keyless = ClientLocal
	case !loopback && c.cfg.AllowUnauthenticatedRemote:
		keyless = ClientAnonymous
	}
	switch {
	case keyless != "" && !c.hostAllowed(r.Host):
		// A page whose name was rebound to this machine (loopback or its
		// LAN address) sends its own name.
		return caller{}, forbidden("host_not_allowed", "the Host header does not name this machine (see allowed_hosts)").ptr()
	case keyless != "":
		return caller{client: keyless}, nil
	case len(c.keys) > 0:
		return caller{}, unauthorized("missing_api_key", "You didn't provide an API key. Send it as Authorization: Bearer <key>.").ptr()
	default:
		return caller{}, forbidden("remote_not_allowed", "this server answers clients on its own machine only; its operator can set API keys (MLX_API_KEYS) or allow_unauthenticated_remote").ptr()
	}
}

// match finds the key token is, comparing with every key in constant
// time (no early exit: the time says nothing of which key came close).
func (c *callers) match(token string) (string, bool) {
	sum := sha256.Sum256([]byte(token))
	name, found := "", 0
	for _, k := range c.keys {
		eq := subtle.ConstantTimeCompare(sum[:], k.sum[:])
		if eq == 1 {
			name = k.name
		}
		found |= eq
	}
	return name, found == 1
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	if len(h) < 7 || !strings.EqualFold(h[:7], "bearer ") {
		return "", false
	}
	return strings.TrimSpace(h[7:]), true
}

func (c *callers) originAllowed(origin string) bool {
	return c.anyOrigin || c.origins[strings.ToLower(strings.TrimSuffix(origin, "/"))]
}

// hostAllowed: the Host header names this machine. An IP address cannot be
// rebound, so every one passes.
func (c *callers) hostAllowed(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if host == "" || net.ParseIP(host) != nil {
		return true // HTTP/1.0 without Host, or an address
	}
	return c.hosts[host] || strings.HasSuffix(host, ".localhost")
}

func isLoopback(remoteAddr string) bool {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// corsHeaders sets the answer's CORS headers for an allowed origin.
func (c *callers) corsHeaders(h http.Header, r *http.Request) {
	origin := r.Header.Get("Origin")
	if origin == "" || !c.originAllowed(origin) {
		return
	}
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Expose-Headers", "Retry-After, "+TraceIDHeader+", "+SpanIDHeader)
}

// preflight answers OPTIONS: 204 with what an allowed origin may send.
func (c *callers) preflight(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Allow", "GET, POST, OPTIONS")
	c.corsHeaders(h, r)
	if h.Get("Access-Control-Allow-Origin") != "" {
		h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
		// Not X-Mlx-Origin: a page is a user's, whatever it would claim
		// (origin.go).
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Traceparent, Tracestate, X-Session-Id, X-Mlx-Trace")
		h.Set("Access-Control-Max-Age", "600")
	}
	w.WriteHeader(http.StatusNoContent)
}

// stripCORS removes the engine's CORS headers from its answer (mlx_lm
// sends Access-Control-Allow-Origin: * by default).
func stripCORS(h http.Header) {
	for k := range h {
		if strings.HasPrefix(k, "Access-Control-") {
			delete(h, k)
		}
	}
}

// logAccessPolicy says at start, in one line, who the API answers and how
// to open it.
func (p *Proxy) logAccessPolicy(addr net.Addr) {
	a := p.cfg.Access
	endpoint := zap.String("endpoint", addr.String())
	switch {
	case len(a.APIKeys) == 0 && !a.AllowUnauthenticatedRemote:
		p.log.Info("The API answers clients on this machine only (others get 403): to open it, set API keys (MLX_API_KEYS=name=key,... or api_keys_file) or allow_unauthenticated_remote: true", endpoint)
	case len(a.APIKeys) == 0:
		p.log.Warn("The API answers every client without a key (allow_unauthenticated_remote): anyone who reaches this port can use the engine", endpoint)
	default:
		p.log.Info("The API requires an API key (Authorization: Bearer) from remote clients", endpoint,
			zap.Int("keys", len(a.APIKeys)), zap.Bool("loopback_needs_key", a.RequireKeyOnLoopback),
			zap.Bool("remote_without_key", a.AllowUnauthenticatedRemote))
	}
}
