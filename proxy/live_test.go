package proxy

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// liveSink collects live records.
type liveSink struct {
	mu   sync.Mutex
	recs []*LiveRecord
}

func (s *liveSink) consume(_ context.Context, recs []*LiveRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs = append(s.recs, recs...)
	return nil
}

// of waits until requestID's stream has ended and returns its records.
func (s *liveSink) of(t *testing.T, requestID string) []*LiveRecord {
	t.Helper()
	var out []*LiveRecord
	require.Eventually(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		out = out[:0]
		for _, r := range s.recs {
			if r.RequestID == requestID && r.Event != LiveStatus {
				out = append(out, r)
			}
		}
		return len(out) > 0 && out[len(out)-1].Event == LiveEnd
	}, 5*time.Second, time.Millisecond)
	return out
}

func liveRig(t *testing.T, configure func(*Config)) (*rig, *liveSink) {
	r := newRig(t, withConfig(func(c *Config) {
		if configure != nil {
			configure(c)
		}
	}))
	sink := &liveSink{}
	detachOnCleanup(t, r.proxy.AttachLive(sink.consume))
	return r, sink
}

// deltaText joins the content, reasoning and tool call text of deltas, as
// the receiver reads them.
func deltaText(t *testing.T, recs []*LiveRecord) (content, reasoning, tools string) {
	for _, r := range recs {
		if r.Event != LiveDelta {
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct {
					Content, Reasoning string
					ToolCalls          []struct {
						Function struct{ Name, Arguments string }
					} `json:"tool_calls"`
				}
			}
		}
		require.NoError(t, json.Unmarshal(r.Body, &c), string(r.Body))
		for _, ch := range c.Choices {
			content += ch.Delta.Content
			reasoning += ch.Delta.Reasoning
			for _, tc := range ch.Delta.ToolCalls {
				tools += tc.Function.Name + "(" + tc.Function.Arguments + ")"
			}
		}
	}
	return
}

func finishOf(t *testing.T, end *LiveRecord) any {
	var c struct {
		Choices []struct {
			FinishReason any `json:"finish_reason"`
		}
	}
	require.NoError(t, json.Unmarshal(end.Body, &c))
	require.Len(t, c.Choices, 1)
	return c.Choices[0].FinishReason
}

func TestLiveStreamOfAStreamedChat(t *testing.T) {
	r, sink := liveRig(t, nil)
	resp := r.do(r.url, http.MethodPost, "/v1/chat/completions", reasoningBody, SessionHeader, "panel-1")
	require.Equal(t, http.StatusOK, resp.status)
	recs := sink.of(t, "panel-1")
	require.GreaterOrEqual(t, len(recs), 3)
	assert.Equal(t, LiveStart, recs[0].Event)
	assert.Equal(t, LiveEnd, recs[len(recs)-1].Event)
	got := streamOf(t, resp, false)
	content, reasoning, _ := deltaText(t, recs)
	assert.Equal(t, got.Content, content, "the deltas carry what the client got")
	assert.Equal(t, got.Reasoning, reasoning)
	// One delta per data event the client got, but [DONE].
	events := 0
	for _, e := range sseEvents(resp.body) {
		if strings.HasPrefix(e, "data: {") {
			events++
		}
	}
	deltas := recs[1 : len(recs)-1]
	assert.Len(t, deltas, events)
	for i, d := range deltas {
		assert.Equal(t, LiveDelta, d.Event)
		assert.Equal(t, i, d.TokenIndex)
		assert.True(t, strings.HasPrefix(d.GenerationID, "chatcmpl-"), d.GenerationID)
	}
	for _, rec := range recs {
		assert.Equal(t, testModel, rec.ModelID)
		assert.Equal(t, "single", rec.Topology)
	}
	assert.Equal(t, got.Finish, finishOf(t, recs[len(recs)-1]))
	assert.False(t, recs[0].Time.After(recs[1].Time))
}

func TestLiveStreamOfAToolCallAndOfAWholeAnswer(t *testing.T) {
	r, sink := liveRig(t, func(c *Config) { c.DestreamFraction = 1 })
	resp := r.do(r.url, http.MethodPost, "/v1/chat/completions", toolStreamBody, SessionHeader, "tool")
	recs := sink.of(t, "tool")
	_, _, tools := deltaText(t, recs)
	got := streamOf(t, resp, false)
	require.Len(t, got.ToolCalls, 1)
	assert.Equal(t, strings.TrimSuffix(got.ToolCalls[0], "@0"), tools)
	require.Len(t, recs, 3, "destreamed: start, the whole answer, end")

	resp = r.do(r.url, http.MethodPost, "/v1/chat/completions", chatBody, SessionHeader, "whole")
	recs = sink.of(t, "whole")
	require.Len(t, recs, 3)
	var answer struct {
		Choices []struct {
			Message struct{ Content string }
		}
	}
	require.NoError(t, json.Unmarshal(resp.body, &answer))
	content, _, _ := deltaText(t, recs)
	assert.Equal(t, answer.Choices[0].Message.Content, content)
}

func TestLiveWithoutTokens(t *testing.T) {
	r, sink := liveRig(t, func(c *Config) { c.Live.IncludeTokens = false })
	r.do(r.url, http.MethodPost, "/v1/chat/completions", chatStreamBody, SessionHeader, "quiet")
	recs := sink.of(t, "quiet")
	require.Len(t, recs, 2)
	assert.Equal(t, LiveStart, recs[0].Event)
	assert.Equal(t, LiveEnd, recs[1].Event)
}

func TestLiveSessionIdentity(t *testing.T) {
	assert.Equal(t, "s-9", namedSession(httptestRequest(""), map[string]json.RawMessage{"metadata": json.RawMessage(`{"session_id": "s-9"}`)}))
	assert.Equal(t, "h", namedSession(httptestRequest("h"), map[string]json.RawMessage{"metadata": json.RawMessage(`{"session_id": "s-9"}`)}), "the header wins")
	assert.Empty(t, namedSession(httptestRequest(""), nil))
	a, b := newSession(), newSession()
	assert.True(t, strings.HasPrefix(a, "req-"))
	assert.NotEqual(t, a, b, "one per request")
}

// A client that names no session: its next request, which sends the
// conversation so far with the answer it got, continues the panel (a
// second stream_start of the same request.id, VeloBenchmark's next turn);
// a new conversation, or one that does not carry the answer, has a panel
// of its own.
func TestLiveConversationContinuesItsPanel(t *testing.T) {
	r, sink := liveRig(t, nil)
	seen := map[*LiveRecord]bool{}
	ask := func(body string) (id, content string) {
		resp := r.do(r.url, http.MethodPost, "/v1/chat/completions", body)
		var answer struct {
			Choices []struct{ Message struct{ Content string } }
		}
		require.NoError(t, json.Unmarshal(resp.body, &answer))
		var start *LiveRecord
		require.Eventually(t, func() bool {
			sink.mu.Lock()
			defer sink.mu.Unlock()
			for _, rec := range sink.recs {
				if rec.Event == LiveStart && !seen[rec] {
					start = rec
					seen[rec] = true
					return true
				}
			}
			return false
		}, 5*time.Second, time.Millisecond)
		return start.RequestID, answer.Choices[0].Message.Content
	}
	q := func(s string) string { j, _ := json.Marshal(s); return string(j) }
	first, a1 := ask(`{"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Name a colour"}], "max_tokens": 8}`)
	second, a2 := ask(`{"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Name a colour"}, {"role": "assistant", "content": ` + q(" "+a1+"\n") + `}, {"role": "user", "content": "Another"}], "max_tokens": 8}`)
	assert.Equal(t, first, second, "the next turn continues the panel")
	third, _ := ask(`{"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Name a colour"}, {"role": "assistant", "content": ` + q(a1) + `}, {"role": "user", "content": "Another"}, {"role": "assistant", "content": [{"type": "text", "text": ` + q(a2) + `}]}, {"role": "user", "content": "And one more"}], "max_tokens": 8}`)
	assert.Equal(t, first, third, "and the turn after, with the answer given as parts")
	other, _ := ask(`{"messages": [{"role": "user", "content": "Name a colour"}, {"role": "assistant", "content": "not what was answered"}, {"role": "user", "content": "Another"}], "max_tokens": 8}`)
	assert.NotEqual(t, first, other, "an answer the proxy did not give: a panel of its own")
	fresh, _ := ask(`{"messages": [{"role": "user", "content": "Name a colour"}], "max_tokens": 8}`)
	assert.NotEqual(t, first, fresh)
}

func httptestRequest(session string) *http.Request {
	r, _ := http.NewRequest(http.MethodPost, "http://x/v1/chat/completions", nil)
	if session != "" {
		r.Header.Set(SessionHeader, session)
	}
	return r
}

func TestLiveStatusRecords(t *testing.T) {
	_, sink := liveRig(t, func(c *Config) { c.Live.StatusInterval = 20 * time.Millisecond; c.Live.Topology = "tp2" })
	require.Eventually(t, func() bool {
		sink.mu.Lock()
		defer sink.mu.Unlock()
		for _, r := range sink.recs {
			if r.Event == LiveStatus && r.ModelID == testModel && r.Topology == "tp2" {
				return true
			}
		}
		return false
	}, 5*time.Second, 5*time.Millisecond)
}

// In an MLX ring the topology comes from the launcher's hostfile.
func TestLiveTopologyFromTheRingHostfile(t *testing.T) {
	hosts := filepath.Join(t.TempDir(), "hosts.json")
	require.NoError(t, os.WriteFile(hosts, []byte(`[{"ssh":"a","ips":["10.0.0.1"]},{"ssh":"b","ips":["10.0.0.2"]},{"ssh":"c","ips":["10.0.0.3"]}]`), 0o600))
	_, sink := liveRig(t, func(c *Config) {
		c.Live.StatusInterval = 20 * time.Millisecond
		c.Live.Topology = ""
		c.Live.RingHostfile = hosts
	})
	require.Eventually(t, func() bool {
		sink.mu.Lock()
		defer sink.mu.Unlock()
		return len(sink.recs) > 0 && sink.recs[0].Topology == "tp3"
	}, 5*time.Second, 5*time.Millisecond)

	cfg := DefaultConfig()
	cfg.Upstream = "http://127.0.0.1:1"
	cfg.Live.RingHostfile = filepath.Join(t.TempDir(), "missing.json")
	_, err := New(cfg, nil)
	require.ErrorContains(t, err, "ring_hostfile", "a missing hostfile stops the start")
}

// Without a pipeline nothing is made; a full ring drops and counts, and
// the client's stream is what the engine sent.
func TestLiveNeverHoldsUpAStream(t *testing.T) {
	r := newRig(t, withConfig(func(c *Config) { c.Live.QueueSize = 2 }))
	resp := r.post("/v1/chat/completions", chatStreamBody)
	require.Equal(t, http.StatusOK, resp.status)
	r.do(r.direct, http.MethodPost, "/v1/chat/completions", chatStreamBody) // the twin in the same state
	sc := r.scrape()
	assert.Zero(t, value(t, sc, "mlx_live_records_dropped_total", "reason", "no_pipeline"), "nothing built")

	release := make(chan struct{})
	detachOnCleanup(t, r.proxy.AttachLive(func(ctx context.Context, _ []*LiveRecord) error {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}))
	defer close(release)
	direct := r.do(r.direct, http.MethodPost, "/v1/chat/completions", chatStreamBody)
	resp = r.post("/v1/chat/completions", chatStreamBody)
	assert.Equal(t, normalize(direct.body), normalize(resp.body), "byte for byte the engine's stream, but ids and times")
	assert.Positive(t, value(t, r.scrape(), "mlx_live_records_dropped_total", "reason", "queue_full"))
}

// model.id is the served model card's base_model (an mlx-community
// conversion names its original), else the served name; live.model_id
// stamps another.
func TestLiveModelIDFromTheModelCard(t *testing.T) {
	dir := t.TempDir()
	c := Config{Model: "mlx-community/Qwen3-4B-4bit", ModelConfig: dir}
	modelID := func() string { id, _, _ := c.liveModel(); return id }
	assert.Equal(t, "mlx-community/Qwen3-4B-4bit", modelID(), "no card: the served name")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"model_type": "qwen3"}`), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README.md"), []byte("---\nlibrary_name: mlx\nbase_model: Qwen/Qwen3-4B\n---\n"), 0o600))
	assert.Equal(t, "Qwen/Qwen3-4B", modelID())
	c.Live.ModelID = "my-catalog-name"
	assert.Equal(t, "my-catalog-name", modelID())
}

// When a live pipeline first attaches, the proxy says once which model.id
// the records carry and why: a model fetched by mlx_lm alone has no
// README.md (its download skips it), so model.id silently fell back to the
// served name before.
func TestLiveSaysOnceWhichModelIDAndWhy(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"model_type": "qwen3"}`), 0o600))
	for _, tc := range []struct {
		name   string
		setup  func(c *Config)
		level  zapcore.Level
		id     string
		reason string
	}{
		{"no card", func(*Config) {}, zapcore.WarnLevel, "mlx-community/Qwen3-4B-4bit",
			"the served name: no README.md beside " + filepath.Join(dir, "config.json") + ": mlx_lm does not download it; `hf download mlx-community/Qwen3-4B-4bit README.md` or set MLX_LIVE_MODEL_NAME"},
		{"card", func(*Config) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "README.md"), []byte("---\nbase_model: Qwen/Qwen3-4B\n---\n"), 0o600))
		}, zapcore.InfoLevel, "Qwen/Qwen3-4B", "the base_model of " + filepath.Join(dir, "README.md")},
		{"set", func(c *Config) { c.Live.ModelID = "my-catalog-name" }, zapcore.InfoLevel, "my-catalog-name",
			"live.model_id (MLX_LIVE_MODEL_NAME) sets it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Model, cfg.ModelConfig = "mlx-community/Qwen3-4B-4bit", dir
			tc.setup(&cfg)
			core, logs := observer.New(zapcore.DebugLevel)
			p, err := New(cfg, zap.New(core))
			require.NoError(t, err)
			t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
			sink := func(context.Context, []*LiveRecord) error { return nil }
			p.AttachLive(sink)(context.Background())
			detachOnCleanup(t, p.AttachLive(sink)) // a second attach says nothing more
			said := logs.FilterMessage("Live stream model.id").All()
			require.Len(t, said, 1)
			assert.Equal(t, tc.level, said[0].Level)
			assert.Equal(t, tc.id, said[0].ContextMap()["model.id"])
			assert.Equal(t, tc.reason, said[0].ContextMap()["why"])
		})
	}
}

// Two people holding the same conversation (the body's user) are kept
// apart; a request without an assistant message continues nothing.
func TestLiveConversationDigest(t *testing.T) {
	msgs := json.RawMessage(`[{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}, {"role": "user", "content": "More"}]`)
	a, okA, _ := conversation(map[string]json.RawMessage{"messages": msgs, "user": json.RawMessage(`"ann"`)})
	b, okB, _ := conversation(map[string]json.RawMessage{"messages": msgs, "user": json.RawMessage(`"bob"`)})
	require.True(t, okA && okB)
	assert.NotEqual(t, a, b)
	_, ok, state := conversation(map[string]json.RawMessage{"messages": json.RawMessage(`[{"role": "user", "content": "Hi"}]`)})
	assert.False(t, ok)
	assert.NotNil(t, state, "its answer may be continued")
	_, ok, state = conversation(map[string]json.RawMessage{"prompt": json.RawMessage(`"Hi"`)})
	assert.False(t, ok)
	assert.Nil(t, state, "a completion prompt is no conversation")
}
