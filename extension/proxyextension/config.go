package proxyextension

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"time"

	"go.opentelemetry.io/collector/config/configopaque"

	"github.com/mlx-otelcol/mlx-otelcol/proxy"
)

// Config of the mlx_proxy extension.
type Config struct {
	// Endpoint is the address the proxy listens on (host:port).
	Endpoint string `mapstructure:"endpoint"`
	// MetricsEndpoint is a listener of its own (host:port) that serves
	// /metrics alone; "" = none.
	MetricsEndpoint string `mapstructure:"metrics_endpoint"`
	// MetricsOnProxyPort keeps /metrics on Endpoint, the original's
	// :8080/metrics (default on). Off needs MetricsEndpoint.
	MetricsOnProxyPort bool `mapstructure:"metrics_on_proxy_port"`
	// MetricsBearerToken, when set, is required on /metrics wherever it is
	// served (Authorization: Bearer <token>).
	MetricsBearerToken configopaque.String `mapstructure:"metrics_bearer_token"`
	// Upstream is mlx_lm.server's base URL.
	Upstream string         `mapstructure:"upstream"`
	Timeouts TimeoutsConfig `mapstructure:"timeouts"`
	// MaxRequestBodyBytes: a larger request body is answered 413.
	MaxRequestBodyBytes int64 `mapstructure:"max_request_body_bytes"`
	// MaxConcurrentRequests caps the completions in progress (counted from
	// arrival); past it a completion gets 429 with Retry-After (0: no cap).
	MaxConcurrentRequests int `mapstructure:"max_concurrent_requests"`
	// Model is the model the engine serves (its --model): the model label
	// of requests that name none, and of the model facts.
	Model string `mapstructure:"model"`
	// ServedModels are the models a request may name besides none and
	// "default_model"; another is answered 404 model_not_found by the
	// proxy and never reaches the engine (mlx_lm would unload its model to
	// load it). Default: Model. "*" lets every name through.
	ServedModels []string `mapstructure:"served_models"`
	// AllowAdapters and AllowDraftModel let requests carry `adapters` and
	// `draft_model`, which make mlx_lm load other weights (default: 400).
	AllowAdapters   bool `mapstructure:"allow_adapters"`
	AllowDraftModel bool `mapstructure:"allow_draft_model"`
	// ModelConfig locates the model's config.json: a file, a model
	// directory or a Hugging Face repo id. Default: Model.
	ModelConfig string `mapstructure:"model_config"`
	// HFHubCache is the Hugging Face hub cache for repo ids. Default:
	// $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub.
	HFHubCache string `mapstructure:"hf_hub_cache"`
	// MaxModelLabelValues and MaxToolLabelValues cap the distinct values
	// of the model and tool labels; past them a value becomes "other".
	MaxModelLabelValues int `mapstructure:"max_model_label_values"`
	MaxToolLabelValues  int `mapstructure:"max_tool_label_values"`
	// UpstreamProbeInterval is how often GET /health of the engine sets
	// mlx_up.
	UpstreamProbeInterval time.Duration `mapstructure:"upstream_probe_interval"`
	// DefaultTemperature is mlx_temperature for requests without one: the
	// engine's --temp.
	DefaultTemperature float64 `mapstructure:"default_temperature"`
	// Confidence configures how logprobs are obtained and scored.
	Confidence ConfidenceConfig `mapstructure:"confidence"`
	// Heuristics configures the hallucination heuristics.
	Heuristics HeuristicsConfig `mapstructure:"heuristics"`
	// Traces: what the request spans carry and how many may wait for the
	// traces pipeline (the mlx_proxy receiver). Spans are made only while
	// that receiver runs in a pipeline.
	Traces proxy.TraceConfig `mapstructure:"traces"`
	// AccessLog: how many access log records may wait for the logs
	// pipeline (the mlx_proxy receiver).
	AccessLog AccessLogConfig `mapstructure:"access_log"`
	// Live: the live stream for VeloBenchmark (the mlx_proxy receiver with
	// records: live). Records are made only while that receiver runs.
	Live proxy.LiveConfig `mapstructure:"live"`
}

// AccessLogConfig bounds the access log's hand-over queue.
type AccessLogConfig struct {
	QueueSize int `mapstructure:"queue_size"`
}

// ConfidenceConfig says when the proxy asks the engine for logprobs and how
// it scores them.
type ConfidenceConfig struct {
	// TopLogprobs is the top-N asked for when the client did not ask:
	// injected into non-streamed completion requests (and removed from
	// the answer) and into destreamed ones. 0: never ask.
	TopLogprobs int `mapstructure:"top_logprobs"`
	// DestreamFraction is the share (0..1) of streamed chat requests run
	// non-streamed to score them, and re-emitted to the client as a stream.
	DestreamFraction float64 `mapstructure:"destream_fraction"`
	// LowConfidenceThreshold: tokens below it are low-confidence tokens;
	// an answer whose mean is below it is a low-confidence answer.
	LowConfidenceThreshold float64 `mapstructure:"low_confidence_threshold"`
	// ScoringQueue is how many finished answers may wait to be scored;
	// past it answers go unscored (mlx_scoring_dropped_total).
	ScoringQueue int `mapstructure:"scoring_queue"`
}

// HeuristicsConfig configures the hallucination heuristics.
type HeuristicsConfig struct {
	// FlagThreshold: answers whose risk is above it count in
	// mlx_hallucination_flag_total.
	FlagThreshold float64 `mapstructure:"flag_threshold"`
}

// TimeoutsConfig bounds the waits of the proxy.
type TimeoutsConfig struct {
	// ReadHeader: how long a client may take to send its request headers.
	ReadHeader time.Duration `mapstructure:"read_header"`
	// UpstreamResponseHeader: how long to wait for the engine's response
	// headers; 0 means no limit. mlx_lm sends a non-streamed answer's
	// headers only with the whole answer, so this covers a generation.
	UpstreamResponseHeader time.Duration `mapstructure:"upstream_response_header"`
	// Idle: how long an idle client keep-alive connection stays open.
	Idle time.Duration `mapstructure:"idle"`
	// Shutdown: how long requests in progress may go on when the collector
	// stops.
	Shutdown time.Duration `mapstructure:"shutdown"`
	// BodyRead: how long a client may take to send its request body; a
	// slower one gets 408 (0: no limit).
	BodyRead time.Duration `mapstructure:"body_read"`
	// StreamStall: an engine stream with no bytes for this long is ended
	// (the client gets an error event and [DONE]) and its request
	// cancelled (0: never).
	StreamStall time.Duration `mapstructure:"stream_stall"`
	// ClientWrite: a client that does not take a write for this long (it
	// stopped reading) is cut off (0: never).
	ClientWrite time.Duration `mapstructure:"client_write"`
}

// Validate checks the configuration; the collector calls it at startup and
// in `mlx-otelcol validate`.
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
	if c.Upstream == "" {
		errs = append(errs, errors.New("upstream: must be set (mlx_lm.server's base URL, e.g. http://127.0.0.1:8081)"))
	} else if u, err := url.Parse(c.Upstream); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("upstream: %q is not an http(s) URL", c.Upstream))
	}
	if c.MaxRequestBodyBytes <= 0 {
		errs = append(errs, fmt.Errorf("max_request_body_bytes: must be positive, got %d", c.MaxRequestBodyBytes))
	}
	if c.MaxConcurrentRequests < 0 {
		errs = append(errs, fmt.Errorf("max_concurrent_requests: must not be negative, got %d", c.MaxConcurrentRequests))
	}
	if c.Timeouts.StreamStall < 0 || c.Timeouts.ClientWrite < 0 {
		errs = append(errs, fmt.Errorf("timeouts.stream_stall and timeouts.client_write: must not be negative"))
	}
	if c.Timeouts.BodyRead < 0 {
		errs = append(errs, fmt.Errorf("timeouts.body_read: must not be negative, got %s", c.Timeouts.BodyRead))
	}
	if c.MaxModelLabelValues < 1 {
		errs = append(errs, fmt.Errorf("max_model_label_values: must be at least 1, got %d", c.MaxModelLabelValues))
	}
	if c.MaxToolLabelValues < 1 {
		errs = append(errs, fmt.Errorf("max_tool_label_values: must be at least 1, got %d", c.MaxToolLabelValues))
	}
	if c.UpstreamProbeInterval <= 0 {
		errs = append(errs, fmt.Errorf("upstream_probe_interval: must be positive, got %s", c.UpstreamProbeInterval))
	}
	if c.DefaultTemperature < 0 {
		errs = append(errs, fmt.Errorf("default_temperature: must not be negative, got %g", c.DefaultTemperature))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"timeouts.read_header", c.Timeouts.ReadHeader},
		{"timeouts.idle", c.Timeouts.Idle},
		{"timeouts.shutdown", c.Timeouts.Shutdown},
	} {
		if d.v <= 0 {
			errs = append(errs, fmt.Errorf("%s: must be positive, got %s", d.name, d.v))
		}
	}
	errs = append(errs, c.Confidence.validate()...)
	if err := c.Traces.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("traces: %w", err))
	}
	if err := c.Live.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("live: %w", err))
	}
	if c.AccessLog.QueueSize < 1 {
		errs = append(errs, fmt.Errorf("access_log.queue_size: must be at least 1, got %d", c.AccessLog.QueueSize))
	}
	if t := c.Heuristics.FlagThreshold; !(t >= 0 && t < 1) {
		errs = append(errs, fmt.Errorf("heuristics.flag_threshold: must be in [0, 1), got %g", t))
	}
	if c.Timeouts.UpstreamResponseHeader < 0 {
		errs = append(errs, fmt.Errorf("timeouts.upstream_response_header: must not be negative (0 = no limit), got %s", c.Timeouts.UpstreamResponseHeader))
	}
	return errors.Join(errs...)
}

// maxTopLogprobs is the largest top_logprobs every mlx_lm release with the
// current layout accepts (0.30.x: 1-10; 0.31 also 11).
const maxTopLogprobs = 10

func (c *ConfidenceConfig) validate() []error {
	var errs []error
	if c.TopLogprobs < 0 || c.TopLogprobs > maxTopLogprobs {
		errs = append(errs, fmt.Errorf("confidence.top_logprobs: must be 0 (never ask) to %d, got %d", maxTopLogprobs, c.TopLogprobs))
	}
	if f := c.DestreamFraction; !(f >= 0 && f <= 1) {
		errs = append(errs, fmt.Errorf("confidence.destream_fraction: must be in [0, 1], got %g", f))
	} else if f > 0 && c.TopLogprobs == 0 {
		errs = append(errs, errors.New("confidence.destream_fraction: needs confidence.top_logprobs above 0 (a destreamed request is scored from the logprobs the proxy asks for)"))
	}
	if t := c.LowConfidenceThreshold; !(t > 0 && t <= 1) {
		errs = append(errs, fmt.Errorf("confidence.low_confidence_threshold: must be in (0, 1], got %g", t))
	}
	if c.ScoringQueue < 1 {
		errs = append(errs, fmt.Errorf("confidence.scoring_queue: must be at least 1, got %d", c.ScoringQueue))
	}
	return errs
}

// proxyConfig is the configuration of the proxy itself.
func (c *Config) proxyConfig() proxy.Config {
	traces := c.Traces
	traces.Hide = proxy.HideFromEnv(os.Getenv)
	return proxy.Config{
		Upstream:                      c.Upstream,
		ReadHeaderTimeout:             c.Timeouts.ReadHeader,
		UpstreamResponseHeaderTimeout: c.Timeouts.UpstreamResponseHeader,
		IdleTimeout:                   c.Timeouts.Idle,
		ShutdownTimeout:               c.Timeouts.Shutdown,
		MaxRequestBodyBytes:           c.MaxRequestBodyBytes,
		BodyReadTimeout:               c.Timeouts.BodyRead,
		StreamStallTimeout:            c.Timeouts.StreamStall,
		ClientWriteTimeout:            c.Timeouts.ClientWrite,
		MaxConcurrentRequests:         c.MaxConcurrentRequests,
		Model:                         c.Model,
		ServedModels:                  c.ServedModels,
		AllowAdapters:                 c.AllowAdapters,
		AllowDraftModel:               c.AllowDraftModel,
		ModelConfig:                   c.ModelConfig,
		HFHubCache:                    c.HFHubCache,
		MaxModelLabelValues:           c.MaxModelLabelValues,
		MaxToolLabelValues:            c.MaxToolLabelValues,
		ProbeInterval:                 c.UpstreamProbeInterval,
		DefaultTemperature:            c.DefaultTemperature,
		TopLogprobs:                   c.Confidence.TopLogprobs,
		DestreamFraction:              c.Confidence.DestreamFraction,
		LowConfidenceThreshold:        c.Confidence.LowConfidenceThreshold,
		ScoringQueue:                  c.Confidence.ScoringQueue,
		HallucinationFlagThreshold:    c.Heuristics.FlagThreshold,
		Traces:                        traces,
		AccessLogQueue:                c.AccessLog.QueueSize,
		Live:                          c.Live,
		MetricsOnProxyPort:            c.MetricsOnProxyPort,
		MetricsBearerToken:            string(c.MetricsBearerToken),
	}
}
