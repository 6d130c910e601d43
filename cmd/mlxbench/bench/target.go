package bench

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// TargetConfig is the endpoint under test and how every request to it is
// made.
type TargetConfig struct {
	// BaseURL ends in /v1 (http://127.0.0.1:8080/v1).
	BaseURL string
	APIKey  string
	// Model is sent in every request ("default_model" when unknown, which
	// mlx_lm maps to its --model).
	Model string
	// Trace sends X-Mlx-Trace: 1 (0 when false), so the proxy traces the
	// run's requests, or keeps them out of the trace store.
	Trace bool
	// Origin is sent as X-Mlx-Origin: the proxy counts the run's requests
	// under origin=<Origin> ("bench"), apart from users', and scores only
	// "user" (a run that measures the scoring's cost sends that). "" sends
	// none.
	Origin string
	// Timeout bounds each request from its send to its last byte.
	Timeout time.Duration
	// Usage asks streams for the usage chunk (stream_options.include_usage);
	// without it output tokens are counted as output chunks.
	Usage bool
}

// Target sends chat completions with the official OpenAI client and
// reads the answers itself (see Do).
type Target struct {
	cfg    TargetConfig
	client openai.Client
	http   *http.Client

	// What the answers said about the engine, for the report.
	mu          sync.Mutex
	fingerprint string
	server      string
}

// NewTarget makes a client for cfg. Retries are off: a failed request is a
// sample, not something to hide.
func NewTarget(cfg TargetConfig) *Target {
	if cfg.Model == "" {
		cfg.Model = "default_model"
	}
	if cfg.APIKey == "" {
		cfg.APIKey = "none"
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Minute
	}
	tr := &http.Transport{
		Proxy:               nil, // loopback targets; never through HTTP_PROXY
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        512,
		MaxIdleConnsPerHost: 512,
		IdleConnTimeout:     90 * time.Second,
		// SSE must arrive as sent; compression would batch chunks.
		DisableCompression: true,
	}
	hc := &http.Client{Transport: tr}
	trace := "0"
	if cfg.Trace {
		trace = "1"
	}
	opts := []option.RequestOption{
		option.WithBaseURL(strings.TrimRight(cfg.BaseURL, "/") + "/"),
		option.WithAPIKey(cfg.APIKey),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
		option.WithHeader("X-Mlx-Trace", trace),
	}
	if cfg.Origin != "" {
		opts = append(opts, option.WithHeader("X-Mlx-Origin", cfg.Origin))
	}
	client := openai.NewClient(opts...)
	return &Target{cfg: cfg, client: client, http: hc}
}

// Config returns the effective configuration.
func (t *Target) Config() TargetConfig { return t.cfg }

// Client is the OpenAI client, for the calls that need no timing
// (/v1/models).
func (t *Target) Client() *openai.Client { return &t.client }

// Close drops idle connections.
func (t *Target) Close() {
	t.http.CloseIdleConnections()
}

// Models returns the raw /v1/models answer (kept verbatim in reports) and
// the model ids in it.
func (t *Target) Models(ctx context.Context) (raw string, ids []string, err error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	page, err := t.client.Models.List(ctx)
	if err != nil {
		return "", nil, err
	}
	for _, m := range page.Data {
		ids = append(ids, m.ID)
	}
	return page.RawJSON(), ids, nil
}

// saw remembers the engine's fingerprint and Server header.
func (t *Target) saw(r *Result) {
	if r.Fingerprint == "" && r.Server == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if r.Fingerprint != "" {
		t.fingerprint = r.Fingerprint
	}
	if r.Server != "" {
		t.server = r.Server
	}
}

// Fingerprint is the last system_fingerprint an answer carried.
func (t *Target) Fingerprint() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.fingerprint
}

// Server is the last Server header an answer carried.
func (t *Target) Server() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.server
}
