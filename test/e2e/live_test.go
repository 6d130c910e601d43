//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/standins/velotest"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/ssetest"
)

// liveConfigs are the demo with the live stream on.
var liveConfigs = append(append([]string{}, demoConfigs...), "config/live.yaml")

// streamChat sends a streamed chat through the proxy as one session (none
// when session is "") and reads it as a client does.
func streamChat(t *testing.T, url, session, body string) ssetest.Seen {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if session != "" {
		req.Header.Set("X-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	seen, err := ssetest.Read(resp.Body)
	require.NoError(t, err)
	require.True(t, seen.Done, "the stream ended with [DONE]")
	return seen
}

func waitStream(t *testing.T, velo *velotest.Server, session string) velotest.Stream {
	t.Helper()
	var st velotest.Stream
	require.Eventually(t, func() bool {
		var ok bool
		st, ok = velo.Stream(session)
		return ok && st.Done
	}, 15*time.Second, 20*time.Millisecond, "stream %s ended at the receiver", session)
	return st
}

func startLive(t *testing.T, velo string, env map[string]string) *stack {
	env["MLX_LIVE_ENDPOINT"] = velo
	env["MLXSIM_LOAD_DELAY"] = "0s"
	s := startCollector(t, collectorOptions{configs: liveConfigs, env: env})
	waitEngineReady(s)
	return s
}

const liveTools = `[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]`

// Streamed chats through the built binary arrive in VeloBenchmark's
// receiver as the client received them, with model, topology and status;
// 16 concurrent streams stay apart; no POST holds more than 512 records.
func TestLiveStreamToVeloBenchmark(t *testing.T) {
	velo, err := velotest.Start()
	require.NoError(t, err)
	defer velo.Close()
	s := startLive(t, velo.Endpoint(), map[string]string{"MLX_LIVE_TOPOLOGY": "tp2"})
	url := s.proxyURL("/v1/chat/completions")
	require.Eventually(t, func() bool { return velo.Status() != nil }, 15*time.Second, 50*time.Millisecond, "a status record")
	assert.Equal(t, velotest.Status{Model: "mlx-community/Qwen3-4B-4bit", Topology: "tp2"}, *velo.Status())

	cases := map[string]string{
		"chat":      `{"messages": [{"role": "user", "content": "Tell a story"}], "max_tokens": 12, "stream": true}`,
		"reasoning": `{"messages": [{"role": "user", "content": "Think"}], "max_tokens": 24, "stream": true, "chat_template_kwargs": {"enable_thinking": true}}`,
		"tool":      `{"messages": [{"role": "user", "content": "Use get_weather for Oslo"}], "stream": true, "tools": ` + liveTools + `}`,
	}
	for name, body := range cases {
		got := streamChat(t, url, name, body)
		assert.NotEmpty(t, got.Content+got.Reasoning+got.Tools, "%s: the client got something", name)
		st := waitStream(t, velo, name)
		assert.Equal(t, got, ssetest.Seen{Content: st.Text, Reasoning: st.Reasoning, Tools: st.Tools, Finish: st.FinishReason, Done: true}, name)
		assert.Equal(t, "mlx-community/Qwen3-4B-4bit", st.Model)
		assert.Equal(t, "tp2", st.Topology)
		assert.Equal(t, 1, st.Starts)
	}

	var wg sync.WaitGroup
	clients := make([]ssetest.Seen, 16)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			clients[i] = streamChat(t, url, fmt.Sprintf("c%02d", i), fmt.Sprintf(`{"messages": [{"role": "user", "content": "Story %d"}], "max_tokens": 10, "stream": true}`, i))
		}()
	}
	wg.Wait()
	for i, want := range clients {
		require.NotEmpty(t, want.Content)
		st := waitStream(t, velo, fmt.Sprintf("c%02d", i))
		assert.Equal(t, want.Content, st.Text, "stream %d is its own", i)
	}
	assert.Equal(t, len(cases)+len(clients), velo.Streams())
	for _, n := range velo.Posts() {
		assert.LessOrEqual(t, n, 512)
	}
}

func TestLiveWithoutTokens(t *testing.T) {
	velo, err := velotest.Start()
	require.NoError(t, err)
	defer velo.Close()
	s := startLive(t, velo.Endpoint(), map[string]string{"MLX_LIVE_INCLUDE_TOKENS": "false", "MLX_LIVE_MODEL_NAME": "my-catalog-name"})
	streamChat(t, s.proxyURL("/v1/chat/completions"), "quiet", `{"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 8, "stream": true}`)
	st := waitStream(t, velo, "quiet")
	assert.Zero(t, st.Deltas, "no delta records")
	assert.Equal(t, 1, st.Starts)
	assert.Equal(t, "my-catalog-name", st.Model, "MLX_LIVE_MODEL_NAME stamps another model.id")
}

// A receiver that is down: the client's stream is whole, and what the
// proxy could not deliver is counted.
func TestLiveReceiverDown(t *testing.T) {
	velo, err := velotest.Start()
	require.NoError(t, err)
	endpoint := velo.Endpoint()
	velo.Close()
	s := startLive(t, endpoint, map[string]string{})
	got := streamChat(t, s.proxyURL("/v1/chat/completions"), "lost", `{"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 8, "stream": true}`)
	assert.NotEmpty(t, got.Content)
	s.waitFor("mlx_proxy", 15*time.Second, "failed POSTs counted", func(sc *promtext.Scrape) bool {
		v, _ := sc.Value("mlx_live_records_dropped_total", "reason", "export_failed")
		return v > 0
	})
}

// VeloBenchmark's remaining contract (seed 004): the node's metrics reach
// its /v1/metrics as JSON, which it counts; model.id is the served model
// card's base_model; a client that names no session sees its conversation
// as one panel, each request a turn of it.
func TestLiveMetricsModelCardAndConversations(t *testing.T) {
	velo, err := velotest.Start()
	require.NoError(t, err)
	defer velo.Close()
	model := t.TempDir()
	cfg, err := os.ReadFile(filepath.Join(repoRoot, "internal/modelconfig/testdata/qwen3-4b-4bit.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(model, "config.json"), cfg, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(model, "README.md"), []byte("---\nlicense: apache-2.0\nbase_model: Qwen/Qwen3-4B\nlibrary_name: mlx\n---\n# mlx-community/Qwen3-4B-4bit\n"), 0o600))
	s := startLive(t, velo.Endpoint(), map[string]string{"MLX_MODEL_CONFIG": model})
	url := s.proxyURL("/v1/chat/completions")

	require.Eventually(t, func() bool { return velo.Status() != nil }, 15*time.Second, 50*time.Millisecond, "a status record")
	assert.Equal(t, "Qwen/Qwen3-4B", velo.Status().Model, "the card's base_model")
	require.Eventually(t, func() bool { return velo.MetricPoints() > 0 }, 30*time.Second, 100*time.Millisecond,
		"the node's metrics reached /v1/metrics as JSON")

	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	first := streamChat(t, url, "", `{"messages": [{"role": "user", "content": "Tell a story"}], "max_tokens": 10, "stream": true}`)
	second := streamChat(t, url, "", `{"messages": [{"role": "user", "content": "Tell a story"}, {"role": "assistant", "content": `+q(first.Content)+`}, {"role": "user", "content": "Go on"}], "max_tokens": 10, "stream": true}`)
	apart := streamChat(t, url, "", `{"messages": [{"role": "user", "content": "Another story"}], "max_tokens": 10, "stream": true}`)
	var panels []velotest.Stream
	require.Eventually(t, func() bool {
		panels = velo.Panels()
		done := 0
		for _, p := range panels {
			if p.Done {
				done++
			}
		}
		return len(panels) == 2 && done == 2
	}, 15*time.Second, 50*time.Millisecond, "two panels: the conversation and the other")
	texts := map[string]int{}
	for _, p := range panels {
		texts[p.Text] = p.Starts
		assert.Equal(t, "Qwen/Qwen3-4B", p.Model)
	}
	assert.Equal(t, map[string]int{first.Content + second.Content: 2, apart.Content: 1}, texts, "the second request is the conversation's next turn")
}
