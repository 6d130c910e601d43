package proxy

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"time"
)

// Config of one proxy. The mlx_proxy extension reads it from YAML as it is
// (the mapstructure keys below, at the top of its section); tests and
// benchmarks build it directly. The groups of settings (Timeouts,
// Confidence, Heuristics, AccessLog) are embedded, so their fields read as
// the proxy's own (cfg.ReadHeaderTimeout) while YAML nests them
// (timeouts.read_header).
type Config struct {
	// Upstream is the engine's base URL, e.g. http://127.0.0.1:8081.
	Upstream string `mapstructure:"upstream"`
	// Upstreams are several engines, each serving its models
	// (config_upstreams.go), set instead of Upstream; Routing says how a
	// request's engine is chosen among them. Not read from YAML here: the
	// extension reads `upstreams` (with each one's key as a secret and its
	// client TLS) and sets it.
	Upstreams []UpstreamConfig `mapstructure:"-"`
	Routing   Routing          `mapstructure:"routing"`
	// Timeouts bound the waits of the proxy.
	Timeouts `mapstructure:"timeouts"`
	// MaxRequestBodyBytes: a larger completion request body gets 413.
	// Other routes take no body.
	MaxRequestBodyBytes int64 `mapstructure:"max_request_body_bytes"`
	// MaxConcurrentRequests caps the requests in progress on every route
	// but /metrics, counted from arrival; past it a request gets 429 with
	// Retry-After before its body is read (0: no cap).
	MaxConcurrentRequests int `mapstructure:"max_concurrent_requests"`
	// MaxConcurrentRequestsPerClient caps those of one client: an API key
	// (wherever it calls from), or the address of a caller without one
	// (every loopback address as one); past it 429 likewise (0: no cap).
	// One client cannot take every slot, with slow bodies or otherwise.
	MaxConcurrentRequestsPerClient int `mapstructure:"max_concurrent_requests_per_client"`
	// Model is the model the engine serves (its --model): the model label
	// of requests that name none (or say "default_model"), and of the model
	// facts.
	Model string `mapstructure:"model"`
	// ServedModels are the models a request may name (besides none and
	// "default_model"); another gets the proxy's own 404 model_not_found
	// and never reaches the engine, which would unload its model to load
	// it. Empty: Model. AnyModel ("*") lets every name through.
	ServedModels []string `mapstructure:"served_models"`
	// AllowAdapters and AllowDraftModel let requests carry adapters and
	// draft_model, which make mlx_lm load other weights (off: 400).
	AllowAdapters   bool `mapstructure:"allow_adapters"`
	AllowDraftModel bool `mapstructure:"allow_draft_model"`
	// Requests bounds what one completion request may ask of the engine.
	Requests `mapstructure:"requests"`
	// Access says who may call the API and from where (keys at the top of
	// the section).
	Access `mapstructure:",squash"`
	// TrafficOrigins are origins a caller may claim in X-Mlx-Origin besides
	// the built-in user, judge, probe and bench (origin.go): each is a
	// value of the origin label of every request series.
	TrafficOrigins []string `mapstructure:"traffic_origins"`
	// ModelConfig locates config.json: a file, a model directory or a
	// Hugging Face repo id. Empty: Model.
	ModelConfig string `mapstructure:"model_config"`
	// HFHubCache is the Hugging Face hub cache for repo ids. Empty:
	// $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub.
	HFHubCache string `mapstructure:"hf_hub_cache"`
	// MaxModelLabelValues and MaxToolLabelValues cap the distinct values of
	// the model and tool labels; past the cap a value is "other".
	MaxModelLabelValues int `mapstructure:"max_model_label_values"`
	// Compat lists other servers' metric names the proxy also serves on
	// /metrics (vllm_compat.go): "vllm" adds the gauges gateways and
	// benchmarks read from a vLLM server. Empty: none, the default scrape
	// is unchanged.
	Compat             []string `mapstructure:"compat"`
	MaxToolLabelValues int      `mapstructure:"max_tool_label_values"`
	// ToolLabels, when set, are the only tool names that keep their label
	// value (every other is "other"), so no client can take the slots by
	// defining tools of its own.
	ToolLabels []string `mapstructure:"tool_labels"`
	// ProbeInterval is how often GET /health of the engine sets mlx_up.
	ProbeInterval time.Duration `mapstructure:"upstream_probe_interval"`
	// DefaultTemperature is mlx_temperature for a request without one
	// (mlx_lm's --temp, 0.0 unless changed).
	DefaultTemperature float64 `mapstructure:"default_temperature"`

	// Confidence says when the proxy asks the engine for logprobs and how
	// it scores them.
	Confidence `mapstructure:"confidence"`
	// Heuristics configures the hallucination heuristics.
	Heuristics `mapstructure:"heuristics"`

	// Traces says what the spans carry and how many may wait for export
	// (the mlx_proxy receiver's traces pipeline). Spans are made only while
	// that receiver runs in a pipeline.
	Traces TraceConfig `mapstructure:"traces"`
	// MetricsOnProxyPort serves /metrics on the proxy's own listener, as
	// the original did on :8080. Off, /metrics there is 404 and the series
	// are on ServeMetrics' listener only.
	MetricsOnProxyPort bool `mapstructure:"metrics_on_proxy_port"`
	// MetricsOpenMetrics answers a scraper that asks for OpenMetrics
	// (Prometheus does) in that format, with the series' units. Off by
	// default: OpenMetrics writes a histogram's integer bounds as floats
	// (le="1.0", not le="1"), which Prometheus before 3.0 stores as other
	// series than the classic text's, so turning it on under a running
	// Prometheus 2 splits every such bucket series in two.
	MetricsOpenMetrics bool `mapstructure:"metrics_open_metrics"`
	// MetricsBearerToken, when set, is required (Authorization: Bearer) on
	// /metrics wherever it is served. Not read from YAML here: the
	// extension reads it as a secret (metrics_bearer_token) and sets it.
	MetricsBearerToken string `mapstructure:"-"`
	// TLS, when set, serves the proxy's listener over HTTPS. Not read from
	// YAML here: the extension loads it (tls) and sets it.
	TLS *tls.Config `mapstructure:"-"`

	// AccessLog bounds the access log's hand-over queue.
	AccessLog `mapstructure:"access_log"`
	// Feedback bounds feedback from people (POST /v1/feedback, feedback.go).
	Feedback FeedbackConfig `mapstructure:"feedback"`
	// Live says what the live stream (for VeloBenchmark) carries. Records
	// are made only while the mlx_proxy receiver with records: live runs.
	Live LiveConfig `mapstructure:"live"`
}

// Timeouts bound the waits of the proxy (key `timeouts`).
type Timeouts struct {
	// ReadHeaderTimeout bounds how long a client may take to send its
	// request headers.
	ReadHeaderTimeout time.Duration `mapstructure:"read_header"`
	// UpstreamResponseHeaderTimeout bounds the wait for the engine's
	// response headers (0: no limit). mlx_lm sends a non-streamed answer's
	// headers only with the whole answer, so this must cover a whole
	// generation.
	UpstreamResponseHeaderTimeout time.Duration `mapstructure:"upstream_response_header"`
	// IdleTimeout closes idle client keep-alive connections.
	IdleTimeout time.Duration `mapstructure:"idle"`
	// ShutdownTimeout is how long requests in progress may go on when the
	// proxy stops; then they are cut.
	ShutdownTimeout time.Duration `mapstructure:"shutdown"`
	// BodyReadTimeout bounds reading a request body, on every route, from
	// the request's arrival: a completion's client slower than that gets
	// 408 and its connection is closed; a body no route reads is dropped
	// with its connection (0: no bound).
	BodyReadTimeout time.Duration `mapstructure:"body_read"`
	// StreamStallTimeout: an engine stream with no bytes for this long
	// (keepalive comments count) is ended: the client gets an SSE error
	// event and [DONE], the engine's request is cancelled (0: never).
	StreamStallTimeout time.Duration `mapstructure:"stream_stall"`
	// ClientWriteTimeout: a client that takes longer than this (up to an
	// eighth more, stall.go) to accept a write (it stopped reading) is cut
	// off, and the engine's request cancelled (0: never).
	ClientWriteTimeout time.Duration `mapstructure:"client_write"`
}

// Confidence says when the proxy asks the engine for logprobs and how it
// scores them (key `confidence`).
type Confidence struct {
	// TopLogprobs is the top-N the proxy asks the engine for when the
	// client did not ask for logprobs: injected into non-streamed
	// completion requests (and taken out of the answer again) and into
	// destreamed ones. 0: the proxy never asks (no injection, no destreaming).
	TopLogprobs int `mapstructure:"top_logprobs"`
	// DestreamFraction is the share (0..1) of streamed chat requests that
	// go upstream non-streamed, so that their logprobs can be scored, and
	// reach the client re-emitted as a stream.
	//
	// For an engine that does not send logprobs in stream chunks, as
	// mlx_lm 0.31.3 does not: with ScoreStreams its streams are not scored
	// (the proxy finds out from the first one, stream_logprobs.go), and a
	// destreamed one is scored at the cost of its client seeing the answer
	// only when it is whole. Keep it 0 for an engine that streams them.
	DestreamFraction float64 `mapstructure:"destream_fraction"`
	// ScoreStreams: streamed completions (chat and text) that did not ask
	// for logprobs get them asked for too (TopLogprobs), are scored from
	// their chunks, and each chunk reaches the client without them, byte
	// for byte as the engine would have sent it unasked. While the engine
	// sends none in its chunks the proxy stops asking and tries again
	// every 10 minutes. Default true.
	ScoreStreams bool `mapstructure:"score_streams"`
	// LowConfidenceThreshold: a token whose probability is below it is a
	// low-confidence token; a response whose mean is below it is a
	// low-confidence response.
	LowConfidenceThreshold float64 `mapstructure:"low_confidence_threshold"`
	// ScoringQueue is how many finished answers may wait to be scored;
	// past it an answer is not scored (and counted as dropped,
	// mlx_scoring_dropped_total), so scoring never holds up a request.
	ScoringQueue int `mapstructure:"scoring_queue"`
}

// Heuristics configures the hallucination heuristics (key `heuristics`).
type Heuristics struct {
	// HallucinationFlagThreshold: an answer whose risk is above it counts
	// in mlx_hallucination_flag_total.
	HallucinationFlagThreshold float64 `mapstructure:"flag_threshold"`
}

// AccessLog bounds the access log's hand-over queue (key `access_log`).
type AccessLog struct {
	// AccessLogQueue is how many access log records may wait for export
	// (the mlx_proxy receiver's logs pipeline); past it a record is
	// dropped (mlx_access_log_dropped_total).
	AccessLogQueue int `mapstructure:"queue_size"`
}

// DefaultConfig is the configuration the extension starts from.
func DefaultConfig() Config {
	return Config{
		Upstream: "http://127.0.0.1:8081",
		// One failed connection says no engine listens there; the first
		// ejection is short, so an engine back from a restart takes
		// requests again within seconds (proxy/upstream, Ejection).
		Routing: Routing{Affinity: AffinityConversation, EjectAfterFailures: 1, EjectBase: 5 * time.Second, EjectMax: 5 * time.Minute},
		Timeouts: Timeouts{
			ReadHeaderTimeout:             10 * time.Second,
			UpstreamResponseHeaderTimeout: 10 * time.Minute,
			IdleTimeout:                   2 * time.Minute,
			ShutdownTimeout:               5 * time.Second,
			BodyReadTimeout:               30 * time.Second,
			StreamStallTimeout:            2 * time.Minute,
			ClientWriteTimeout:            time.Minute,
		},
		MaxRequestBodyBytes:   8 << 20,
		MaxConcurrentRequests: 64,
		// Half: a benchmark on this machine or a busy gateway key may
		// use as many as mlx_lm decodes at once (mlx_lm v0.31 server.py,
		// --decode-concurrency 32), and the others keep the rest.
		MaxConcurrentRequestsPerClient: 32,
		Requests: Requests{
			MaxTokens:          32768,
			MaxStopSequences:   16,
			MaxStopBytes:       256,
			ChatTemplateKwargs: []string{"enable_thinking"},
		},
		Access: Access{
			MaxConnections:          512,
			MaxConnectionsPerClient: 128,
			MaxHeaderBytes:          64 << 10,
			ModelsCacheTTL:          5 * time.Second,
		},
		MaxModelLabelValues: 8,
		MaxToolLabelValues:  32,
		ProbeInterval:       15 * time.Second,
		Confidence: Confidence{
			TopLogprobs:            3,
			ScoreStreams:           true,
			LowConfidenceThreshold: 0.5,
			ScoringQueue:           256,
		},
		Heuristics: Heuristics{HallucinationFlagThreshold: 0.5},
		Traces: TraceConfig{
			CaptureContent:  true,
			MaxContentBytes: 256 << 10,
			QueueSize:       512,
		},
		MetricsOnProxyPort: true,
		AccessLog:          AccessLog{AccessLogQueue: 1024},
		Feedback:           FeedbackConfig{MaxTraces: 10000, MaxCommentBytes: 1000, QueueSize: 256},
		Live: LiveConfig{
			IncludeTokens:  true,
			StatusInterval: 10 * time.Second,
			QueueSize:      8192,
		},
	}
}

// maxTopLogprobs is the largest top_logprobs every mlx_lm release with the
// current layout accepts (0.30.x: 1-10; 0.31 also 11).
const maxTopLogprobs = 10

// Validate checks the settings. Errors name the YAML keys.
func (c *Config) Validate() error {
	var errs []error
	if len(c.Upstreams) > 0 {
		// validateUpstreams
	} else if c.Upstream == "" {
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
	if c.MaxConcurrentRequestsPerClient < 0 {
		errs = append(errs, fmt.Errorf("max_concurrent_requests_per_client: must not be negative, got %d", c.MaxConcurrentRequestsPerClient))
	}
	if c.StreamStallTimeout < 0 || c.ClientWriteTimeout < 0 {
		errs = append(errs, fmt.Errorf("timeouts.stream_stall and timeouts.client_write: must not be negative"))
	}
	if c.BodyReadTimeout < 0 {
		errs = append(errs, fmt.Errorf("timeouts.body_read: must not be negative, got %s", c.BodyReadTimeout))
	}
	if c.MaxModelLabelValues < 1 {
		errs = append(errs, fmt.Errorf("max_model_label_values: must be at least 1, got %d", c.MaxModelLabelValues))
	}
	for _, name := range c.Compat {
		if name != CompatVLLM {
			errs = append(errs, fmt.Errorf("compat: %q is not one of [%s]", name, CompatVLLM))
		}
	}
	if c.MaxToolLabelValues < 1 {
		errs = append(errs, fmt.Errorf("max_tool_label_values: must be at least 1, got %d", c.MaxToolLabelValues))
	}
	if c.ProbeInterval <= 0 {
		errs = append(errs, fmt.Errorf("upstream_probe_interval: must be positive, got %s", c.ProbeInterval))
	}
	if c.DefaultTemperature < 0 {
		errs = append(errs, fmt.Errorf("default_temperature: must not be negative, got %g", c.DefaultTemperature))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"timeouts.read_header", c.ReadHeaderTimeout},
		{"timeouts.idle", c.IdleTimeout},
		{"timeouts.shutdown", c.ShutdownTimeout},
	} {
		if d.v <= 0 {
			errs = append(errs, fmt.Errorf("%s: must be positive, got %s", d.name, d.v))
		}
	}
	errs = append(errs, c.validateUpstreams()...)
	errs = append(errs, c.Confidence.validate()...)
	errs = append(errs, c.Requests.validate()...)
	errs = append(errs, c.Access.validate()...)
	errs = append(errs, validateOrigins(c.TrafficOrigins)...)
	errs = append(errs, c.Feedback.validate()...)
	if err := c.Traces.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("traces: %w", err))
	}
	if err := c.Live.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("live: %w", err))
	}
	if c.AccessLogQueue < 1 {
		errs = append(errs, fmt.Errorf("access_log.queue_size: must be at least 1, got %d", c.AccessLogQueue))
	}
	if t := c.HallucinationFlagThreshold; !(t >= 0 && t < 1) {
		errs = append(errs, fmt.Errorf("heuristics.flag_threshold: must be in [0, 1), got %g", t))
	}
	if c.UpstreamResponseHeaderTimeout < 0 {
		errs = append(errs, fmt.Errorf("timeouts.upstream_response_header: must not be negative (0 = no limit), got %s", c.UpstreamResponseHeaderTimeout))
	}
	return errors.Join(errs...)
}

func (c *Confidence) validate() []error {
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

// modelLabel is the label of requests that do not name a model.
func (c Config) modelLabel() string {
	if c.Model != "" {
		return c.Model
	}
	return defaultModelName
}
