package proxy

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// Origin: where a completion request comes from, so that the proxy's own
// tools do not pass for users. The judge grades answers through the
// proxy, mlxbench loads it, a probe may check it: counted as users, their
// requests would move the SLO rules' denominators and set the "last
// answer" quality gauges to a judge's JSON reply.
//
//   - A request says its origin in OriginHeader. A value outside the
//     known set (the built-in ones and traffic_origins) is "user": the
//     label stays bounded, and nothing a client sends mints a value.
//   - Only a caller the front door knows may claim one: a loopback
//     client (the judge and the probe run beside the proxy) or one that
//     presented an API key (mlxbench against a remote proxy). An
//     anonymous remote caller (allow_unauthenticated_remote) is "user"
//     whatever it says, so it cannot take its traffic out of the user
//     SLOs. A keyed caller that claims "judge" is still counted under its
//     key's name in mlx_client_requests_total: what it hides is visible.
//   - A request relayed by a reverse proxy (it carries Forwarded or
//     X-Forwarded-For) is "user" whatever it says: a reverse proxy on
//     this machine makes remote users loopback clients, and one that adds
//     the API key makes them keyed ones. The proxy's own tools call it
//     directly.
//   - A browser page is always "user": CORS does not let a page send
//     OriginHeader (caller.go, preflight).
//   - Counters and histograms of requests carry the origin as a label;
//     the "last answer" gauges and the scorer take "user" only, and only
//     a "user" request gets logprobs injected (nothing else is scored).

// Built-in origins.
const (
	OriginUser  = "user"
	OriginJudge = "judge"
	OriginProbe = "probe"
	OriginBench = "bench"
)

// OriginHeader carries a request's origin.
const OriginHeader = "X-Mlx-Origin"

// builtinOrigins are known without configuration.
var builtinOrigins = []string{OriginUser, OriginJudge, OriginProbe, OriginBench}

// maxTrafficOrigins bounds traffic_origins: each is a label value on
// every request series.
const maxTrafficOrigins = 8

// originName is what a configured origin may be: a short label value.
var originName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// origins resolves a request's origin.
type origins struct{ known map[string]bool }

func newOrigins(extra []string) origins {
	o := origins{known: map[string]bool{}}
	for _, v := range append(append([]string(nil), builtinOrigins...), extra...) {
		o.known[v] = true
	}
	return o
}

// of is the origin of r from who: its header's value when known and the
// caller may claim one, else "user".
func (o origins) of(r *http.Request, who caller) string {
	v := r.Header.Get(OriginHeader)
	if v == "" || who.client == "" || who.client == ClientAnonymous || relayed(r) {
		return OriginUser
	}
	v = strings.ToLower(strings.TrimSpace(v))
	if !o.known[v] {
		return OriginUser
	}
	return v
}

// relayed: r came through a reverse proxy, which says whom it relays.
func relayed(r *http.Request) bool {
	return len(r.Header.Values("Forwarded")) > 0 || len(r.Header.Values("X-Forwarded-For")) > 0
}

// validateOrigins checks traffic_origins.
func validateOrigins(extra []string) []error {
	var errs []error
	if len(extra) > maxTrafficOrigins {
		errs = append(errs, fmt.Errorf("traffic_origins: at most %d, got %d (each is a label value on every request series)", maxTrafficOrigins, len(extra)))
	}
	seen := map[string]bool{}
	for _, v := range builtinOrigins {
		seen[v] = true
	}
	for _, v := range extra {
		switch {
		case !originName.MatchString(v):
			errs = append(errs, fmt.Errorf("traffic_origins: %q must be 1-32 lower-case letters, digits or '_', starting with a letter", v))
		case seen[v]:
			errs = append(errs, fmt.Errorf("traffic_origins: %q is given twice or is built in (user, judge, probe, bench)", v))
		}
		seen[v] = true
	}
	return errs
}

// scoredOrigin: only users' answers are scored (and get logprobs asked
// for them). A record without an origin (refused before its caller was
// known) counts as a user's, as in the metrics.
func (r *Record) scoredOrigin() bool { return r.Origin == OriginUser || r.Origin == "" }
