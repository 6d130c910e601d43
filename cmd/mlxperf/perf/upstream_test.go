package perf

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func startUpstream(t *testing.T) *Upstream {
	t.Helper()
	up, err := StartUpstream()
	require.NoError(t, err)
	t.Cleanup(up.Close)
	return up
}

// The upstream answers as mlxsim does: logprobs only when asked, a stream
// of one event per token that ends in [DONE].
func TestUpstreamReplaysTheSimulatedEngine(t *testing.T) {
	up := startUpstream(t)
	get := func(body string) string {
		resp, err := http.Post(up.URL()+"/v1/chat/completions", "application/json", strings.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
		return string(b)
	}
	plain := get(ChatBody(false))
	assert.Contains(t, plain, `"chat.completion"`)
	assert.NotContains(t, plain, `"top_logprobs"`)
	withLP := get(strings.TrimSuffix(ChatBody(false), "}") + `,"logprobs":true,"top_logprobs":3}`)
	assert.Contains(t, withLP, `"top_logprobs"`)
	stream := get(ChatBody(true))
	assert.True(t, strings.HasSuffix(stream, "data: [DONE]\n\n"))
	assert.Positive(t, up.Tokens())
	assert.LessOrEqual(t, up.Tokens(), AnswerTokens)
	assert.Greater(t, strings.Count(stream, "data: "), up.Tokens(), "an event per token, and [DONE]")
}

// Every path is driven the same way; a closed loop against the upstream
// itself answers every request.
func TestDriveAndChunkDelays(t *testing.T) {
	up := startUpstream(t)
	client := NewClient()
	r := Drive(client, up.URL(), Cell{Stream: true, Concurrency: 4}, 200*time.Millisecond)
	assert.Positive(t, r.Requests)
	assert.Zero(t, r.Failed, "%v", r.FirstErr)
	assert.Positive(t, r.RPS)
	assert.GreaterOrEqual(t, r.P99, r.P50)

	up.SetPace(time.Millisecond)
	d, err := ChunkDelays(client, up, up.URL(), 2, 4)
	require.NoError(t, err)
	events := len(up.answers[answerKind{stream: true}].events)
	assert.Len(t, d, 4*events, "one delay per event of every answer")
	for _, x := range d {
		assert.GreaterOrEqual(t, x, time.Duration(0))
	}
}

// A failed request is counted, and the load goes on.
func TestDriveCountsFailures(t *testing.T) {
	r := Drive(NewClient(), "http://127.0.0.1:1", Cell{Stream: false, Concurrency: 1}, 50*time.Millisecond)
	assert.Zero(t, r.Requests)
	assert.Positive(t, r.Failed)
	assert.Error(t, r.FirstErr)
}

func TestGoals(t *testing.T) {
	table := ProxyTable{}
	for _, name := range pathOrder {
		table[name] = map[Cell]Result{}
		for _, c := range Cells {
			table[name][c] = Result{RPS: 1000, P50: 1, P99: 2}
		}
	}
	// The proxy: 0.5x the Go proxy's throughput at c=16 non-stream, 0.8x
	// at c=64 stream, 0.15 ms more at c=1 stream's p50, all else equal.
	table[PathProxy][Cell{false, 16}] = Result{RPS: 500, P50: 1, P99: 2}
	table[PathProxy][Cell{true, 64}] = Result{RPS: 800, P50: 1, P99: 2}
	table[PathProxy][Cell{true, 1}] = Result{RPS: 1000, P50: 1.15, P99: 2}
	goals := Goals(table, ChunkTable{PathDirect: {0, 0.1, 1}, PathNginx: {0, 0.2, 1}, PathProxy: {0, 0.45, 1}}, &Footprint{
		Idle:  Usage{Cores: 0.002, RSSKiB: 50 << 10},
		Load:  Usage{Cores: 0.03},
		Nginx: Usage{Cores: 0.012},
	}, 86e6)
	unmet := map[string]bool{}
	for _, g := range goals {
		if !g.Met {
			unmet[g.What] = true
		}
	}
	assert.Equal(t, map[string]bool{
		"c=16 non-stream: throughput >= 0.60x the Go proxy":                true,
		"c=64 stream: throughput >= 0.85x the Go proxy":                    true,
		"c=1 stream: p50 <= the Go proxy's + 0.1 ms":                       true,
		"4 streamed chats: collector CPU <= nginx's relay + 1 % of a core": true,
		"idle: RSS <= 40 MiB":                                              true,
		"binary <= 60 MB":                                                  true,
	}, unmet)
	assert.Len(t, goals, 2*2+4+1+4+1)
}
