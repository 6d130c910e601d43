package proxyextension

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/mlx-otelcol/mlx-otelcol/proxy"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/configtest"
)

func TestDefaultConfig(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	require.NoError(t, componenttest.CheckConfigStruct(cfg))
	require.NoError(t, confmap.Validate(cfg))
	assert.Equal(t, "0.0.0.0:8080", cfg.Endpoint, "the original proxy's port")
	assert.Equal(t, "http://127.0.0.1:8081", cfg.Upstream)
	assert.Equal(t, 15*time.Second, cfg.ProbeInterval, "the original probed every 15 s")
	assert.Equal(t, 10*time.Minute, cfg.UpstreamResponseHeaderTimeout, "covers a non-streamed generation")
	assert.Equal(t, 3, cfg.Confidence.TopLogprobs, "the original's MLX_LOGPROBS=3")
	assert.Zero(t, cfg.Confidence.DestreamFraction, "streams are not destreamed unless asked")
	assert.True(t, cfg.Confidence.ScoreStreams, "streams are scored from their chunks while the engine streams logprobs")
	assert.Equal(t, 0.5, cfg.Confidence.LowConfidenceThreshold)
	assert.Equal(t, 0.5, cfg.HallucinationFlagThreshold)

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
		MetricsBearerToken: "s3cret",
		APIKeys:            "alice=0123456789abcdef0123,bob=fedcba9876543210fedc",
		ProxySettings: ProxySettings{
			ToolLabels: []string{"get_weather"},
			Requests: proxy.Requests{MaxTokens: 4096, MaxStopSequences: 4, MaxStopBytes: 64,
				ChatTemplateKwargs: []string{"enable_thinking", "reasoning_effort"}, AllowXTC: true},
			MaxConcurrentRequestsPerClient: 4,
			Access: proxy.Access{AllowUnauthenticatedRemote: true, RequireKeyOnLoopback: true,
				AllowedOrigins: []string{"http://localhost:3000"}, AllowedHosts: []string{"mlx.lan"},
				MaxConnections: 100, MaxConnectionsPerClient: 10, MaxHeaderBytes: 16384, ModelsCacheTTL: time.Second},
			TrafficOrigins:     []string{"ci"},
			Feedback:           proxy.FeedbackConfig{MaxTraces: 500, MaxCommentBytes: 200, QueueSize: 8},
			MetricsOnProxyPort: false,
			MetricsOpenMetrics: true,
			Upstream:           "http://127.0.0.1:18081",
			Routing:            proxy.Routing{Affinity: "none", EjectAfterFailures: 2, EjectBase: time.Second, EjectMax: time.Minute},
			Timeouts: proxy.Timeouts{ReadHeaderTimeout: 5 * time.Second, UpstreamResponseHeaderTimeout: 0, IdleTimeout: 30 * time.Second, ShutdownTimeout: 2 * time.Second, BodyReadTimeout: 10 * time.Second,
				StreamStallTimeout: 45 * time.Second, ClientWriteTimeout: 20 * time.Second},
			MaxRequestBodyBytes:   1 << 20,
			MaxConcurrentRequests: 16,
			Model:                 "mlx-community/Qwen3-4B-4bit",
			ServedModels:          []string{"mlx-community/Qwen3-4B-4bit", "mlx-community/Qwen3-1.7B-4bit"},
			AllowDraftModel:       true,
			ModelConfig:           "/models/qwen3/config.json",
			HFHubCache:            "/cache/hub",
			MaxModelLabelValues:   3,
			Compat:                []string{proxy.CompatVLLM},
			MaxToolLabelValues:    5,
			ProbeInterval:         3 * time.Second,
			DefaultTemperature:    0.7,
			Confidence:            proxy.Confidence{TopLogprobs: 5, DestreamFraction: 0.05, ScoreStreams: false, LowConfidenceThreshold: 0.4, ScoringQueue: 16},
			Heuristics:            proxy.Heuristics{HallucinationFlagThreshold: 0.6},
			Traces:                proxy.TraceConfig{CaptureContent: false, MaxContentBytes: 4096, QueueSize: 64, Node: "rank0"},
			AccessLog:             proxy.AccessLog{AccessLogQueue: 32},
			Live:                  proxy.LiveConfig{IncludeTokens: false, ModelID: "qwen3-4b", Topology: "tp2", StatusInterval: 5 * time.Second, QueueSize: 100},
		},
	}, cfg)
	pc, err := cfg.proxyConfig()
	require.NoError(t, err)
	assert.Equal(t, []proxy.APIKey{{Name: "alice", Key: "0123456789abcdef0123"}, {Name: "bob", Key: "fedcba9876543210fedc"}}, pc.APIKeys)
	assert.Equal(t, cfg.Upstream, pc.Upstream)
	assert.Equal(t, 5*time.Second, pc.ReadHeaderTimeout)
	assert.Equal(t, time.Duration(0), pc.UpstreamResponseHeaderTimeout)
	assert.Equal(t, 2*time.Second, pc.ShutdownTimeout)
	assert.Equal(t, "/models/qwen3/config.json", pc.ModelConfig)
	assert.Equal(t, 10*time.Second, pc.BodyReadTimeout)
	assert.Equal(t, 45*time.Second, pc.StreamStallTimeout)
	assert.Equal(t, 20*time.Second, pc.ClientWriteTimeout)
	assert.Equal(t, 16, pc.MaxConcurrentRequests)
	assert.Equal(t, 4, pc.MaxConcurrentRequestsPerClient)
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
		"unknown_key": {"has invalid keys: upstrem"},
		"bad_access": {
			`the name "local" is reserved`,
			`the key named "short" is shorter than 16 characters`,
			`the name "x y" must be 1-64 letters`,
			`allowed_origins: "localhost:3000" is not an origin`,
			"max_header_bytes: must be at least 4096, got 100",
		},
		"bad_requests":      {"requests.max_tokens, max_stop_sequences and max_stop_bytes: must not be negative"},
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

// confmap.Validate walks into the embedded proxy settings as well: a proxy
// error is still reported once.
func TestAProxyErrorIsReportedOnce(t *testing.T) {
	_, err := configtest.Load[*Config](t, NewFactory(), "bad_upstream")
	require.Error(t, err)
	assert.Equal(t, 1, strings.Count(err.Error(), "is not an http(s) URL"), err.Error())
}

// The extension hands the proxy its settings whole (proxy.Config, embedded)
// rather than field by field. Every key of testdata's full config reaches
// the proxy.Config field of that key and changes no other, and every key of
// proxy.Config is one of them: no setting is lost on the way.
func TestEveryKeyReachesTheProxy(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	full, err := cm.Sub("mlx_proxy/full")
	require.NoError(t, err)
	values := map[string]any{}
	for _, k := range full.AllKeys() {
		values[k] = full.Get(k)
	}
	// The keys full leaves at their defaults, with other values.
	values["allow_adapters"] = true
	values["live::ring_hostfile"] = "/etc/mlx/hosts.json"
	// The listeners, which the extension opens itself.
	collectorSide := []string{"endpoint", "metrics_endpoint"}

	keys, untagged := configKeys(reflect.TypeFor[proxy.Config]())
	assert.ElementsMatch(t, []string{"MetricsBearerToken", "Traces.Hide", "APIKeys", "TLS", "Upstreams"}, slices.Collect(maps.Keys(untagged)),
		"the proxy.Config fields no key fills: the extension sets them in proxyConfig")
	// Secrets on the extension (configopaque), plain on the proxy.
	keys["metrics_bearer_token"] = untagged["MetricsBearerToken"]
	keys["api_keys"] = untagged["APIKeys"]
	values["api_keys_file"] = writeKeysFile(t, "carol=0123456789abcdef0123\n")
	keys["api_keys_file"] = untagged["APIKeys"]
	// Several engines: the extension's list, each key a secret there.
	values["upstreams"] = []any{map[string]any{"name": "a", "endpoint": "http://10.0.0.2:8081", "models": []any{"m"}, "api_key": "k"}}
	keys["upstreams"] = untagged["Upstreams"]

	proxyConfig := func(c *Config) proxy.Config {
		pc, err := c.proxyConfig()
		require.NoError(t, err)
		return pc
	}
	def := reflect.ValueOf(proxyConfig(createDefaultConfig().(*Config)))
	for key, v := range values {
		if slices.Contains(collectorSide, key) {
			continue
		}
		if _, ok := keys[key]; !assert.Truef(t, ok, "%s: no field of proxy.Config", key) {
			continue
		}
		cfg := createDefaultConfig().(*Config)
		require.NoError(t, confmap.NewFromStringMap(nested(key, v)).Unmarshal(cfg), key)
		got := reflect.ValueOf(proxyConfig(cfg))
		for other, index := range keys {
			g, d := got.FieldByIndex(index).Interface(), def.FieldByIndex(index).Interface()
			if other == key || slices.Equal(index, keys[key]) {
				assert.NotEqualf(t, d, g, "%s does not reach proxy.Config", key)
			} else {
				assert.Equalf(t, d, g, "%s changed %s of proxy.Config", key, other)
			}
		}
	}
	for key := range keys {
		_, ok := values[key]
		assert.Truef(t, ok, "%s: in proxy.Config, not in this test", key)
	}
}

// The configuration table of documentation.md names every key, and no other.
func TestTheConfigurationTableNamesEveryKey(t *testing.T) {
	doc, err := os.ReadFile("documentation.md")
	require.NoError(t, err)
	_, table, ok := strings.Cut(string(doc), "\n## Configuration\n")
	require.True(t, ok)
	table, _, _ = strings.Cut(table, "\n\n## ")
	var documented []string
	for _, row := range regexp.MustCompile("(?m)^\\| ([^|]+) \\|").FindAllStringSubmatch(table, -1) {
		for _, k := range regexp.MustCompile("`([a-z_.]+)`").FindAllStringSubmatch(row[1], -1) {
			documented = append(documented, strings.ReplaceAll(k[1], ".", confmap.KeyDelimiter))
		}
	}
	keys, _ := configKeys(reflect.TypeFor[Config]())
	for k := range keys {
		// The collector's own TLS settings: one row, documented there.
		if strings.HasPrefix(k, "tls"+confmap.KeyDelimiter) {
			delete(keys, k)
			keys["tls"] = nil
		}
	}
	assert.ElementsMatch(t, slices.Collect(maps.Keys(keys)), documented)
}

// configKeys maps the keys of a config struct (nested ones joined with "::",
// as confmap does; squashed structs at their parent's level) to their
// fields' indexes, and the fields tagged "-" (by Go path) to theirs.
func configKeys(typ reflect.Type) (keys, untagged map[string][]int) {
	keys, untagged = map[string][]int{}, map[string][]int{}
	var walk func(typ reflect.Type, key, goPath string, index []int)
	walk = func(typ reflect.Type, key, goPath string, index []int) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
			idx := append(slices.Clone(index), i)
			switch {
			case name == "-":
				untagged[goPath+f.Name] = idx
			case opts == "squash":
				walk(f.Type, key, goPath, idx)
			case f.Type.Kind() == reflect.Struct:
				walk(f.Type, key+name+confmap.KeyDelimiter, goPath+f.Name+".", idx)
			default:
				keys[key+name] = idx
			}
		}
	}
	walk(typ, "", "", nil)
	return keys, untagged
}

// nested is the map of one key ("a::b") with value v.
func nested(key string, v any) map[string]any {
	parts := strings.Split(key, confmap.KeyDelimiter)
	m := map[string]any{parts[len(parts)-1]: v}
	for i := len(parts) - 2; i >= 0; i-- {
		m = map[string]any{parts[i]: m}
	}
	return m
}

func writeKeysFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "keys")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

// The keys file adds to api_keys, and one others can read is refused: the
// collector does not start with keys anyone on the machine can read.
func TestAPIKeysFile(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.APIKeys = "alice=0123456789abcdef0123"
	cfg.APIKeysFile = writeKeysFile(t, "# callers\nbob=fedcba9876543210fedc\n\ncarol=abcdefabcdefabcdef01, dave=0000111122223333abcd\n")
	require.NoError(t, cfg.Validate())
	pc, err := cfg.proxyConfig()
	require.NoError(t, err)
	var names []string
	for _, k := range pc.APIKeys {
		names = append(names, k.Name)
	}
	assert.Equal(t, []string{"alice", "bob", "carol", "dave"}, names)

	require.NoError(t, os.Chmod(cfg.APIKeysFile, 0o604))
	err = cfg.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "readable or writable by others")

	cfg.APIKeysFile = filepath.Join(t.TempDir(), "missing")
	assert.Error(t, cfg.Validate())
	cfg.APIKeysFile = writeKeysFile(t, "bob\n")
	err = cfg.Validate()
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "0123456789abcdef0123", "an error never quotes a key")
}
