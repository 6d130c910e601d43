//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

// docs/scaling.md's gateway, run: a serving node with config/to-gateway.yaml
// sends its spans, engine log and access log to a gateway collector
// (config/gateway.yaml), which keeps them in Jaeger and VictoriaLogs, each
// marked with the node it came from.
func TestGatewayCollectorKeepsEveryNodesSignals(t *testing.T) {
	vl := startVictoriaLogs(t)
	j := startJaeger(t)
	gw := startCollector(t, collectorOptions{
		configs: []string{"config/gateway.yaml"},
		env:     map[string]string{"MLX_VLOGS_URL": vl.url},
		sets:    []string{"exporters::otlp_grpc/jaeger::endpoint=" + j.otlp},
	})
	node := startCollector(t, collectorOptions{
		configs:    []string{"config/mlx.yaml", "config/demo.yaml", "config/to-gateway.yaml"},
		noOTLPLogs: true,
		env: map[string]string{
			"MLX_GATEWAY_OTLP":  fmt.Sprintf("127.0.0.1:%d", gw.ports["otlp_grpc"]),
			"MLX_GATEWAY_URL":   fmt.Sprintf("http://127.0.0.1:%d", gw.ports["otlp_http"]),
			"MLX_NODE_NAME":     "rank0",
			"MLXSIM_LOAD_DELAY": "0s",
		},
	})
	node.waitFor("prometheus/supervisor", 60*time.Second, "the engine ready", func(sc *promtext.Scrape) bool {
		v, _ := sc.Value("mlx_server_ready")
		return v == 1
	})

	traceID := newTraceID(t)
	status, _ := tracedPost(t, fmt.Sprintf("http://127.0.0.1:%d/v1/chat/completions", node.ports["mlx_proxy"]), traceID,
		`{"model": "mlx-community/Qwen3-4B-4bit", "messages": [{"role": "user", "content": "Say hi"}], "max_tokens": 8}`)
	require.Equal(t, http.StatusOK, status)

	spans, services := j.waitTrace(t, traceID)
	require.NotEmpty(t, spans)
	assert.Contains(t, services, "mlx-metrics-proxy")

	access := vl.waitRow(t, readmeAccessQuery, "the node's access log through the gateway",
		func(r map[string]string) bool { return r["trace_id"] == traceID })
	assert.Equal(t, "200", access["http.response.status_code"])
	byNode := vl.waitRow(t, `_time:15m {service.name="mlx-metrics-proxy", host.name="rank0"} | count() n`, "the access log marked with its node",
		func(r map[string]string) bool { return r["n"] != "" && r["n"] != "0" })
	assert.NotEmpty(t, byNode["n"])
	vl.waitRow(t, `_time:15m {service.name="mlx-lm-server", host.name="rank0"} mlx.log.category:=startup`, "the node's engine log through the gateway",
		func(r map[string]string) bool { return r["mlx.log.severity"] != "" })

	// The node counts what the gateway accepted as shipped.
	sc := node.waitFor("prometheus/logs", 30*time.Second, "the gateway sink counted", func(sc *promtext.Scrape) bool {
		return sum(sc, "mlx_log_tailer_shipped_total", "sink", "mlx_otlp_http/gateway") > 0
	})
	assert.Zero(t, sum(sc, "mlx_log_tailer_dropped_total", "sink", "mlx_otlp_http/gateway"))
}
