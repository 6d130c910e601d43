package preflight

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/mlx-otelcol/mlx-otelcol/extension/proxyextension"
)

func loadTestdata(t *testing.T, name string) map[string]any {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", name))
	require.NoError(t, err)
	return cm.ToStringMap()
}

func TestListenersOfUsedListeningComponents(t *testing.T) {
	got := Listeners(loadTestdata(t, "listeners.yaml"))
	want := []Listener{
		{Component: "exporters::prometheus/hw", Key: "endpoint", Endpoint: "0.0.0.0:9102"},
		{Component: "extensions::health_check", Key: "endpoint", Endpoint: "localhost:13133", Default: true},
		{Component: "extensions::mlx_proxy", Key: "endpoint", Endpoint: "127.0.0.1:18080"},
		{Component: "extensions::mlx_proxy", Key: "metrics_endpoint", Endpoint: "127.0.0.1:18090"},
		{Component: "extensions::pprof", Key: "endpoint", Endpoint: "127.0.0.1:1777"},
		{Component: "receivers::mlx_supervisor", Key: "the engine's --port in command", Endpoint: "127.0.0.1:18081", RunFile: "./.data/server.run.json"},
		{Component: "receivers::otlp", Key: "protocols::grpc::endpoint", Endpoint: "localhost:4317", Default: true},
		{Component: "receivers::otlp", Key: "protocols::http::endpoint", Endpoint: "127.0.0.1:14318"},
		{Component: "service::telemetry::metrics", Key: "readers[0] pull prometheus", Endpoint: "127.0.0.1:18888"},
	}
	assert.Equal(t, want, got)
}

func TestListenersOfTheCollectorsOwnMetrics(t *testing.T) {
	assert.Equal(t, []Listener{
		{Component: "receivers::otlp", Key: "protocols::http::endpoint", Endpoint: "localhost:4318", Default: true},
		{Component: "service::telemetry::metrics", Key: "the default reader", Endpoint: "localhost:8888", Default: true},
	}, Listeners(loadTestdata(t, "telemetry_default.yaml")))
	assert.Equal(t, []Listener{
		{Component: "receivers::otlp", Key: "protocols::http::endpoint", Endpoint: "localhost:4318", Default: true},
	}, Listeners(loadTestdata(t, "telemetry_none.yaml")), "level none starts no reader")
}

func TestEnginesInSpawnModeOnly(t *testing.T) {
	es := Engines(loadTestdata(t, "listeners.yaml"))
	require.Len(t, es, 1, "the attach-mode supervisor runs no engine")
	assert.Equal(t, "receivers::mlx_supervisor", es[0].Component)
	assert.Equal(t, []string{"mlx_lm.server", "--model", "mlx-community/Qwen3-4B-4bit", "--port", "18081"}, es[0].Command)
	assert.Equal(t, "./.data/server.run.json", es[0].RunFile)
}

func TestTheProxysDefaultEndpointIsTheTables(t *testing.T) {
	cfg := proxyextension.NewFactory().CreateDefaultConfig().(*proxyextension.Config)
	assert.Equal(t, cfg.Endpoint, listenerKeys["extensions"]["mlx_proxy"][0].def)
}

// The shipped configs, resolved as the collector resolves them (${env:...}
// with defaults, files merged in order), with no MLX_* variable set. The
// shipped configs grow: every listener below must be found, and no
// destination (an exporter's or the judge's endpoint) may be.
func TestListenersOfTheShippedConfig(t *testing.T) {
	shipped := []Listener{
		{Component: "exporters::prometheus/hw", Key: "endpoint", Endpoint: "0.0.0.0:9102"},
		{Component: "exporters::prometheus/kv", Key: "endpoint", Endpoint: "0.0.0.0:9104"},
		{Component: "exporters::prometheus/logs", Key: "endpoint", Endpoint: "0.0.0.0:9106"},
		{Component: "exporters::prometheus/supervisor", Key: "endpoint", Endpoint: "0.0.0.0:9105"},
		{Component: "extensions::health_check", Key: "endpoint", Endpoint: "127.0.0.1:13133"},
		{Component: "extensions::mlx_proxy", Key: "endpoint", Endpoint: "0.0.0.0:8080"},
		{Component: "receivers::mlx_supervisor", Key: "the engine's --port in command", Endpoint: "127.0.0.1:8081", RunFile: "./.data/server.run.json"},
		{Component: "receivers::otlp", Key: "protocols::grpc::endpoint", Endpoint: "127.0.0.1:4317"},
		{Component: "receivers::otlp", Key: "protocols::http::endpoint", Endpoint: "127.0.0.1:4318"},
	}
	moved := func() []Listener {
		var ls []Listener
		for _, l := range shipped {
			l.Endpoint = strings.Replace(l.Endpoint, "0.0.0.0", "127.0.0.1", 1)
			if l.Component == "receivers::mlx_supervisor" {
				l.Endpoint, l.RunFile = "127.0.0.1:18081", "/var/mlx/server.run.json"
			}
			ls = append(ls, l)
		}
		return append(ls, Listener{Component: "extensions::mlx_proxy", Key: "metrics_endpoint", Endpoint: "127.0.0.1:18090"})
	}()
	for _, tc := range []struct {
		name    string
		configs []string
		env     map[string]string
		want    []Listener
		engine  []string
	}{
		{name: "mlx.yaml", configs: []string{"mlx.yaml"}, want: shipped,
			engine: []string{"mlx_lm.server", "--model", "mlx-community/Qwen3-4B-4bit", "--host", "127.0.0.1", "--port", "8081", "--prompt-cache-size", "10", "--chat-template-args", `{"enable_thinking": false}`}},
		// The OTLP sinks of otlp-logs.yaml send; they do not listen.
		{name: "otlp-logs.yaml", configs: []string{"mlx.yaml", "otlp-logs.yaml"}, env: map[string]string{"MLX_LOG_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, want: shipped},
		{name: "demo.yaml", configs: []string{"mlx.yaml", "demo.yaml"}, env: map[string]string{"MLXSIM": "bin/mlxsim"}, want: shipped,
			engine: []string{"bin/mlxsim", "--model", "mlx-community/Qwen3-4B-4bit", "--host", "127.0.0.1", "--port", "8081", "--prompt-cache-size", "10", "--chat-template-args", `{"enable_thinking": false}`, "--sim-load-delay", "3s", "--sim-decode-tokens-per-second", "40", "--sim-mlx-lm-version", "0.31.3"}},
		{name: "moved", configs: []string{"mlx.yaml", "demo.yaml"}, env: map[string]string{
			"MLXSIM": "bin/mlxsim", "MLX_LISTEN_HOST": "127.0.0.1", "MLX_ENGINE_PORT": "18081",
			"MLX_PROXY_METRICS_ENDPOINT": "127.0.0.1:18090", "MLX_DATA_DIR": "/var/mlx",
		}, want: moved},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf := resolveShipped(t, tc.env, tc.configs...)
			got := Listeners(conf)
			for _, w := range tc.want {
				assert.Contains(t, got, w)
			}
			telemetry := 0
			for _, l := range got {
				switch {
				case l.Component == "service::telemetry::metrics":
					telemetry++
					assert.True(t, strings.HasSuffix(l.Endpoint, ":8888"), l.Endpoint)
				case strings.HasPrefix(l.Component, "exporters::prometheus/"), l.Component == "extensions::health_check",
					l.Component == "extensions::mlx_proxy", l.Component == "receivers::mlx_supervisor", l.Component == "receivers::otlp":
				default:
					t.Errorf("%s is not a listener", l.describe())
				}
			}
			assert.Equal(t, 1, telemetry, "the collector's own metrics on :8888")
			if tc.engine != nil {
				es := Engines(conf)
				require.Len(t, es, 1)
				assert.Equal(t, tc.engine, es[0].Command)
				assert.Equal(t, "mlx-community/Qwen3-4B-4bit", es[0].Model)
			}
		})
	}
}

// resolveShipped resolves config/<name>... with env as the whole
// environment.
func resolveShipped(t *testing.T, env map[string]string, names ...string) map[string]any {
	t.Helper()
	var uris []string
	for _, n := range names {
		uris = append(uris, "file:"+filepath.Join("..", "..", "config", n))
	}
	r, err := confmap.NewResolver(testResolverSettings(uris, env))
	require.NoError(t, err)
	conf, err := r.Resolve(context.Background())
	require.NoError(t, err)
	return conf.ToStringMap()
}

// testResolverSettings stand in for the collector's env, file and yaml
// providers (which this module does not require): the same schemes, the
// same ${env:NAME:-default} rule, env taken from a map.
func testResolverSettings(uris []string, env map[string]string) confmap.ResolverSettings {
	return confmap.ResolverSettings{
		URIs:          uris,
		DefaultScheme: "env",
		ProviderFactories: []confmap.ProviderFactory{
			testProvider("file", func(s string) ([]byte, error) { return os.ReadFile(s) }),
			testProvider("yaml", func(s string) ([]byte, error) { return []byte(s), nil }),
			testProvider("env", func(s string) ([]byte, error) {
				name, def, hasDef := strings.Cut(s, ":-")
				if v, ok := env[name]; ok {
					return []byte(v), nil
				}
				if hasDef {
					return []byte(def), nil
				}
				return nil, nil
			}),
		},
	}
}

type provider struct {
	scheme string
	read   func(string) ([]byte, error)
}

func testProvider(scheme string, read func(string) ([]byte, error)) confmap.ProviderFactory {
	return confmap.NewProviderFactory(func(confmap.ProviderSettings) confmap.Provider {
		return &provider{scheme: scheme, read: read}
	})
}

func (p *provider) Retrieve(_ context.Context, uri string, _ confmap.WatcherFunc) (*confmap.Retrieved, error) {
	rest, ok := strings.CutPrefix(uri, p.scheme+":")
	if !ok {
		return nil, errors.New("wrong scheme: " + uri)
	}
	b, err := p.read(rest)
	if err != nil {
		return nil, err
	}
	if b == nil {
		return confmap.NewRetrieved(nil)
	}
	return confmap.NewRetrievedFromYAML(b)
}

func (p *provider) Scheme() string                 { return p.scheme }
func (p *provider) Shutdown(context.Context) error { return nil }
