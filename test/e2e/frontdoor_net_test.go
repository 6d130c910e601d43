//go:build e2e && stack

package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

// The front door as a machine on a network sees it: the collector runs in a
// network namespace of its own on the original ports, every address, and
// the test is another host (the root namespace, over a veth pair). Without
// API keys a remote client gets 403 and the engine nothing; with keys a
// remote client without one gets 401, and with one 200, counted under its
// key's name. /metrics stays reachable from the network either way, as the
// original's scrape config expects.
func TestStackFrontDoorOnTheNetwork(t *testing.T) {
	const ns, rootIf = "mlxfd", "mlxt-fd"
	const rootIP, nsIP = "10.213.2.1/30", "10.213.2.2/30"
	if _, err := exec.LookPath("ip"); err != nil {
		t.Fatalf("ip (iproute2) is needed: %v", err)
	}
	removeNamespace(ns, rootIf)
	t.Cleanup(func() { removeNamespace(ns, rootIf) })
	addNamespace(t, ns, rootIf, rootIP, nsIP)

	base := fmt.Sprintf("http://%s:8080", addr(nsIP))
	client := &http.Client{Timeout: 20 * time.Second}
	post := func(key string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, base+"/v1/chat/completions",
			strings.NewReader(`{"messages": [{"role": "user", "content": "Say hello"}], "max_tokens": 8}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	start := func(env ...string) *nodeCollector {
		c := startInNamespace(t, ns, append([]string{"MLXSIM=" + binary(t, "MLXSIM"), "MLX_DATA_DIR=" + t.TempDir(),
			"MLXSIM_LOAD_DELAY=0s", "MLX_API_KEYS=", "MLX_ALLOW_UNAUTHENTICATED_REMOTE="}, env...),
			"config/mlx.yaml", "config/demo.yaml")
		// Ready: the engine answers through the proxy (a 503 or a
		// refused connection while it starts).
		require.Eventually(t, func() bool {
			resp, err := client.Get(base + "/metrics")
			if err != nil {
				return false
			}
			resp.Body.Close()
			sc, err := scrapeNode(addr(nsIP), 9105)
			return err == nil && resp.StatusCode == http.StatusOK && labelled(sc, "mlx_server_ready") == 1
		}, 90*time.Second, 500*time.Millisecond, "the collector in %s is ready", ns)
		return c
	}

	t.Run("WithoutKeys", func(t *testing.T) {
		c := start()
		defer c.kill(syscall.SIGTERM)
		status, body := post("")
		assert.Equal(t, http.StatusForbidden, status, body)
		assert.Contains(t, body, "remote_not_allowed")
		status, body = post("some-client-token")
		assert.Equal(t, http.StatusForbidden, status, "a token means nothing without keys: %s", body)
		sc, err := scrapeNode(addr(nsIP), 8080)
		require.NoError(t, err, "/metrics answers the network")
		assert.Equal(t, 2.0, labelled(sc, "mlx_http_refusals_total", "route", "chat_completions", "status", "403"))
		assert.Zero(t, labelled(sc, "mlx_queue_wait_seconds"), "no request went on to the engine")
		assert.Zero(t, labelled(sc, "mlx_client_requests_total"), "no caller was let in")
	})

	t.Run("WithKeys", func(t *testing.T) {
		const key = "alice-0123456789abcdef"
		c := start("MLX_API_KEYS=alice=" + key + ",bob=bob-0123456789abcdef0")
		defer c.kill(syscall.SIGTERM)
		status, body := post("")
		assert.Equal(t, http.StatusUnauthorized, status, body)
		assert.Contains(t, body, "missing_api_key")
		status, body = post("not-" + key)
		assert.Equal(t, http.StatusUnauthorized, status, body)
		status, body = post(key)
		require.Equal(t, http.StatusOK, status, body)
		assert.Contains(t, body, `"chat.completion"`)
		sc, err := scrapeNode(addr(nsIP), 8080)
		require.NoError(t, err)
		assert.Equal(t, 1.0, labelled(sc, "mlx_client_requests_total", "client", "alice", "status", "2xx"))
		assert.Greater(t, labelled(sc, "mlx_client_tokens_total", "client", "alice", "type", "completion"), 0.0)
		assert.Equal(t, 2.0, labelled(sc, "mlx_http_refusals_total", "route", "chat_completions", "status", "401"))
	})
}

// labelled is the value of the series of name with labels (0 when absent).
func labelled(sc *promtext.Scrape, name string, labels ...string) float64 {
	v, _ := sc.Value(name, labels...)
	return v
}
