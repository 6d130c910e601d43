package proxy

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"time"
)

// UpstreamConfig is one engine of several behind the proxy (key
// `upstreams`, a list). With one engine, `upstream` alone is enough and
// behaves as before.
type UpstreamConfig struct {
	// Name identifies the upstream in series, spans and logs
	// (mlx.upstream). It also seeds the affinity hash: renaming an
	// upstream moves its conversations.
	Name string `mapstructure:"name"`
	// Endpoint is the engine's base URL (http or https).
	Endpoint string `mapstructure:"endpoint"`
	// Node is the node the engine runs on (mlx.node); empty: the proxy's
	// own.
	Node string `mapstructure:"node"`
	// Models are the models the engine serves: a request for one of them
	// may go there, and only there. The first is the engine's --model,
	// sent to it as default_model as with one engine (allow.go,
	// oneModelName); more are for an upstream that serves others by name
	// (another front door). Required: mlx_lm's /v1/models lists every
	// model in the engine's Hugging Face cache (mlx_lm v0.31.3 server.py,
	// handle_models_request, scan_cache_dir), and a request naming any of
	// them makes the engine load it, so what it lists is not what it
	// serves.
	Models []string `mapstructure:"models"`
	// MaxInFlight is the requests in flight above which the upstream is
	// saturated and a conversation spills over to another (0: never).
	// mlx_lm decodes up to --decode-concurrency (32) requests at once.
	MaxInFlight int `mapstructure:"max_in_flight"`
	// APIKey, when set, is sent to the engine as Authorization: Bearer
	// (an engine behind another front door); the caller's own key never
	// is. Not read from YAML here: the extension reads it as a secret.
	APIKey string `mapstructure:"-"`
	// TLS is the client TLS for an https endpoint. Not read from YAML
	// here: the extension loads it (tls) and sets it.
	TLS *tls.Config `mapstructure:"-"`
}

// Routing says how the proxy chooses among several upstreams (key
// `routing`).
type Routing struct {
	// Affinity keeps a conversation on one engine, where its prompt cache
	// is: AffinityConversation (its session, else the start of its
	// messages, proxy/upstream AffinityKey); AffinityNone spreads every
	// request over the engines (for traffic with no conversations to keep).
	Affinity string `mapstructure:"affinity"`
	// Ejection: consecutive failed connections take an upstream out for
	// a while (proxy/upstream, Ejection), between the probes.
	EjectAfterFailures int           `mapstructure:"eject_after_failures"`
	EjectBase          time.Duration `mapstructure:"eject_base"`
	EjectMax           time.Duration `mapstructure:"eject_max"`
}

// The routing.affinity values.
const (
	AffinityConversation = "conversation"
	AffinityNone         = "none"
)

func (c *Config) validateUpstreams() []error {
	if len(c.Upstreams) == 0 {
		return nil
	}
	var errs []error
	if c.Upstream != "" && c.Upstream != DefaultConfig().Upstream {
		// (Upstream has a default: only one set by hand is an error.)
		errs = append(errs, errors.New("upstream and upstreams: set one (upstream is the one engine's URL, upstreams several)"))
	}
	names := map[string]bool{}
	for i, u := range c.Upstreams {
		at := fmt.Sprintf("upstreams[%d]", i)
		if u.Name == "" {
			errs = append(errs, fmt.Errorf("%s.name: must be set", at))
		} else if names[u.Name] {
			errs = append(errs, fmt.Errorf("%s.name: %q is used twice", at, u.Name))
		}
		names[u.Name] = true
		if e, err := url.Parse(u.Endpoint); err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "" {
			errs = append(errs, fmt.Errorf("%s.endpoint: %q is not an http(s) URL", at, u.Endpoint))
		}
		if len(u.Models) == 0 {
			errs = append(errs, fmt.Errorf("%s.models: must list the models the engine serves (its /v1/models lists every cached model, each of which a request would load)", at))
		}
		for _, m := range u.Models {
			if m == "" || m == AnyModel {
				errs = append(errs, fmt.Errorf("%s.models: %q is not a model name", at, m))
			}
		}
		if u.MaxInFlight < 0 {
			errs = append(errs, fmt.Errorf("%s.max_in_flight: must not be negative, got %d", at, u.MaxInFlight))
		}
	}
	errs = append(errs, c.validateUpstreamModels()...)
	r := c.Routing
	if r.Affinity != AffinityConversation && r.Affinity != AffinityNone {
		errs = append(errs, fmt.Errorf("routing.affinity: %q is not %s or %s", r.Affinity, AffinityConversation, AffinityNone))
	}
	if r.EjectAfterFailures < 1 {
		errs = append(errs, fmt.Errorf("routing.eject_after_failures: must be at least 1, got %d", r.EjectAfterFailures))
	}
	if r.EjectBase <= 0 || r.EjectMax < r.EjectBase {
		errs = append(errs, fmt.Errorf("routing.eject_base and eject_max: 0 < eject_base <= eject_max, got %s and %s", r.EjectBase, r.EjectMax))
	}
	return errs
}

// validateUpstreamModels: the allowlist is the upstreams' models, and a
// model is either every serving engine's --model (first in its list) or
// served by name everywhere, so that the name an engine is sent does not
// depend on which one the request goes to.
func (c *Config) validateUpstreamModels() []error {
	var errs []error
	if len(c.ServedModels) > 0 {
		errs = append(errs, errors.New("served_models: not with upstreams (the upstreams' models are what the proxy serves)"))
	}
	first, other := map[string]bool{}, map[string]bool{}
	for _, u := range c.Upstreams {
		for j, m := range u.Models {
			if j == 0 {
				first[m] = true
			} else {
				other[m] = true
			}
		}
	}
	for m := range first {
		if other[m] {
			errs = append(errs, fmt.Errorf("upstreams: %q is one engine's --model (first in its models) and another's by name; list it first everywhere or nowhere", m))
		}
	}
	if c.Model != "" && !first[c.Model] && !other[c.Model] {
		errs = append(errs, fmt.Errorf("model: %q is served by no upstream (with upstreams, model is where a request that names none goes)", c.Model))
	}
	return errs
}

// engineModels are the names sent to an engine as default_model: its
// --model (oneModelName).
func (c *Config) engineModels() map[string]bool {
	out := map[string]bool{}
	if len(c.Upstreams) == 0 {
		if c.Model != "" && c.Model != defaultModelName {
			out[c.Model] = true
		}
		return out
	}
	for _, u := range c.Upstreams {
		if len(u.Models) > 0 {
			out[u.Models[0]] = true
		}
	}
	return out
}

// withUpstreamDefaults: with upstreams, a request that names no model goes
// to the first upstream's first model unless model says otherwise, and
// the allowlist is the upstreams' models.
func (c Config) withUpstreamDefaults() Config {
	if len(c.Upstreams) == 0 {
		return c
	}
	if c.Model == "" && len(c.Upstreams[0].Models) > 0 {
		c.Model = c.Upstreams[0].Models[0]
	}
	c.ServedModels = nil
	for _, u := range c.Upstreams {
		c.ServedModels = append(c.ServedModels, u.Models...)
	}
	return c
}
