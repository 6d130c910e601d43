package proxyextension

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"

	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configtls"

	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet"
	"github.com/mlx-otelcol/mlx-otelcol/proxy"
)

// Config of the mlx_proxy extension: the proxy's own settings (proxy.Config,
// whose keys sit at the top of the section) and the collector-side ones: the
// listeners the extension opens and the bearer token as a secret.
type Config struct {
	ProxySettings `mapstructure:",squash"`

	// Endpoint is the address the proxy listens on (host:port).
	Endpoint string `mapstructure:"endpoint"`
	// TLS, when set (cert_file and key_file), serves the API and /metrics
	// on endpoint over HTTPS: keys and prompts from the LAN cross it
	// encrypted.
	TLS configoptional.Optional[configtls.ServerConfig] `mapstructure:"tls"`
	// MetricsEndpoint is a listener of its own (host:port) that serves
	// /metrics alone; "" = none. metrics_on_proxy_port false needs it.
	MetricsEndpoint string `mapstructure:"metrics_endpoint"`
	// MetricsBearerToken, when set, is required on /metrics wherever it is
	// served (Authorization: Bearer <token>). A secret here (redacted when
	// the configuration is printed); proxy.Config gets it as a string.
	MetricsBearerToken configopaque.String `mapstructure:"metrics_bearer_token"`
	// APIKeys are the callers' keys, as comma-separated name=key pairs
	// (config/mlx.yaml reads MLX_API_KEYS into it). A secret: redacted
	// when the configuration is printed.
	APIKeys configopaque.String `mapstructure:"api_keys"`
	// APIKeysFile is a file of name=key lines (# comments), read at start;
	// its keys add to api_keys. It must not be readable by others.
	APIKeysFile string `mapstructure:"api_keys_file"`
	// Agent is where the proxy role keeps its start counts
	// (internal/fleet).
	Agent fleet.Config `mapstructure:"agent"`
	// Upstreams are several engines behind the proxy, each serving its
	// models (proxy.UpstreamConfig), instead of upstream.
	Upstreams []UpstreamSettings `mapstructure:"upstreams"`
}

// UpstreamSettings is one of several engines (proxy.UpstreamConfig says
// what each field does), with its key as a secret and its client TLS.
type UpstreamSettings struct {
	Name        string   `mapstructure:"name"`
	Endpoint    string   `mapstructure:"endpoint"`
	Node        string   `mapstructure:"node"`
	Models      []string `mapstructure:"models"`
	MaxInFlight int      `mapstructure:"max_in_flight"`
	// APIKey is sent to the engine as Authorization: Bearer (an engine
	// behind another front door); redacted when the configuration is
	// printed.
	APIKey configopaque.String `mapstructure:"api_key"`
	// TLS is the client TLS for an https endpoint (ca_file, and
	// cert_file/key_file for mutual TLS).
	TLS configtls.ClientConfig `mapstructure:"tls"`
}

// ProxySettings is proxy.Config as the extension embeds it: the same fields
// and keys, without proxy.Config's methods. confmap.Validate walks every
// field and runs each Validate it finds; Config.Validate runs
// proxy.Config.Validate, so the embedded field must not have one, or every
// proxy error would be reported twice.
type ProxySettings proxy.Config

// Validate checks the configuration; the collector calls it at startup and
// in `mlx-otelcol validate`. The proxy's settings are checked by
// proxy.Config.Validate; here only the listeners.
func (c *Config) Validate() error {
	var errs []error
	if c.Endpoint == "" {
		errs = append(errs, errors.New("endpoint: must be set (host:port to listen on, e.g. 0.0.0.0:8080)"))
	} else if _, port, err := net.SplitHostPort(c.Endpoint); err != nil || port == "" {
		errs = append(errs, fmt.Errorf("endpoint: %q is not host:port", c.Endpoint))
	}
	if c.MetricsEndpoint != "" {
		if _, port, err := net.SplitHostPort(c.MetricsEndpoint); err != nil || port == "" {
			errs = append(errs, fmt.Errorf("metrics_endpoint: %q is not host:port", c.MetricsEndpoint))
		} else if c.MetricsEndpoint == c.Endpoint {
			errs = append(errs, errors.New("metrics_endpoint: must differ from endpoint (/metrics is served there already with metrics_on_proxy_port)"))
		}
	} else if !c.MetricsOnProxyPort {
		errs = append(errs, errors.New("metrics_on_proxy_port: false needs metrics_endpoint, or the proxy's series are served nowhere"))
	}
	pc := proxy.Config(c.ProxySettings)
	keys, err := c.apiKeys()
	if err != nil {
		errs = append(errs, err)
	}
	pc.APIKeys = keys
	pc.Upstreams = c.upstreams()
	errs = append(errs, pc.Validate())
	return errors.Join(errs...)
}

// maxAPIKeysFile bounds the keys file read at start.
const maxAPIKeysFile = 1 << 20

// apiKeys reads api_keys and api_keys_file.
func (c *Config) apiKeys() ([]proxy.APIKey, error) {
	keys, err := proxy.ParseAPIKeys(string(c.APIKeys))
	if err != nil {
		return nil, fmt.Errorf("api_keys: %w", err)
	}
	if c.APIKeysFile == "" {
		return keys, nil
	}
	f, err := os.Open(c.APIKeysFile)
	if err != nil {
		return nil, fmt.Errorf("api_keys_file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("api_keys_file: %w", err)
	}
	if !st.Mode().IsRegular() || st.Size() > maxAPIKeysFile {
		return nil, fmt.Errorf("api_keys_file: %s must be a regular file of at most %d bytes", c.APIKeysFile, maxAPIKeysFile)
	}
	if st.Mode().Perm()&0o007 != 0 {
		return nil, fmt.Errorf("api_keys_file: %s is readable or writable by others (mode %s): chmod o-rwx it", c.APIKeysFile, st.Mode().Perm())
	}
	b, err := io.ReadAll(io.LimitReader(f, maxAPIKeysFile))
	if err != nil {
		return nil, fmt.Errorf("api_keys_file: %w", err)
	}
	more, err := proxy.ParseAPIKeys(string(b))
	if err != nil {
		return nil, fmt.Errorf("api_keys_file %s: %w", c.APIKeysFile, err)
	}
	return append(keys, more...), nil
}

// proxyConfig is the configuration of the proxy itself: the YAML's, with
// the bearer token and OpenInference's redaction settings (from the
// environment) filled in.
func (c *Config) proxyConfig() (proxy.Config, error) {
	pc := proxy.Config(c.ProxySettings)
	pc.MetricsBearerToken = string(c.MetricsBearerToken)
	keys, err := c.apiKeys()
	if err != nil {
		return pc, err
	}
	pc.APIKeys = keys
	pc.Upstreams = c.upstreams()
	pc.Traces.Hide = proxy.HideFromEnv(os.Getenv)
	return pc, nil
}

// upstreams is upstreams as the proxy takes them (without TLS: Start loads
// it).
func (c *Config) upstreams() []proxy.UpstreamConfig {
	var out []proxy.UpstreamConfig
	for _, u := range c.Upstreams {
		out = append(out, proxy.UpstreamConfig{Name: u.Name, Endpoint: u.Endpoint, Node: u.Node,
			Models: u.Models, MaxInFlight: u.MaxInFlight, APIKey: string(u.APIKey)})
	}
	return out
}
