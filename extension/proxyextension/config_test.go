package proxyextension

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"

	"github.com/mlx-otelcol/mlx-otelcol/internal/configtest"
	"github.com/mlx-otelcol/mlx-otelcol/proxy"
)

func TestDefaultConfig(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	require.NoError(t, componenttest.CheckConfigStruct(cfg))
	require.NoError(t, confmap.Validate(cfg))
	assert.Equal(t, "0.0.0.0:8080", cfg.Endpoint, "the original proxy's port")
	assert.Equal(t, "http://127.0.0.1:8081", cfg.Upstream)
	assert.Equal(t, 15*time.Second, cfg.UpstreamProbeInterval, "the original probed every 15 s")
	assert.Equal(t, 10*time.Minute, cfg.Timeouts.UpstreamResponseHeader, "covers a non-streamed generation")
	assert.Equal(t, 3, cfg.Confidence.TopLogprobs, "the original's MLX_LOGPROBS=3")
	assert.Zero(t, cfg.Confidence.DestreamFraction, "streams are relayed untouched unless asked")
	assert.Equal(t, 0.5, cfg.Confidence.LowConfidenceThreshold)
	assert.Equal(t, 0.5, cfg.Heuristics.FlagThreshold)

	empty, err := configtest.Load[*Config](t, NewFactory(), "")
	require.NoError(t, err)
	assert.Equal(t, cfg, empty, "an empty section is the default")
}

func TestFullConfig(t *testing.T) {
	cfg, err := configtest.Load[*Config](t, NewFactory(), "full")
	require.NoError(t, err)
	assert.Equal(t, &Config{
		Endpoint:           "127.0.0.1:18080",
		MetricsEndpoint:    "127.0.0.1:19108",
		MetricsOnProxyPort: false,
		MetricsBearerToken: "s3cret",
		Upstream:           "http://127.0.0.1:18081",
		Timeouts: TimeoutsConfig{ReadHeader: 5 * time.Second, UpstreamResponseHeader: 0, Idle: 30 * time.Second, Shutdown: 2 * time.Second, BodyRead: 10 * time.Second,
			StreamStall: 45 * time.Second, ClientWrite: 20 * time.Second},
		MaxRequestBodyBytes:   1 << 20,
		MaxConcurrentRequests: 16,
		Model:                 "mlx-community/Qwen3-4B-4bit",
		ServedModels:          []string{"mlx-community/Qwen3-4B-4bit", "mlx-community/Qwen3-1.7B-4bit"},
		AllowDraftModel:       true,
		ModelConfig:           "/models/qwen3/config.json",
		HFHubCache:            "/cache/hub",
		MaxModelLabelValues:   3,
		MaxToolLabelValues:    5,
		UpstreamProbeInterval: 3 * time.Second,
		DefaultTemperature:    0.7,
		Confidence:            ConfidenceConfig{TopLogprobs: 5, DestreamFraction: 0.05, LowConfidenceThreshold: 0.4, ScoringQueue: 16},
		Heuristics:            HeuristicsConfig{FlagThreshold: 0.6},
		Traces:                proxy.TraceConfig{CaptureContent: false, MaxContentBytes: 4096, QueueSize: 64, Node: "rank0"},
		AccessLog:             AccessLogConfig{QueueSize: 32},
		Live:                  proxy.LiveConfig{IncludeTokens: false, ModelID: "qwen3-4b", Topology: "tp2", StatusInterval: 5 * time.Second, QueueSize: 100},
	}, cfg)
	pc := cfg.proxyConfig()
	assert.Equal(t, cfg.Upstream, pc.Upstream)
	assert.Equal(t, 5*time.Second, pc.ReadHeaderTimeout)
	assert.Equal(t, time.Duration(0), pc.UpstreamResponseHeaderTimeout)
	assert.Equal(t, 2*time.Second, pc.ShutdownTimeout)
	assert.Equal(t, "/models/qwen3/config.json", pc.ModelConfig)
	assert.Equal(t, 10*time.Second, pc.BodyReadTimeout)
	assert.Equal(t, 45*time.Second, pc.StreamStallTimeout)
	assert.Equal(t, 20*time.Second, pc.ClientWriteTimeout)
	assert.Equal(t, 16, pc.MaxConcurrentRequests)
	assert.Equal(t, cfg.ServedModels, pc.ServedModels)
	assert.True(t, pc.AllowDraftModel)
	assert.False(t, pc.AllowAdapters)
	assert.Equal(t, 5, pc.MaxToolLabelValues)
	assert.Equal(t, 0.7, pc.DefaultTemperature)
	assert.Equal(t, 5, pc.TopLogprobs)
	assert.Equal(t, 0.05, pc.DestreamFraction)
	assert.Equal(t, 64, pc.Traces.QueueSize)
	assert.Equal(t, 32, pc.AccessLogQueue)
	assert.Equal(t, "tp2", pc.Live.Topology)
	assert.Equal(t, 0.4, pc.LowConfidenceThreshold)
	assert.Equal(t, 16, pc.ScoringQueue)
	assert.Equal(t, 0.6, pc.HallucinationFlagThreshold)
	assert.False(t, pc.MetricsOnProxyPort)
	assert.Equal(t, "s3cret", pc.MetricsBearerToken)
}

func TestInvalidConfigs(t *testing.T) {
	for name, want := range map[string][]string{
		"bad_endpoint": {`endpoint: "8080" is not host:port`},
		"bad_upstream": {`upstream: "127.0.0.1:8081" is not an http(s) URL`},
		"zero_caps": {
			"max_model_label_values: must be at least 1, got 0",
			"max_tool_label_values: must be at least 1, got 0",
			"max_request_body_bytes: must be positive, got 0",
		},
		"bad_timeouts": {
			"timeouts.read_header: must be positive, got 0s",
			"timeouts.upstream_response_header: must not be negative",
			"upstream_probe_interval: must be positive, got 0s",
		},
		"unknown_key":       {"has invalid keys: upstrem"},
		"metrics_nowhere":   {"metrics_on_proxy_port: false needs metrics_endpoint"},
		"metrics_same_port": {"metrics_endpoint: must differ from endpoint"},
		"bad_confidence": {
			"confidence.top_logprobs: must be 0 (never ask) to 10, got 11",
			"confidence.destream_fraction: must be in [0, 1], got 1.5",
			"confidence.low_confidence_threshold: must be in (0, 1], got 0",
			"confidence.scoring_queue: must be at least 1, got 0",
			"heuristics.flag_threshold: must be in [0, 1), got 1",
		},
		"destream_without_logprobs": {"confidence.destream_fraction: needs confidence.top_logprobs above 0"},
		"bad_traces": {
			"traces: max_content_bytes: must not be negative, got -1",
			"queue_size: must be at least 1, got 0",
			"access_log.queue_size: must be at least 1, got 0",
			"live: status_interval: must be positive, got 0s",
		},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := configtest.Load[*Config](t, NewFactory(), name)
			require.Error(t, err)
			for _, w := range want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}
