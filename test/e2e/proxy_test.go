//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/doccheck"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

func (s *stack) proxyURL(path string) string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", s.ports["mlx_proxy"], path)
}

// waitEngineReady waits until the simulated engine can generate.
func waitEngineReady(s *stack) {
	s.waitFor("prometheus/supervisor", 60*time.Second, "mlx_server_ready 1", func(sc *promtext.Scrape) bool {
		v, _ := sc.Value("mlx_server_ready")
		return v == 1
	})
}

func postJSON(t *testing.T, url, body string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, b
}

// The shipped config puts the proxy in front of the engine: clients get
// the engine's answers through it, and its /metrics counts them with the
// families its documentation lists.
func TestProxyInFrontOfTheEngine(t *testing.T) {
	s := startCollector(t, collectorOptions{configs: demoConfigs, env: map[string]string{"MLXSIM_LOAD_DELAY": "0s"}})
	waitEngineReady(s)

	// Through the proxy as directly: a listing, a stream, a tool call.
	resp, err := http.Get(s.proxyURL("/v1/models"))
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(b), "mlx-community/Qwen3-4B-4bit")

	resp, b = postJSON(t, s.proxyURL("/v1/chat/completions"),
		`{"model": "mlx-community/Qwen3-4B-4bit", "messages": [{"role": "user", "content": "Hello"}], "max_tokens": 8, "stream": true, "temperature": 0.4}`)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	assert.True(t, strings.HasSuffix(string(b), "data: [DONE]\n\n"), "a whole stream")
	assert.NotContains(t, string(b), `"usage"`, "no usage chunk the client did not ask for")

	tools := `[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]`
	resp, b = postJSON(t, s.proxyURL("/v1/chat/completions"),
		`{"messages": [{"role": "user", "content": "Use get_weather for Oslo"}], "tools": `+tools+`}`)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(b), `"finish_reason": "tool_calls"`)

	resp, _ = postJSON(t, s.proxyURL("/v1/completions"), `{"prompt": "Once", "max_tokens": 4}`)
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	sc := s.waitFor("mlx_proxy", 10*time.Second, "three completions counted and scored", func(sc *promtext.Scrape) bool {
		v1, _ := sc.Value("mlx_requests_total", "streaming", "true", "kind", "chat", "origin", "user")
		v2, _ := sc.Value("mlx_requests_total", "streaming", "false", "kind", "chat", "origin", "user")
		scored, _ := sc.Value("mlx_confidence_scored_total", "source", "injected")
		risk, _ := sc.Value("mlx_hallucination_risk_histogram") // its count
		return v1 == 1 && v2 == 2 && scored == 2 && risk == 3
	})
	assert.Equal(t, 1.0, value(t, sc, "mlx_up"))
	assert.Equal(t, 1.0, value(t, sc, "mlx_tool_calls_total", "tool", "get_weather", "type", "function"))
	assert.Equal(t, 0.0, value(t, sc, "mlx_temperature", "model", "mlx-community/Qwen3-4B-4bit", "kind", "chat"), "the last request had none: the engine's default")
	assert.Positive(t, value(t, sc, "mlx_tokens_completion_total", "kind", "chat"))
	assert.Equal(t, 40960.0, value(t, sc, "mlx_context_length_max_tokens", "model", "mlx-community/Qwen3-4B-4bit"))
	assert.Equal(t, 1.0, value(t, sc, "mlx_model_arch", "arch", "Qwen3ForCausalLM", "dtype", "bfloat16"))

	// The vllm group exists only with compat [vllm] (TestVLLMCompatGaugesMoveWithLoad),
	// the routing group only with upstreams; the shipped config has neither.
	served, err := doccheck.MetadataNamesOutside(repoRoot+"/extension/proxyextension/metadata.yaml", "vllm", "routing")
	require.NoError(t, err)
	assert.Equal(t, served, sc.Names(), "documentation.md lists what the binary serves (compat off, one engine)")
}

// An engine killed mid-stream: the client's stream ends without [DONE],
// the error is counted, the next requests get 503 and mlx_up drops to 0.
func TestProxyWhenTheEngineDies(t *testing.T) {
	s := startCollector(t, collectorOptions{
		configs: demoConfigs,
		env:     map[string]string{"MLXSIM_LOAD_DELAY": "0s"},
		sets: []string{
			"receivers::mlx_supervisor::restart::enabled=false",
			"extensions::mlx_proxy::upstream_probe_interval=200ms",
		},
	})
	waitEngineReady(s)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.proxyURL("/v1/chat/completions"),
		strings.NewReader(`{"messages": [{"role": "user", "content": "Write a long essay"}], "max_tokens": 4000, "stream": true}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json") // the proxy's front door requires it
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	rd := bufio.NewReader(resp.Body)
	for {
		line, err := rd.ReadString('\n')
		require.NoError(t, err)
		if strings.HasPrefix(line, "data: {") {
			break
		}
	}
	pids := enginePids(s)
	require.NotEmpty(t, pids)
	for _, pid := range pids {
		require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	}
	rest, _ := io.ReadAll(rd) // ends when the engine's socket closes
	assert.NotContains(t, string(rest), "[DONE]")

	sc := s.waitFor("mlx_proxy", 10*time.Second, "the cut stream counted as an error", func(sc *promtext.Scrape) bool {
		v, _ := sc.Value("mlx_error_total", "status", "5xx", "kind", "chat")
		return v == 1
	})
	assert.Equal(t, 0.0, value(t, sc, "mlx_in_flight", "model", "mlx-community/Qwen3-4B-4bit"))

	down, body := postJSON(t, s.proxyURL("/v1/chat/completions"), `{"messages": [{"role": "user", "content": "Hi"}]}`)
	assert.Equal(t, http.StatusServiceUnavailable, down.StatusCode)
	assert.Contains(t, string(body), `"code":"upstream_unavailable"`)
	s.waitFor("mlx_proxy", 10*time.Second, "mlx_up 0", func(sc *promtext.Scrape) bool {
		v, ok := sc.Value("mlx_up")
		return ok && v == 0
	})
}
