package proxyextension

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.uber.org/goleak"

	"github.com/mlx-otelcol/mlx-otelcol/proxy"
	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/doccheck"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/fleettest"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

func TestMain(m *testing.M) {
	cleanup := fleettest.Use()
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) { cleanup(); os.Exit(code) }))
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

func newExtension(t *testing.T, cfg *Config) extension.Extension {
	t.Helper()
	f := NewFactory()
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), cfg)
	require.NoError(t, err)
	return ext
}

func TestShutdownWithoutStart(t *testing.T) {
	ext := newExtension(t, NewFactory().CreateDefaultConfig().(*Config))
	assert.NoError(t, ext.Shutdown(context.Background()))
	assert.NoError(t, ext.Shutdown(context.Background()), "twice is fine")
}

func TestPortInUseIsAStartError(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.Endpoint = busy.Addr().String()
	ext := newExtension(t, cfg)
	err = ext.Start(context.Background(), componenttest.NewNopHost())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "mlx_proxy cannot listen on "+busy.Addr().String())
	assert.Contains(t, err.Error(), "address already in use")
	assert.NoError(t, ext.Shutdown(context.Background()))
}

// engine runs a simulated mlx_lm.server that answers at once.
func engine(t *testing.T) string {
	t.Helper()
	e := mlxsim.New(mlxsim.Options{Model: "mlx-community/Qwen3-4B-4bit", PrefillTPS: 1e12, DecodeTPS: 1e12}, io.Discard)
	srv := httptest.NewServer(e.Handler())
	t.Cleanup(srv.Close)
	t.Cleanup(e.Close)
	return srv.URL
}

// startProxy starts the extension in front of a simulated engine.
func startProxy(t *testing.T) (base string, client *http.Client) {
	t.Helper()
	base, client, _ = startProxyWith(t, nil)
	return base, client
}

// startProxyWith is startProxy with settings of the test's own
// (configure may be nil); it also returns the extension.
func startProxyWith(t *testing.T, configure func(*Config)) (base string, client *http.Client, ext extension.Extension) {
	t.Helper()
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.Endpoint = freeAddr(t)
	cfg.Upstream = engine(t)
	cfg.Model = "mlx-community/Qwen3-4B-4bit"
	cfg.ModelConfig = "../../internal/modelconfig/testdata/qwen3-4b-4bit.json"
	if configure != nil {
		configure(cfg)
	}
	ext = newExtension(t, cfg)
	require.NoError(t, ext.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { assert.NoError(t, ext.Shutdown(context.Background())) })
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return "http://" + cfg.Endpoint, &http.Client{Transport: tr, Timeout: 10 * time.Second}, ext
}

func post(t *testing.T, c *http.Client, url, body string) {
	t.Helper()
	resp, err := c.Post(url, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

func scrape(t *testing.T, c *http.Client, base string) *promtext.Scrape {
	t.Helper()
	resp, err := c.Get(base + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	sc, err := promtext.Parse(b)
	require.NoError(t, err)
	return sc
}

// metadata.yaml (and so documentation.md) lists exactly the families a real scrape shows once
// every kind of request has been served, with compat [vllm], a KV usage
// given (what the mlx_kvcache receiver does at each collection) and the
// engine as one of upstreams (the routing group's series).
func TestDocumentationMatchesAScrape(t *testing.T) {
	base, c, ext := startProxyWith(t, func(cfg *Config) {
		cfg.Compat = []string{proxy.CompatVLLM}
		cfg.Upstreams = []UpstreamSettings{{Name: "local", Endpoint: cfg.Upstream, Models: []string{cfg.Model}, MaxInFlight: 32}}
	})
	ext.(interface{ SetKVCacheUsage(float64, bool) }).SetKVCacheUsage(0.3, true)
	tools := `[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]`
	post(t, c, base+"/v1/chat/completions", `{"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 12, "stream": true, "temperature": 0.3}`)
	post(t, c, base+"/v1/chat/completions", `{"messages": [{"role": "user", "content": "Call get_weather"}], "tools": `+tools+`}`)
	post(t, c, base+"/v1/completions", `{"prompt": "Once", "max_tokens": 8}`)

	var sc *promtext.Scrape
	require.Eventually(t, func() bool {
		sc = scrape(t, c, base)
		up, _ := sc.Value("mlx_up")
		scored, _ := sc.Value("mlx_confidence_scored_total", "source", "injected")
		return up == 1 && scored == 2 && len(sc.Series("mlx_hallucination_risk")) > 0
	}, 5*time.Second, 10*time.Millisecond, "the probe has seen the engine, the answers are scored")
	documented, err := doccheck.MetadataNames("metadata.yaml")
	require.NoError(t, err)
	assert.Equal(t, documented, sc.Names())
	assert.NoError(t, doccheck.CheckScrape("metadata.yaml", sc.Families), "types, help texts, labels and buckets are metadata.yaml's")
	assert.NotEmpty(t, documented, "the equality above is the count: a family added to metadata.yaml is expected in the scrape, not in a number here")
}

// The proxy relays on the extension's endpoint and the metrics follow.
func TestExtensionRelays(t *testing.T) {
	base, c := startProxy(t)
	resp, err := c.Get(base + "/v1/models")
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(b), "mlx-community/Qwen3-4B-4bit")
	for i := range 3 {
		post(t, c, base+"/v1/chat/completions", fmt.Sprintf(`{"messages": [{"role": "user", "content": "n%d"}], "max_tokens": 4}`, i))
	}
	v, ok := scrape(t, c, base).Value("mlx_requests_total", "streaming", "false", "kind", "chat")
	require.True(t, ok)
	assert.Equal(t, 3.0, v)
}
