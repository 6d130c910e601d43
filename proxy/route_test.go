package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
)

const otherModel = "mlx-community/Llama-3.2-1B-Instruct-4bit"

// routedEngine is one simulated engine behind a routing proxy, with what
// reached it.
type routedEngine struct {
	name   string
	srv    *httptest.Server
	seen   atomic.Int64 // completion requests that reached it
	mu     sync.Mutex
	models []string // the model each completion named
	// health, when set, answers /health instead of the engine.
	health atomic.Int32
}

func (e *routedEngine) named() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.models...)
}

// routedRig is three engines: a and b serve testModel, c serves
// otherModel, behind one proxy.
type routedRig struct {
	*rig
	engines map[string]*routedEngine
}

func newRoutedRig(t *testing.T, configure func(*Config)) *routedRig {
	t.Helper()
	rr := &routedRig{engines: map[string]*routedEngine{}}
	cfg := DefaultConfig()
	cfg.ProbeInterval = time.Hour // the test probes
	cfg.HFHubCache = hubCacheWith(t, testModel, otherModel)
	for _, e := range []struct {
		name  string
		model string
	}{{"a", testModel}, {"b", testModel}, {"c", otherModel}} {
		so := simOptions()
		so.Model = e.model
		sim := mlxsim.New(so, io.Discard)
		t.Cleanup(sim.Close)
		re := &routedEngine{name: e.name}
		// mlxsim reads a body from its connection as Python does: a
		// recording hop in front reads it first, then relays.
		simSrv := httptest.NewServer(sim.Handler())
		t.Cleanup(simSrv.Close)
		target, _ := url.Parse(simSrv.URL)
		hop := httputil.NewSingleHostReverseProxy(target)
		hop.FlushInterval = -1
		re.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/health" && re.health.Load() != 0 {
				w.WriteHeader(int(re.health.Load()))
				return
			}
			if r.Method == http.MethodPost {
				re.seen.Add(1)
				b, _ := io.ReadAll(r.Body)
				var body struct {
					Model string `json:"model"`
				}
				_ = json.Unmarshal(b, &body)
				re.mu.Lock()
				re.models = append(re.models, body.Model)
				re.mu.Unlock()
				r.Body = io.NopCloser(bytes.NewReader(b))
			}
			hop.ServeHTTP(w, r)
		}))
		t.Cleanup(re.srv.Close)
		rr.engines[e.name] = re
		cfg.Upstreams = append(cfg.Upstreams, UpstreamConfig{Name: e.name, Endpoint: re.srv.URL, Models: []string{e.model}, MaxInFlight: 4})
	}
	cfg.Upstream = ""
	if configure != nil {
		configure(&cfg)
	}
	p, url := startProxy(t, cfg)
	rr.rig = &rig{t: t, proxy: p, url: url, client: testClient(t)}
	rr.probe()
	return rr
}

func (rr *routedRig) probe() { rr.proxy.probeOnce(rr.t.Context(), time.Second) }

// hubCacheWith is a Hugging Face cache holding the test model's config.json
// under each repo id.
func hubCacheWith(t *testing.T, repos ...string) string {
	dir := t.TempDir()
	cfg, err := os.ReadFile("../internal/modelconfig/testdata/qwen3-4b-4bit.json")
	require.NoError(t, err)
	for _, r := range repos {
		snap := filepath.Join(dir, "models--"+strings.ReplaceAll(r, "/", "--"), "snapshots", "0")
		require.NoError(t, os.MkdirAll(snap, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(snap, "config.json"), cfg, 0o600))
	}
	return dir
}

func chat(model, session, text string) (string, []string) {
	body := fmt.Sprintf(`{"model": %q, "messages": [{"role": "user", "content": %q}], "max_tokens": 4}`, model, text)
	var h []string
	if session != "" {
		h = []string{"X-Session-Id", session}
	}
	return body, h
}

func (rr *routedRig) chat(model, session, text string) response {
	body, h := chat(model, session, text)
	return rr.do(rr.url, http.MethodPost, "/v1/chat/completions", body, h...)
}

func TestARequestGoesOnlyWhereItsModelIs(t *testing.T) {
	rr := newRoutedRig(t, nil)
	for i := range 12 {
		require.Equal(t, http.StatusOK, rr.chat(testModel, "", fmt.Sprint("q", i)).status)
		require.Equal(t, http.StatusOK, rr.chat(otherModel, "", fmt.Sprint("q", i)).status)
	}
	a, b, c := rr.engines["a"], rr.engines["b"], rr.engines["c"]
	assert.Equal(t, int64(12), a.seen.Load()+b.seen.Load())
	assert.Positive(t, a.seen.Load(), "conversations spread over a and b")
	assert.Positive(t, b.seen.Load(), "conversations spread over a and b")
	assert.Equal(t, int64(12), c.seen.Load())
	// Each engine is sent its own model as default_model (one name per
	// engine, as with one), and the client reads the name it asked for.
	for _, e := range []*routedEngine{a, b, c} {
		for _, m := range e.named() {
			assert.Equal(t, defaultModelName, m, e.name)
		}
	}
	res := rr.chat(otherModel, "", "which model?")
	var ans struct{ Model string }
	require.NoError(t, json.Unmarshal(res.body, &ans))
	assert.Equal(t, otherModel, ans.Model)

	// A supervisor is never told another engine's answers are its own's.
	assert.True(t, rr.proxy.LastEngineAnswer().IsZero())
	assert.True(t, rr.proxy.LastEngineActivity().IsZero())

	// A model no upstream serves is refused before any engine sees it.
	res = rr.chat("mlx-community/Other-7B", "", "x")
	assert.Equal(t, http.StatusNotFound, res.status, "%s", res.body)
	assert.Equal(t, int64(12+12+1), a.seen.Load()+b.seen.Load()+c.seen.Load())
}

func TestAConversationStaysOnItsEngine(t *testing.T) {
	rr := newRoutedRig(t, nil)
	engineOf := func() string {
		for _, n := range []string{"a", "b"} {
			if rr.engines[n].seen.Load() > 0 {
				return n
			}
		}
		return ""
	}
	// By session.
	for range 10 {
		require.Equal(t, http.StatusOK, rr.chat(testModel, "session-1", "turn").status)
	}
	first := engineOf()
	assert.Equal(t, int64(10), rr.engines[first].seen.Load(), "every turn on one engine")

	// By the conversation's start, turn after turn.
	rr2 := newRoutedRig(t, nil)
	msgs := `{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is MLX?"}`
	for turn := range 6 {
		body := fmt.Sprintf(`{"model": %q, "messages": [%s], "max_tokens": 4}`, testModel, msgs)
		res := rr2.do(rr2.url, http.MethodPost, "/v1/chat/completions", body)
		require.Equal(t, http.StatusOK, res.status, "%s", res.body)
		msgs += fmt.Sprintf(`, {"role": "assistant", "content": "answer %d"}, {"role": "user", "content": "more %d"}`, turn, turn)
	}
	a, b := rr2.engines["a"].seen.Load(), rr2.engines["b"].seen.Load()
	assert.True(t, (a == 6 && b == 0) || (a == 0 && b == 6), "a conversation's turns on one engine: a %d, b %d", a, b)
}

// Engine a goes away: a request bound for it is sent to b, once, and a
// is ejected; the client never sees the failure.
func TestADeadEngineIsSkippedAndEjected(t *testing.T) {
	rr := newRoutedRig(t, nil)
	// A session that a takes.
	session := ""
	for i := range 100 {
		s := fmt.Sprint("s", i)
		before := rr.engines["a"].seen.Load()
		require.Equal(t, http.StatusOK, rr.chat(testModel, s, "x").status)
		if rr.engines["a"].seen.Load() > before {
			session = s
			break
		}
	}
	require.NotEmpty(t, session)
	rr.engines["a"].srv.Close() // its port refuses connections now
	// Its idle connections closed too: the proxy's transport drops them
	// when it reads the close, which the test does not race. (A request
	// written on one before that is one the engine may have taken: 502,
	// not retried.)
	rr.proxy.router.engines[0].transport.CloseIdleConnections()
	b0 := rr.engines["b"].seen.Load()
	res := rr.chat(testModel, session, "after a died")
	assert.Equal(t, http.StatusOK, res.status, "%s", res.body)
	assert.Equal(t, b0+1, rr.engines["b"].seen.Load(), "retried on b")
	snap := rr.proxy.router.pool.Snapshot()
	assert.True(t, snap[0].EjectedUntil.After(time.Now()), "a ejected")
	for range 5 {
		assert.Equal(t, http.StatusOK, rr.chat(testModel, session, "again").status)
	}
	assert.Equal(t, b0+6, rr.engines["b"].seen.Load())
	settle(rr.proxy)
	sc := rr.scrape()
	assert.Equal(t, 1.0, value(t, sc, "mlx_upstream_ejections_total", "upstream", "a"))
	assert.Equal(t, 1.0, value(t, sc, "mlx_upstream_retries_total", "upstream", "a"))
	assert.Equal(t, 0.0, value(t, sc, "mlx_upstream_retries_total", "upstream", "b"))
	assert.Equal(t, 1.0, value(t, sc, "mlx_upstream_requests_total", "upstream", "b", "choice", "retried"))
	for _, u := range []string{"a", "b", "c"} {
		assert.Equal(t, 0.0, value(t, sc, "mlx_upstream_in_flight", "upstream", u), "%s: every request ended", u)
	}

	// Then b goes too: no engine of the model is left; the other model's
	// still serves.
	rr.engines["b"].srv.Close()
	rr.proxy.router.engines[1].transport.CloseIdleConnections()
	res = rr.chat(testModel, session, "nobody")
	assert.Equal(t, http.StatusServiceUnavailable, res.status)
	assert.Equal(t, "1", res.header.Get("Retry-After"))
	var e struct{ Error struct{ Type, Code string } }
	require.NoError(t, json.Unmarshal(res.body, &e), "%s", res.body)
	assert.Equal(t, "server_error", e.Error.Type)
	assert.Equal(t, "no_upstream_available", e.Error.Code)
	assert.Equal(t, http.StatusOK, rr.chat(otherModel, "", "c is fine").status)
}

// /health 503 (mlx_lm from #1791 on, a dead generation thread) and a
// supervisor's not-ready (mlx_lm v0.31.3, whose /health stays 200) both
// take an engine out until they say otherwise.
func TestAnEngineOutOfHealthTakesNoRequest(t *testing.T) {
	rr := newRoutedRig(t, nil)
	rr.engines["a"].health.Store(http.StatusServiceUnavailable)
	rr.probe()
	for i := range 10 {
		require.Equal(t, http.StatusOK, rr.chat(testModel, fmt.Sprint("s", i), "x").status)
	}
	assert.Zero(t, rr.engines["a"].seen.Load(), "a said 503")
	sc := rr.scrape()
	assert.Equal(t, 0.0, value(t, sc, "mlx_upstream_up", "upstream", "a"))
	assert.Equal(t, 1.0, value(t, sc, "mlx_upstream_up", "upstream", "b"))
	assert.Equal(t, 1.0, value(t, sc, "mlx_model_upstreams_up", "model", testModel))
	assert.Equal(t, 1.0, value(t, sc, "mlx_model_upstreams_up", "model", otherModel))
	assert.Equal(t, 10.0, value(t, sc, "mlx_upstream_requests_total", "upstream", "b", "model", testModel, "choice", "affine"))
	rr.engines["a"].health.Store(0)
	rr.probe()
	rr.proxy.router.SetEngineReady(rr.engines["a"].srv.URL, false)
	rr.probe() // its /health says 200: the supervisor's word holds
	for i := range 10 {
		require.Equal(t, http.StatusOK, rr.chat(testModel, fmt.Sprint("s", i), "x").status)
	}
	assert.Zero(t, rr.engines["a"].seen.Load(), "a not ready")
	rr.proxy.router.SetEngineReady(rr.engines["a"].srv.URL, true)
	for i := range 20 {
		require.Equal(t, http.StatusOK, rr.chat(testModel, fmt.Sprint("s", i), "x").status)
	}
	assert.Positive(t, rr.engines["a"].seen.Load(), "a back")
}

// An engine its supervisor (re)started is in as soon as the supervisor
// says ready, not at the next probe: until then its model's every request
// would go to the others, or be refused with none left.
func TestAnEngineIsInWhenItsSupervisorSaysReady(t *testing.T) {
	rr := newRoutedRig(t, nil)
	rr.engines["a"].health.Store(http.StatusServiceUnavailable) // still loading
	rr.engines["b"].health.Store(http.StatusServiceUnavailable)
	rr.probe()
	assert.Equal(t, http.StatusServiceUnavailable, rr.chat(testModel, "s", "x").status, "no engine of the model is up")
	rr.engines["a"].health.Store(0)
	rr.proxy.router.SetEngineReady(rr.engines["a"].srv.URL, true) // no probe since
	assert.Equal(t, http.StatusOK, rr.chat(testModel, "s", "x").status)
	assert.Equal(t, int64(1), rr.engines["a"].seen.Load())
	assert.Equal(t, 1.0, value(t, rr.scrape(), "mlx_upstream_up", "upstream", "a"))
	// Not ready stays out whatever the probe said before.
	rr.proxy.router.SetEngineReady(rr.engines["a"].srv.URL, false)
	assert.Equal(t, http.StatusServiceUnavailable, rr.chat(testModel, "s", "x").status)
}

// A request the engine may have started (its connection was made and the
// request sent) is never sent again: the client gets 502.
func TestAStartedRequestIsNotRetried(t *testing.T) {
	var hits atomic.Int64
	dropper := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			return
		}
		hits.Add(1)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close() // as mlx_lm on an exception do_POST does not catch
		}
	}))
	t.Cleanup(dropper.Close)
	rr := newRoutedRig(t, func(c *Config) {
		c.Upstreams[0].Endpoint = dropper.URL
	})
	dropped := false
	for i := 0; i < 100 && !dropped; i++ {
		before, onB := hits.Load(), rr.engines["b"].seen.Load()
		res := rr.chat(testModel, fmt.Sprint("s", i), "x")
		if hits.Load() > before {
			dropped = true
			assert.Equal(t, http.StatusBadGateway, res.status, "%s", res.body)
			assert.Equal(t, onB, rr.engines["b"].seen.Load(), "not sent again to b")
			assert.Equal(t, before+1, hits.Load(), "sent once")
		}
	}
	require.True(t, dropped, "a request went to the dropping engine")
}

func TestReadRoutesAnsweredByTheRouter(t *testing.T) {
	rr := newRoutedRig(t, nil)
	res := rr.do(rr.url, http.MethodGet, "/v1/models", "")
	require.Equal(t, http.StatusOK, res.status)
	var list struct {
		Object string
		Data   []struct{ ID, Object string }
	}
	require.NoError(t, json.Unmarshal(res.body, &list))
	var ids []string
	for _, d := range list.Data {
		ids = append(ids, d.ID)
	}
	assert.Equal(t, []string{testModel, otherModel}, ids)
	res = rr.do(rr.url, http.MethodGet, "/v1/models/"+otherModel, "")
	require.NoError(t, json.Unmarshal(res.body, &list))
	require.Len(t, list.Data, 1)
	assert.Equal(t, otherModel, list.Data[0].ID)

	assert.Equal(t, http.StatusOK, rr.do(rr.url, http.MethodGet, "/health", "").status)
	for _, e := range rr.engines {
		e.health.Store(http.StatusServiceUnavailable)
	}
	rr.probe()
	res = rr.do(rr.url, http.MethodGet, "/health", "")
	assert.Equal(t, http.StatusServiceUnavailable, res.status)
	assert.Equal(t, 0.0, value(t, rr.scrape(), "mlx_up"), "no engine up")
}

// The checks that need a model's facts use the facts of the model asked
// for: top_k past the vocabulary never reaches an engine.
func TestHostileValuesAreCheckedPerModel(t *testing.T) {
	rr := newRoutedRig(t, nil)
	for _, m := range []string{testModel, otherModel} {
		body := fmt.Sprintf(`{"model": %q, "messages": [{"role": "user", "content": "x"}], "top_k": 100000000}`, m)
		res := rr.do(rr.url, http.MethodPost, "/v1/chat/completions", body)
		assert.Equal(t, http.StatusBadRequest, res.status, "%s: %s", m, res.body)
		assert.Contains(t, string(res.body), "top_k")
	}
	for _, e := range rr.engines {
		assert.Zero(t, e.seen.Load(), e.name)
	}
}

func TestUpstreamsConfigErrors(t *testing.T) {
	base := func() Config {
		c := DefaultConfig()
		c.Upstream = ""
		c.Upstreams = []UpstreamConfig{{Name: "a", Endpoint: "http://10.0.0.1:8081", Models: []string{"m1"}}}
		return c
	}
	ok := base()
	require.NoError(t, ok.Validate())
	for name, tc := range map[string]struct {
		edit func(*Config)
		want string
	}{
		"both":      {func(c *Config) { c.Upstream = "http://127.0.0.1:9999" }, "set one"},
		"no name":   {func(c *Config) { c.Upstreams[0].Name = "" }, "upstreams[0].name"},
		"twice":     {func(c *Config) { c.Upstreams = append(c.Upstreams, c.Upstreams[0]) }, "used twice"},
		"endpoint":  {func(c *Config) { c.Upstreams[0].Endpoint = "10.0.0.1:8081" }, "not an http(s) URL"},
		"no models": {func(c *Config) { c.Upstreams[0].Models = nil }, "must list the models"},
		"any":       {func(c *Config) { c.Upstreams[0].Models = []string{"*"} }, "not a model name"},
		"served":    {func(c *Config) { c.ServedModels = []string{"m1"} }, "served_models"},
		"first/other": {func(c *Config) {
			c.Upstreams = append(c.Upstreams, UpstreamConfig{Name: "b", Endpoint: "http://h:1", Models: []string{"m2", "m1"}})
		}, "first everywhere or nowhere"},
		"model":    {func(c *Config) { c.Model = "m9" }, "served by no upstream"},
		"ejection": {func(c *Config) { c.Routing.EjectBase = 0 }, "eject_base"},
		"affinity": {func(c *Config) { c.Routing.Affinity = "session" }, "routing.affinity"},
	} {
		c := base()
		tc.edit(&c)
		err := c.Validate()
		if assert.Error(t, err, name) {
			assert.Contains(t, err.Error(), tc.want, name)
		}
	}
}

// The span says which engine served the request, on which node, and how
// it was chosen; server.address is that engine's. So does the access log.
func TestTheSpanNamesTheEngine(t *testing.T) {
	rr := newRoutedRig(t, func(c *Config) {
		for i := range c.Upstreams {
			c.Upstreams[i].Node = "mac-" + c.Upstreams[i].Name
		}
	})
	sink := &spanSink{}
	detachOnCleanup(t, rr.proxy.AttachSpans(sink.spansSink))
	detachOnCleanup(t, rr.proxy.AttachAccessLog(sink.accessSink))
	t.Cleanup(func() { sink.checkKeysUnique(t) })
	require.Equal(t, http.StatusOK, rr.chat(otherModel, "s1", "hi").status)
	settle(rr.proxy)
	var got map[string]string
	require.Eventually(t, func() bool {
		sink.mu.Lock()
		defer sink.mu.Unlock()
		if len(sink.spans) == 0 {
			return false
		}
		got = map[string]string{}
		for _, kv := range sink.spans[0].Attributes {
			got[string(kv.Key)] = kv.Value.Emit()
		}
		return true
	}, 10*time.Second, 10*time.Millisecond)
	c, _ := url.Parse(rr.engines["c"].srv.URL)
	assert.Equal(t, "c", got["mlx.upstream"])
	assert.Equal(t, "mac-c", got["mlx.node"])
	assert.Equal(t, "affine", got["mlx.route"])
	assert.Equal(t, c.Hostname(), got["server.address"])
	assert.Equal(t, c.Port(), got["server.port"])
	require.Eventually(t, func() bool {
		sink.mu.Lock()
		defer sink.mu.Unlock()
		return len(sink.access) == 1
	}, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, "c", sink.access[0].Upstream)
	assert.Equal(t, "mac-c", sink.access[0].UpstreamNode)
}

// With affinity none, a conversation's turns spread over the engines.
func TestWithoutAffinityTurnsSpread(t *testing.T) {
	rr := newRoutedRig(t, func(c *Config) { c.Routing.Affinity = AffinityNone })
	for range 40 {
		require.Equal(t, http.StatusOK, rr.chat(testModel, "one-session", "same turn").status)
	}
	assert.Positive(t, rr.engines["a"].seen.Load())
	assert.Positive(t, rr.engines["b"].seen.Load())
}

// Both engines of a model gone at once: the request tries one, then the
// other, and each failed connection counts toward that engine's ejection.
func TestBothEnginesGoneEjectsBoth(t *testing.T) {
	rr := newRoutedRig(t, nil)
	for i, n := range []string{"a", "b"} {
		rr.engines[n].srv.Close()
		rr.proxy.router.engines[i].transport.CloseIdleConnections()
	}
	res := rr.chat(testModel, "s", "x")
	assert.Equal(t, http.StatusServiceUnavailable, res.status, "%s", res.body)
	settle(rr.proxy)
	sc := rr.scrape()
	for _, n := range []string{"a", "b"} {
		assert.Equal(t, 1.0, value(t, sc, "mlx_upstream_ejections_total", "upstream", n), n)
		assert.Equal(t, 0.0, value(t, sc, "mlx_upstream_in_flight", "upstream", n), n)
	}
	snap := rr.proxy.router.pool.Snapshot()
	assert.True(t, snap[0].EjectedUntil.After(time.Now()) && snap[1].EjectedUntil.After(time.Now()), "both ejected")
}
