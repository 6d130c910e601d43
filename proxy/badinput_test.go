package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
)

func openAIError(t *testing.T, body []byte) (code, message string) {
	t.Helper()
	var e struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    string `json:"code"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(body, &e), "an OpenAI-style error body: %s", body)
	require.NotEmpty(t, e.Error.Message)
	require.NotEmpty(t, e.Error.Type)
	return e.Error.Code, e.Error.Message
}

// Wrong types of the members the engine validates are refused by the
// proxy, as the engine would drop the connection on them; every request
// is counted under the configured model.
func TestWrongTypesAreRefusedAndCounted(t *testing.T) {
	r := newRig(t)
	refused := r.post("/v1/chat/completions", `{"model": 42, "messages": [{"role": "user", "content": "hi"}]}`)
	assert.Equal(t, http.StatusBadRequest, refused.status)
	code, _ := openAIError(t, refused.body)
	assert.Equal(t, "invalid_type", code)
	refused = r.post("/v1/chat/completions", `{"messages": [{"role": "user", "content": "hi"}], "max_tokens": "many"}`)
	assert.Equal(t, http.StatusBadRequest, refused.status)

	body := `{"messages": "hello", "temperature": "hot"}`
	// mlx_lm drops such a connection without an answer (its validation
	// error escapes the handler): the proxy answers 400 naming the member.
	_, err := r.client.Post(r.direct+"/v1/chat/completions", "application/json", strings.NewReader(body))
	require.Error(t, err, "the engine itself gives no answer")
	via := r.post("/v1/chat/completions", body)
	assert.Equal(t, http.StatusBadRequest, via.status)
	code, _ = openAIError(t, via.body)
	assert.Equal(t, "invalid_type", code)
	assert.Equal(t, "temperature", errorOf(t, via)["param"])
	sc := r.scrape()
	assert.Equal(t, 3.0, value(t, sc, "mlx_error_total", "model", testModel, "status", "4xx", "kind", "chat"))
	assert.Equal(t, 3.0, value(t, sc, "mlx_requests_total", "model", testModel, "streaming", "false", "kind", "chat"))
	assert.Equal(t, 0.0, value(t, sc, "mlx_in_flight", "model", testModel))
	_, isTemp := sc.Value("mlx_temperature")
	assert.False(t, isTemp, "a temperature that is not a number sets nothing")
}

// A body over the limit gets 413 and never reaches the engine, whether
// its size was announced or it came chunked.
func TestOversizedBody(t *testing.T) {
	r := newRig(t, func(c *Config, _ *mlxsim.Options) { c.MaxRequestBodyBytes = 1024 })
	big := `{"messages": [{"role": "user", "content": "` + strings.Repeat("x", 2000) + `"}]}`

	resp := r.post("/v1/chat/completions", big)
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.status)
	code, _ := openAIError(t, resp.body)
	assert.Equal(t, "request_too_large", code)

	req, err := http.NewRequest(http.MethodPost, r.url+"/v1/chat/completions", io.MultiReader(strings.NewReader(big[:600]), strings.NewReader(big[600:])))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	res, err := r.client.Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode)
	openAIError(t, b)

	// A body just under the limit goes through.
	ok := r.post("/v1/chat/completions", `{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}`)
	assert.Equal(t, http.StatusOK, ok.status)

	sc := r.scrape()
	assert.Equal(t, 2.0, value(t, sc, "mlx_error_total", "model", testModel, "status", "4xx", "kind", "chat"))
	assert.Equal(t, 3.0, value(t, sc, "mlx_requests_total", "model", testModel, "streaming", "false", "kind", "chat"))
}

// A client that goes away mid-stream cancels the engine's request; the
// request is counted, not as an error.
func TestClientDisconnectMidStreamCancelsUpstream(t *testing.T) {
	r := newRig(t, func(_ *Config, o *mlxsim.Options) { o.DecodeTPS = 20 })
	body := `{"messages": [{"role": "user", "content": "Write a very long essay"}], "max_tokens": 4000, "stream": true}`
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url+"/v1/chat/completions", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.client.Do(req)
	require.NoError(t, err)
	rd := bufio.NewReader(resp.Body)
	for {
		line, err := rd.ReadString('\n')
		require.NoError(t, err)
		if strings.HasPrefix(line, "data: {") {
			break
		}
	}
	require.Equal(t, int64(1), r.enginel.open.Load(), "the engine is generating")
	cancel()
	resp.Body.Close()

	// At 20 tokens/s the answer would take minutes; the engine's
	// connection closes as soon as the proxy cancels it.
	require.Eventually(t, func() bool { return r.enginel.open.Load() == 0 }, 10*time.Second, 10*time.Millisecond,
		"the upstream request ended with the client")
	require.Eventually(t, func() bool {
		v, _ := r.scrape().Value("mlx_requests_total", "streaming", "true", "kind", "chat")
		return v == 1
	}, 5*time.Second, 10*time.Millisecond)
	sc := r.scrape()
	assert.Equal(t, 0.0, value(t, sc, "mlx_in_flight", "model", testModel))
	assert.Equal(t, 0.0, value(t, sc, "mlx_error_total", "status", "5xx", "kind", "chat"), "a client leaving is not a service error")
	assert.Equal(t, 0.0, value(t, sc, "mlx_error_total", "status", "4xx", "kind", "chat"))
	assert.Equal(t, 1.0, value(t, sc, "mlx_ttft_seconds"), "the first token did come")
	_, observed := sc.Value("mlx_generation_seconds")
	assert.False(t, observed, "an unfinished answer has no generation time")
}

// An engine that dies mid-stream: the client sees its stream end (no
// [DONE]) and the error is counted.
func TestUpstreamKilledMidStream(t *testing.T) {
	r := newRig(t)
	// The headers and a little more, then the engine's socket closes.
	r.enginel.killNext(400)
	resp := r.post("/v1/chat/completions", chatStreamBody)
	assert.Equal(t, http.StatusOK, resp.status, "the headers had come")
	assert.NotContains(t, string(resp.body), "[DONE]")

	sc := r.scrape()
	assert.Equal(t, 1.0, value(t, sc, "mlx_error_total", "model", testModel, "status", "5xx", "kind", "chat"))
	assert.Equal(t, 1.0, value(t, sc, "mlx_requests_total", "streaming", "true", "kind", "chat"))
	assert.Equal(t, 0.0, value(t, sc, "mlx_in_flight", "model", testModel))
	assert.Equal(t, 0.0, value(t, sc, "mlx_tokens_completion_total", "kind", "chat"), "no usage came: no guessed counts")

	// The next request works.
	ok := r.post("/v1/chat/completions", chatBody)
	assert.Equal(t, http.StatusOK, ok.status)
}

// An engine that is not there: 503 with an OpenAI-style body, counted as
// a 5xx, and mlx_up 0 from the probe.
func TestUpstreamDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())

	r := newRig(t, func(c *Config, _ *mlxsim.Options) { c.Upstream = closed })
	for _, path := range []string{"/v1/chat/completions", "/v1/models"} {
		method := http.MethodPost
		body := chatStreamBody
		if path == "/v1/models" {
			method, body = http.MethodGet, ""
		}
		resp := r.do(r.url, method, path, body)
		assert.Equal(t, http.StatusServiceUnavailable, resp.status, path)
		assert.Equal(t, "application/json", resp.header.Get("Content-Type"))
		code, msg := openAIError(t, resp.body)
		assert.Equal(t, "upstream_unavailable", code)
		assert.NotContains(t, msg, ln.Addr().String(), "no internal address in the message")
	}
	r.proxy.probe(context.Background(), time.Second)
	sc := r.scrape()
	assert.Equal(t, 0.0, value(t, sc, "mlx_up"))
	assert.Equal(t, 1.0, value(t, sc, "mlx_error_total", "model", testModel, "status", "5xx", "kind", "chat"))
	assert.Equal(t, 1.0, value(t, sc, "mlx_requests_total", "streaming", "true", "kind", "chat"))
	assert.Equal(t, 0.0, value(t, sc, "mlx_in_flight", "model", testModel))
}

// An engine that hangs before its headers: 504 after the configured wait.
func TestUpstreamResponseHeaderTimeout(t *testing.T) {
	r := newRig(t, func(c *Config, o *mlxsim.Options) {
		c.UpstreamResponseHeaderTimeout = 200 * time.Millisecond
		o.HangAfter = 1
	})
	require.Equal(t, http.StatusOK, r.post("/v1/chat/completions", chatBody).status)
	resp := r.post("/v1/chat/completions", chatBody)
	assert.Equal(t, http.StatusGatewayTimeout, resp.status)
	code, _ := openAIError(t, resp.body)
	assert.Equal(t, "upstream_timeout", code)
	assert.Equal(t, 1.0, value(t, r.scrape(), "mlx_error_total", "status", "5xx", "kind", "chat"))
}
