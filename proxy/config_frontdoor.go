package proxy

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Requests bounds what one completion request may ask of the engine (key
// `requests`); past a bound the proxy answers 400 itself (allow.go).
type Requests struct {
	// MaxTokens bounds max_tokens and max_completion_tokens (0: no bound).
	MaxTokens int `mapstructure:"max_tokens"`
	// MaxStopSequences bounds how many stop strings a request may give,
	// and MaxStopBytes how long each may be: mlx_lm checks every stop
	// string at every token (0: no bound).
	MaxStopSequences int `mapstructure:"max_stop_sequences"`
	MaxStopBytes     int `mapstructure:"max_stop_bytes"`
	// ChatTemplateKwargs are the chat_template_kwargs keys a request may
	// set; any other is refused. mlx_lm passes them all to the tokenizer's
	// apply_chat_template, where chat_template is a template of the
	// client's own.
	ChatTemplateKwargs []string `mapstructure:"chat_template_kwargs"`
	// AllowXTC lets xtc_probability above 0 through: say so only for an
	// engine of mlx_lm 0.32.0 or later. Before it, mlx_lm's sampler fails
	// on XTC in the generation thread and every later request hangs
	// (params.go).
	AllowXTC bool `mapstructure:"allow_xtc"`
}

// Access says who may use the API and from where (its keys sit at the top
// of the proxy's section). /metrics is not governed by it: it has its own
// bearer token (metrics_bearer_token).
type Access struct {
	// APIKeys are the keys callers present as Authorization: Bearer. Not
	// read from YAML here: the extension reads them as secrets (api_keys,
	// api_keys_file) and sets them.
	APIKeys []APIKey `mapstructure:"-"`
	// AllowUnauthenticatedRemote lets clients that are not on this machine
	// use the API without a key. Off: without keys only loopback clients
	// are served, and with keys a remote client must present one.
	AllowUnauthenticatedRemote bool `mapstructure:"allow_unauthenticated_remote"`
	// RequireKeyOnLoopback makes loopback clients present a key too, when
	// keys are set (off: a loopback client without a key is "local").
	RequireKeyOnLoopback bool `mapstructure:"require_key_on_loopback"`
	// AllowedOrigins are the browser origins (scheme://host[:port]) that
	// may call the API ("*": any). A request with another Origin gets 403.
	// Empty: none, like OLLAMA_ORIGINS unset.
	AllowedOrigins []string `mapstructure:"allowed_origins"`
	// AllowedHosts are Host header names a loopback client may use besides
	// localhost, this machine's name and IP addresses (DNS rebinding: a
	// web page whose name resolves to 127.0.0.1 sends its own name).
	AllowedHosts []string `mapstructure:"allowed_hosts"`
	// MaxConnections bounds the client connections open at once, and
	// MaxConnectionsPerClient those from one IP address (0: no bound).
	MaxConnections          int `mapstructure:"max_connections"`
	MaxConnectionsPerClient int `mapstructure:"max_connections_per_client"`
	// MaxHeaderBytes bounds a request's header block.
	MaxHeaderBytes int `mapstructure:"max_header_bytes"`
	// ModelsCacheTTL is how long an answer of the engine's /v1/models is
	// served again (mlx_lm scans the whole Hugging Face cache per call).
	ModelsCacheTTL time.Duration `mapstructure:"models_cache_ttl"`
}

// APIKey is one caller's key. Name is its client label value.
type APIKey struct {
	Name, Key string
}

// Client label values of callers without a key.
const (
	// ClientLocal: a loopback client without a key.
	ClientLocal = "local"
	// ClientAnonymous: a remote client without a key, where
	// allow_unauthenticated_remote lets it in.
	ClientAnonymous = "anonymous"
)

// maxAPIKeys bounds the keys, and so the client label's values.
const maxAPIKeys = 256

// minAPIKeyLen: a shorter key is guessed too easily.
const minAPIKeyLen = 16

var keyName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// ParseAPIKeys reads keys written as comma- or newline-separated name=key
// pairs (MLX_API_KEYS, an api_keys_file); blank lines and lines starting
// with # are skipped. Errors never quote a key.
func ParseAPIKeys(s string) ([]APIKey, error) {
	var keys []APIKey
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		for _, item := range strings.Split(line, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			name, key, ok := strings.Cut(item, "=")
			if !ok {
				return nil, fmt.Errorf("api key %d: want name=key", len(keys)+1)
			}
			keys = append(keys, APIKey{Name: strings.TrimSpace(name), Key: strings.TrimSpace(key)})
		}
	}
	return keys, nil
}

func (a *Access) validate() []error {
	var errs []error
	if len(a.APIKeys) > maxAPIKeys {
		errs = append(errs, fmt.Errorf("api_keys: at most %d keys, got %d", maxAPIKeys, len(a.APIKeys)))
	}
	names, keys := map[string]bool{}, map[string]bool{}
	for i, k := range a.APIKeys {
		switch {
		case !keyName.MatchString(k.Name):
			errs = append(errs, fmt.Errorf("api_keys: key %d: the name %q must be 1-64 letters, digits, '_', '.' or '-' (it is a label value)", i+1, k.Name))
		case k.Name == ClientLocal || k.Name == ClientAnonymous:
			errs = append(errs, fmt.Errorf("api_keys: key %d: the name %q is reserved for callers without a key", i+1, k.Name))
		case names[k.Name]:
			errs = append(errs, fmt.Errorf("api_keys: the name %q is given twice", k.Name))
		}
		if len(k.Key) < minAPIKeyLen {
			errs = append(errs, fmt.Errorf("api_keys: the key named %q is shorter than %d characters", k.Name, minAPIKeyLen))
		} else if keys[k.Key] {
			errs = append(errs, fmt.Errorf("api_keys: the key named %q is the same as another's", k.Name))
		}
		names[k.Name], keys[k.Key] = true, true
	}
	if a.RequireKeyOnLoopback && len(a.APIKeys) == 0 {
		errs = append(errs, errors.New("require_key_on_loopback: needs api_keys (MLX_API_KEYS or api_keys_file), or no client could be served"))
	}
	for _, o := range a.AllowedOrigins {
		if o != "*" && !strings.Contains(o, "://") {
			errs = append(errs, fmt.Errorf("allowed_origins: %q is not an origin (scheme://host[:port], or *)", o))
		}
	}
	if a.MaxConnections < 0 || a.MaxConnectionsPerClient < 0 {
		errs = append(errs, errors.New("max_connections and max_connections_per_client: must not be negative (0: no bound)"))
	}
	if a.MaxHeaderBytes < 4096 {
		errs = append(errs, fmt.Errorf("max_header_bytes: must be at least 4096, got %d", a.MaxHeaderBytes))
	}
	if a.ModelsCacheTTL < 0 {
		errs = append(errs, fmt.Errorf("models_cache_ttl: must not be negative, got %s", a.ModelsCacheTTL))
	}
	return errs
}

func (r *Requests) validate() []error {
	var errs []error
	if r.MaxTokens < 0 || r.MaxStopSequences < 0 || r.MaxStopBytes < 0 {
		errs = append(errs, errors.New("requests.max_tokens, max_stop_sequences and max_stop_bytes: must not be negative (0: no bound)"))
	}
	return errs
}
