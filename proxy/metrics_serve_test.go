package proxy

import (
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

// serveMetrics starts the metrics_endpoint listener of r's proxy.
func serveMetrics(t *testing.T, r *rig) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	r.proxy.ServeMetrics(ln)
	return "http://" + ln.Addr().String()
}

// With a token, /metrics answers 401 without it or with another one, on
// the proxy's port and on metrics_endpoint alike; with it, the series.
func TestMetricsBearerToken(t *testing.T) {
	r := newRig(t, func(c *Config, _ *mlxsim.Options) { c.MetricsBearerToken = "s3cret-token" })
	own := serveMetrics(t, r)
	for _, base := range []string{r.url, own} {
		none := r.do(base, http.MethodGet, "/metrics", "")
		assert.Equal(t, http.StatusUnauthorized, none.status, base)
		assert.Equal(t, `Bearer realm="mlx-otelcol metrics"`, none.header.Get("WWW-Authenticate"))
		assert.NotContains(t, string(none.body), "mlx_", "no series without the token")
		wrong := r.do(base, http.MethodGet, "/metrics", "", "Authorization", "Bearer s3cret-tokeN")
		assert.Equal(t, http.StatusUnauthorized, wrong.status, base)
		basic := r.do(base, http.MethodGet, "/metrics", "", "Authorization", "Basic czNjcmV0LXRva2Vu")
		assert.Equal(t, http.StatusUnauthorized, basic.status, base)

		ok := r.do(base, http.MethodGet, "/metrics", "", "Authorization", "Bearer s3cret-token")
		require.Equal(t, http.StatusOK, ok.status, base)
		sc, err := promtext.Parse(ok.body)
		require.NoError(t, err)
		_, up := sc.Value("mlx_up")
		assert.True(t, up, "the proxy's series on %s", base)
	}
	// The token guards the series, not the API.
	assert.Equal(t, http.StatusOK, r.post("/v1/chat/completions", chatBody).status)
}

// metrics_endpoint serves /metrics and nothing else; with
// metrics_on_proxy_port off, the proxy's port answers /metrics with 404
// and never relays it to the engine.
func TestMetricsOnTheirOwnListenerOnly(t *testing.T) {
	r := newRig(t, func(c *Config, _ *mlxsim.Options) { c.MetricsOnProxyPort = false })
	own := serveMetrics(t, r)

	resp := r.do(own, http.MethodGet, "/metrics", "")
	require.Equal(t, http.StatusOK, resp.status)
	sc, err := promtext.Parse(resp.body)
	require.NoError(t, err)
	_, up := sc.Value("mlx_up")
	assert.True(t, up)
	assert.Equal(t, http.StatusNotFound, r.do(own, http.MethodGet, "/v1/models", "").status, "no API on the metrics listener")
	assert.Equal(t, http.StatusMethodNotAllowed, r.do(own, http.MethodPost, "/metrics", "{}").status)

	onPort := r.do(r.url, http.MethodGet, "/metrics", "")
	assert.Equal(t, http.StatusNotFound, onPort.status)
	assert.Equal(t, "404 page not found\n", string(onPort.body), "the proxy's own 404, not relayed to the engine")
	assert.Equal(t, http.StatusOK, r.do(r.url, http.MethodGet, "/v1/models", "").status, "the API is where it was")
}
