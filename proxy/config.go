package proxy

import "time"

// Config of one proxy. The collector extension fills it from YAML; tests
// and benchmarks build it directly.
type Config struct {
	// Upstream is the engine's base URL, e.g. http://127.0.0.1:8081.
	Upstream string
	// ReadHeaderTimeout bounds how long a client may take to send its
	// request headers.
	ReadHeaderTimeout time.Duration
	// UpstreamResponseHeaderTimeout bounds the wait for the engine's
	// response headers (0: no limit). mlx_lm sends a non-streamed answer's
	// headers only with the whole answer, so this must cover a whole
	// generation.
	UpstreamResponseHeaderTimeout time.Duration
	// IdleTimeout closes idle client keep-alive connections.
	IdleTimeout time.Duration
	// ShutdownTimeout is how long requests in progress may go on when the
	// proxy stops; then they are cut.
	ShutdownTimeout time.Duration
	// MaxRequestBodyBytes: a larger request body gets 413.
	MaxRequestBodyBytes int64
	// BodyReadTimeout bounds reading a request body: a client slower than
	// that gets 408 and its connection is closed (0: no bound).
	BodyReadTimeout time.Duration
	// StreamStallTimeout: an engine stream with no bytes for this long
	// (keepalive comments count) is ended: the client gets an SSE error
	// event and [DONE], the engine's request is cancelled (0: never).
	StreamStallTimeout time.Duration
	// ClientWriteTimeout: a client that takes longer than this to accept a
	// write (it stopped reading) is cut off, and the engine's request
	// cancelled (0: never).
	ClientWriteTimeout time.Duration
	// MaxConcurrentRequests caps the completion requests in progress; past
	// it a request gets 429 with Retry-After before its body is read (0: no
	// cap).
	MaxConcurrentRequests int
	// Model is the model the engine serves: the model label of requests
	// that name none (or say "default_model"), and of the model facts.
	Model string
	// ServedModels are the models a request may name (besides none and
	// "default_model"); another gets the proxy's own 404 model_not_found
	// and never reaches the engine, which would load it. Empty: Model.
	// AnyModel ("*") lets every name through.
	ServedModels []string
	// AllowAdapters and AllowDraftModel let requests carry adapters and
	// draft_model, which make mlx_lm load other weights (off: 400).
	AllowAdapters, AllowDraftModel bool
	// ModelConfig locates config.json: a file, a model directory or a
	// Hugging Face repo id. Empty: Model.
	ModelConfig string
	// HFHubCache is the Hugging Face hub cache ("" = the usual default).
	HFHubCache string
	// MaxModelLabelValues and MaxToolLabelValues cap the distinct values of
	// the model and tool labels; past the cap a value is "other".
	MaxModelLabelValues int
	MaxToolLabelValues  int
	// ProbeInterval is how often the engine is probed for mlx_up.
	ProbeInterval time.Duration
	// DefaultTemperature is mlx_temperature for a request without one
	// (mlx_lm's --temp, 0.0 unless changed).
	DefaultTemperature float64

	// TopLogprobs is the top-N the proxy asks the engine for when the
	// client did not ask for logprobs: injected into non-streamed
	// completion requests (and taken out of the answer again) and into
	// destreamed ones. 0: the proxy never asks (no injection, no destreaming).
	TopLogprobs int
	// DestreamFraction is the share (0..1) of streamed chat requests that
	// go upstream non-streamed, so that their logprobs can be scored, and
	// reach the client re-emitted as a stream.
	DestreamFraction float64
	// LowConfidenceThreshold: a token whose probability is below it is a
	// low-confidence token; a response whose mean is below it is a
	// low-confidence response.
	LowConfidenceThreshold float64
	// HallucinationFlagThreshold: an answer whose risk is above it counts
	// in mlx_hallucination_flag_total.
	HallucinationFlagThreshold float64
	// ScoringQueue is how many finished answers may wait to be scored;
	// past it an answer is not scored (and counted as dropped), so scoring
	// never holds up a request.
	ScoringQueue int

	// Traces says what the spans carry and how many may wait for export.
	Traces TraceConfig
	// MetricsOnProxyPort serves /metrics on the proxy's own listener, as
	// the original did on :8080. Off, /metrics there is 404 and the series
	// are on ServeMetrics' listener only.
	MetricsOnProxyPort bool
	// MetricsBearerToken, when set, is required (Authorization: Bearer) on
	// /metrics wherever it is served.
	MetricsBearerToken string

	// AccessLogQueue is how many access log records may wait for export;
	// past it a record is dropped (mlx_access_log_dropped_total).
	AccessLogQueue int
	// Live says what the live stream (for VeloBenchmark) carries.
	Live LiveConfig
}

// DefaultConfig is the configuration the extension starts from.
func DefaultConfig() Config {
	return Config{
		Upstream:                      "http://127.0.0.1:8081",
		ReadHeaderTimeout:             10 * time.Second,
		UpstreamResponseHeaderTimeout: 10 * time.Minute,
		IdleTimeout:                   2 * time.Minute,
		ShutdownTimeout:               5 * time.Second,
		MaxRequestBodyBytes:           32 << 20,
		BodyReadTimeout:               30 * time.Second,
		StreamStallTimeout:            2 * time.Minute,
		ClientWriteTimeout:            time.Minute,
		MaxConcurrentRequests:         64,
		MaxModelLabelValues:           8,
		MaxToolLabelValues:            32,
		ProbeInterval:                 15 * time.Second,
		TopLogprobs:                   3,
		LowConfidenceThreshold:        0.5,
		HallucinationFlagThreshold:    0.5,
		ScoringQueue:                  256,
		Traces: TraceConfig{
			CaptureContent:  true,
			MaxContentBytes: 256 << 10,
			QueueSize:       512,
		},
		MetricsOnProxyPort: true,
		AccessLogQueue:     1024,
		Live: LiveConfig{
			IncludeTokens:  true,
			StatusInterval: 10 * time.Second,
			QueueSize:      8192,
		},
	}
}

// modelLabel is the label of requests that do not name a model.
func (c Config) modelLabel() string {
	if c.Model != "" {
		return c.Model
	}
	return defaultModelName
}
