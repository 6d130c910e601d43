//go:build e2e && fault

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// engineKillers are requests that each got 200 from the proxy and reached
// the engine unchanged, where mlx_lm v0.31.3 drops the connection (its
// validate_model_parameters raises out of do_POST), its one generation
// thread dies (every later request waits for a restart), or it prefills a
// prompt far over the context. Each must be the proxy's own 400 naming
// the member (param), and never reach the engine.
type engineKiller struct {
	name, route, body, param, code string
}

func engineKillers() []engineKiller {
	const chat, text = "/v1/chat/completions", "/v1/completions"
	msgs := `"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4`
	with := func(member string) string { return `{` + msgs + `, ` + member + `}` }
	// An 8 MiB body whose prompt is about 1.5 million tokens of ordinary
	// text: 36 times the model's 40,960-token context.
	words := strings.Repeat("the quick brown fox jumps over the lazy dog. ", (8<<20-200)/45)
	return []engineKiller{
		{"XTC on (mlx-lm#1257: apply_xtc raises in the thread)", chat, with(`"temperature": 0.7, "xtc_probability": 0.5, "xtc_threshold": 0.1`), "xtc_probability", "unsupported_parameter"},
		{"top_k at the vocabulary (apply_top_k raises in the thread)", chat, with(`"temperature": 0.7, "top_k": 151936`), "top_k", "invalid_value"},
		{"a lone surrogate in stop (the tokenizer raises in the thread)", chat, with(`"stop": "\ud800"`), "stop", "invalid_value"},
		{"a lone surrogate in a message", chat, `{"messages": [{"role": "user", "content": "hi \udc00"}], "max_tokens": 4}`, "messages", "invalid_value"},
		{"a lone surrogate in a prompt", text, `{"prompt": "once \ud83d upon", "max_tokens": 4}`, "prompt", "invalid_value"},
		{"temperature a string (ValueError out of do_POST)", chat, with(`"temperature": "hot"`), "temperature", "invalid_type"},
		{"top_p over 1", chat, with(`"top_p": 2`), "top_p", "invalid_value"},
		{"xtc_probability an int where a float is required", chat, with(`"xtc_probability": 0`), "xtc_probability", "invalid_type"},
		{"top_logprobs over 11", chat, with(`"logprobs": true, "top_logprobs": 20`), "top_logprobs", "invalid_value"},
		{"seed a string", chat, with(`"seed": "x"`), "seed", "invalid_type"},
		{"a negative seed (mx.random.seed's uint64_t raises after the 200)", chat, with(`"seed": -1`), "seed", "invalid_value"},
		{"an integer penalty past int32 (MLX's cast raises in the thread)", chat, with(`"temperature": 0.7, "presence_penalty": 10000000000`), "presence_penalty", "invalid_value"},
		{"a context size past int32 (MLX's slice raises in the thread)", chat, with(`"repetition_penalty": 1.1, "repetition_context_size": 10000000000`), "repetition_context_size", "invalid_value"},
		{"an integer of 4,301 digits (json.loads raises ValueError)", chat, with(`"seed": 1` + strings.Repeat("0", 4300)), "seed", "invalid_value"},
		{"an 8 MiB prompt", text, `{"prompt": "` + words + `", "max_tokens": 4}`, "prompt", "context_length_exceeded"},
		{"an 8 MiB chat", chat, `{"messages": [{"role": "user", "content": "` + words + `"}], "max_tokens": 4}`, "messages", "context_length_exceeded"},
	}
}

// recordingRelay sits between the proxy and the engine and keeps the body
// of every completion request that reached the engine.
type recordingRelay struct {
	mu     sync.Mutex
	bodies []string
}

func (rr *recordingRelay) start(t *testing.T, enginePort int) string {
	t.Helper()
	target, err := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", enginePort))
	require.NoError(t, err)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.FlushInterval = -1
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			rr.mu.Lock()
			rr.bodies = append(rr.bodies, string(b))
			rr.mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		rp.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

func (rr *recordingRelay) seen() []string {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return append([]string(nil), rr.bodies...)
}

// qwen3ModelDir is a model directory with the Qwen3-4B config.json and a
// tokenizer.json of Qwen3's shape (NFC, a regex split and byte-level BPE)
// whose longest entry is 128 bytes: the proxy bounds a prompt's tokens by
// it.
func qwen3ModelDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cfg, err := os.ReadFile(filepath.Join(repoRoot, "internal/modelconfig/testdata/qwen3-4b-4bit.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o600))
	vocab := map[string]int{strings.Repeat("Ġ", 128): 0, "the": 1, "Ġquick": 2}
	tok, err := json.Marshal(map[string]any{
		"added_tokens":  []map[string]any{{"id": 151643, "content": "<|endoftext|>", "special": true}},
		"normalizer":    map[string]any{"type": "NFC"},
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{map[string]any{"type": "Split", "behavior": "Isolated", "invert": false}, map[string]any{"type": "ByteLevel", "add_prefix_space": false}}},
		"decoder":       map[string]any{"type": "ByteLevel"},
		"model":         map[string]any{"type": "BPE", "vocab": vocab, "merges": []string{}, "byte_fallback": false, "unk_token": nil, "fuse_unk": false},
	})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tokenizer.json"), tok, 0o600))
	return dir
}

// The requests that killed or hung the engine, or dropped its connection,
// through the built collector: each is the proxy's own 400 naming the
// member, a recording relay between the proxy and the engine sees none of
// them, the engine never restarts, and ordinary requests (sampling
// parameters included) still pass and are served.
func TestFaultHostileParameters(t *testing.T) {
	enginePort := freePort(t)
	var relay recordingRelay
	via := relay.start(t, enginePort)
	f := startFaultCollector(t, collectorOptions{
		configs:    append(demoConfigs, engineOverlay(t)),
		enginePort: enginePort,
		sets:       []string{"extensions::mlx_proxy::upstream=" + via, "extensions::mlx_proxy::model_config=" + qwen3ModelDir(t)},
	})
	waitEngineReady(f.stack)
	base := f.proxyURL("")
	require.False(t, completion(t.Context(), base+"/v1/chat/completions", false, 4), "warm-up")
	before := len(relay.seen())
	require.Positive(t, before, "the relay is on the proxy's path to the engine")
	f.mark()

	failed := int64(0)
	killers := engineKillers()
	for _, k := range killers {
		resp, b := postJSON(t, base+k.route, k.body)
		var e struct {
			Error struct {
				Type, Code, Message string
				Param               *string
			} `json:"error"`
		}
		_ = json.Unmarshal(b, &e)
		ok := assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s: %.300s", k.name, b) &&
			assert.Equal(t, k.code, e.Error.Code, k.name) && assert.NotNil(t, e.Error.Param, k.name) &&
			assert.Equal(t, k.param, *e.Error.Param, k.name) && assert.Equal(t, "invalid_request_error", e.Error.Type, k.name)
		if !ok {
			failed++
		}
	}
	assert.Len(t, relay.seen(), before, "the engine saw none of them")

	// Ordinary requests with sampling parameters pass, unchanged.
	good := []string{
		`{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4, "temperature": 0.7, "top_p": 0.9, "top_k": 40, "min_p": 0.05, "seed": 7, "logprobs": true, "top_logprobs": 3, "stop": ["\n\n"]}`,
		`{"messages": [{"role": "user", "content": "hi \ud83d\ude00"}], "max_tokens": 4, "presence_penalty": 0.5, "frequency_penalty": 0.5, "repetition_penalty": 1.1, "logit_bias": {"100": -5}, "logprobs": true, "top_logprobs": 3}`,
	}
	for _, g := range good {
		resp, b := postJSON(t, base+"/v1/chat/completions", g)
		assert.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
	}
	seen := relay.seen()
	require.Len(t, seen, before+len(good), "the ordinary requests reached the engine")
	// (Each asks for logprobs: one that does not gets them asked for, to
	// score the answer.)
	assert.Equal(t, good, seen[before:], "byte for byte")
	assert.False(t, completion(t.Context(), base+"/v1/chat/completions", true, 8), "the engine still serves")
	assert.Equal(t, 0.0, supervisorValue(f, "mlx_server_restarts_total"), "nothing a client sent brought the engine down")
	sc, err := f.scrape("mlx_proxy")
	require.NoError(t, err)
	assert.Equal(t, float64(len(killers)), sum(sc, "mlx_http_refusals_total", "status", "400"), "each counted as a refusal")
	f.finish(t, faultRow{name: "requests that killed the engine: sampling values, surrogates, long integers, 8 MiB prompts", sent: int64(len(killers) + len(good)),
		failed: failed, hasFailed: true, note: "failed: not the proxy's own 400 naming the member"})
}

// The same requests with several engines behind the front door: each is
// checked against the facts of the model it names before any engine is
// chosen, so neither engine sees one, and an ordinary request still goes
// through.
func TestFaultHostileParametersWithUpstreams(t *testing.T) {
	enginePort, portB := freePort(t), freePort(t)
	b := startSimEngine(t, portB, "--model", "mlx-community/Qwen3-4B-4bit")
	var relayA, relayB recordingRelay
	viaA, viaB := relayA.start(t, enginePort), relayB.start(t, b.port)
	overlay := writeOverlay(t, "upstreams.yaml", fmt.Sprintf(`
extensions:
  mlx_proxy:
    upstream: ""
    model_config: %q
    upstreams:
      - {name: a, endpoint: %q, models: [mlx-community/Qwen3-4B-4bit]}
      - {name: b, endpoint: %q, models: [mlx-community/Qwen3-4B-4bit]}
`, qwen3ModelDir(t), viaA, viaB))
	f := startFaultCollector(t, collectorOptions{configs: append(append([]string{}, demoConfigs...), engineOverlay(t), overlay), enginePort: enginePort})
	waitEngineReady(f.stack)
	base := f.proxyURL("")
	require.Eventually(t, func() bool {
		return !completion(t.Context(), base+"/v1/chat/completions", false, 4)
	}, 30*time.Second, 200*time.Millisecond, "the front door serves")
	beforeA, beforeB := len(relayA.seen()), len(relayB.seen())
	require.Positive(t, beforeA+beforeB, "the relays are on the proxy's paths to the engines")

	killers := engineKillers()
	for _, k := range killers {
		resp, body := postJSON(t, base+k.route, k.body)
		var e struct {
			Error struct {
				Code  string
				Param *string
			} `json:"error"`
		}
		_ = json.Unmarshal(body, &e)
		if assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s: %.300s", k.name, body) && assert.NotNil(t, e.Error.Param, k.name) {
			assert.Equal(t, k.code, e.Error.Code, k.name)
			assert.Equal(t, k.param, *e.Error.Param, k.name)
		}
	}
	assert.Len(t, relayA.seen(), beforeA, "engine a saw none of them")
	assert.Len(t, relayB.seen(), beforeB, "engine b saw none of them")
	assert.False(t, completion(t.Context(), base+"/v1/chat/completions", true, 8), "the engines still serve")
	assert.Equal(t, 0.0, supervisorValue(f, "mlx_server_restarts_total"), "nothing a client sent brought an engine down")
}
