package liveexporter

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configtls"
)

// Config of the mlx_live exporter.
type Config struct {
	// Endpoint is VeloBenchmark's telemetry receiver, e.g.
	// http://velobench-host:9381; records go to <endpoint>/v1/logs. Without
	// a port, 4318 (OTLP/HTTP's) is used.
	Endpoint string `mapstructure:"endpoint"`
	// TLS is needed for an https:// endpoint (VeloBenchmark's receiver
	// speaks plain HTTP).
	TLS configtls.ClientConfig `mapstructure:"tls"`
	// Timeout bounds each POST.
	Timeout time.Duration `mapstructure:"timeout"`
	// Extension is the mlx_proxy extension whose
	// mlx_live_records_dropped_total counts the records a POST lost.
	Extension component.ID `mapstructure:"extension"`
}

// defaultPort is used when the endpoint names none (the emitter's default).
const defaultPort = "4318"

// Validate checks the configuration; the collector calls it at startup.
func (c *Config) Validate() error {
	var errs []error
	if _, err := c.logsURL(); err != nil {
		errs = append(errs, err)
	}
	if c.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("timeout: must be positive, got %s", c.Timeout))
	}
	return errors.Join(errs...)
}

// tlsSet: the tls section says how to trust the server.
func (c *Config) tlsSet() bool {
	t := c.TLS
	return t.CAFile != "" || t.CAPem != "" || t.CertFile != "" || t.CertPem != "" || t.InsecureSkipVerify || t.IncludeSystemCACertsPool
}

// logsURL is <endpoint>/v1/logs, with the default port filled in.
func (c *Config) logsURL() (string, error) {
	if strings.TrimSpace(c.Endpoint) == "" {
		return "", errors.New("endpoint: must be set (VeloBenchmark's receiver, e.g. http://velobench-host:9381; MLX_LIVE_ENDPOINT)")
	}
	u, err := url.Parse(c.Endpoint)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("endpoint: %q is not an http:// URL", c.Endpoint)
	}
	if u.Scheme == "https" && !c.tlsSet() {
		return "", fmt.Errorf("endpoint: %q is https, but no tls setting says how to trust it; VeloBenchmark's receiver speaks plain HTTP (use http://, or set tls)", c.Endpoint)
	}
	if u.Port() == "" {
		u.Host = net.JoinHostPort(u.Hostname(), defaultPort)
	}
	return strings.TrimRight(u.String(), "/") + "/v1/logs", nil
}
