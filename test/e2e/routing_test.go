//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

const (
	routeQwen  = "mlx-community/Qwen3-4B-4bit"
	routeLlama = "mlx-community/Llama-3.2-1B-Instruct-4bit"
)

// upstreamGauge is the front door's family{upstream=name}, -1 when the
// scrape fails or has no such series (so that neither reads as 0 or 1).
func upstreamGauge(s *stack, family, name string) float64 {
	sc, err := s.scrape("mlx_proxy")
	if err != nil {
		return -1
	}
	v, ok := sc.Value(family, "upstream", name)
	if !ok {
		return -1
	}
	return v
}

// sentTo is mlx_upstream_requests_total of upstream name, every choice.
func sentTo(t *testing.T, s *stack, name string) float64 {
	sc, err := s.scrape("mlx_proxy")
	require.NoError(t, err)
	sent := 0.0
	for _, m := range sc.Families["mlx_upstream_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "upstream" && l.GetValue() == name {
				sent += m.GetCounter().GetValue()
			}
		}
	}
	return sent
}

// routedAnswer is what a client of the front door got.
type routedAnswer struct {
	status int
	header http.Header
	body   []byte
	err    error
}

func routedChat(proxy, model, session string, timeout time.Duration) routedAnswer {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	body := fmt.Sprintf(`{"model": %q, "messages": [{"role": "user", "content": "hello"}], "max_tokens": 4}`, model)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, proxy+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Session-Id", session)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return routedAnswer{err: err}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return routedAnswer{status: res.StatusCode, header: res.Header, body: b, err: err}
}

// TestRoutingAcrossThreeEngines: one front door (the built collector)
// over three simulated engines on this host, each as its mlx_lm would be:
// a, supervised by the collector, as mlx_lm 0.31.3 (its /health stays 200
// when its generation thread wedges, so only its supervisor can tell);
// b, as a later mlx_lm from git (its /health answers 503 once its thread
// is dead, mlx-lm #1791); both serve Qwen3-4B; c serves another model.
// c is killed and comes back; a is killed and its supervisor starts it
// again; a wedges; b's thread dies and it is started
// again. After each engine goes out, no request goes to it, and the
// model's requests are served by what is left, or refused with 503 and
// Retry-After when nothing is.
func TestRoutingAcrossThreeEngines(t *testing.T) {
	portB, portC, enginePort := freePort(t), freePort(t), freePort(t)
	// b's thread dies at its 40th completion: after the kill and the
	// wedge phases, which send it fewer.
	b := startSimEngine(t, portB, "--model", routeQwen, "--sim-mlx-lm-version", "0.32.0", "--sim-metal-fault-after", "40")
	c := startSimEngine(t, portC, "--model", routeLlama)
	overlay := writeOverlay(t, "routing.yaml", fmt.Sprintf(`
receivers:
  mlx_supervisor:
    command: [%q, --model, %q, --host, 127.0.0.1, --port, "%d", --sim-load-delay, 0s,
      --sim-decode-tokens-per-second, "400", --sim-mlx-lm-version, 0.31.3, --sim-hang-after, "12"]
    health_check:
      interval: 1s
      timeout: 2s
      hang_after: 0s
extensions:
  mlx_proxy:
    upstream: ""
    upstream_probe_interval: 1s
    upstreams:
      - {name: a, endpoint: "http://127.0.0.1:%d", node: mac-a, models: [%q], max_in_flight: 8}
      - {name: b, endpoint: "http://127.0.0.1:%d", node: mac-b, models: [%q], max_in_flight: 8}
      - {name: c, endpoint: "http://127.0.0.1:%d", node: mac-c, models: [%q], max_in_flight: 8}
`, binary(t, "MLXSIM"), routeQwen, enginePort, enginePort, routeQwen, portB, routeQwen, portC, routeLlama))
	s := startCollector(t, collectorOptions{configs: append(append([]string{}, demoConfigs...), overlay), enginePort: enginePort,
		env: map[string]string{"MLXSIM_LOAD_DELAY": "0s"}})
	proxy := s.proxyURL("")
	scrape := func() *promtext.Scrape {
		sc, err := s.scrape("mlx_proxy")
		require.NoError(t, err)
		return sc
	}
	up := func(name string) float64 { return upstreamGauge(s, "mlx_upstream_up", name) }
	served := func(name string) float64 { return sentTo(t, s, name) }
	// servedBy sends each session once and holds that every one was
	// answered by the engine name.
	servedBy := func(t *testing.T, sessions []string, name string) {
		before := served(name)
		for _, session := range sessions {
			r := routedChat(proxy, routeQwen, session, 10*time.Second)
			require.NoError(t, r.err, session)
			assert.Equal(t, http.StatusOK, r.status, "%s: %s", session, r.body)
		}
		assert.Equal(t, before+float64(len(sessions)), served(name), "the conversations on %s", name)
	}
	// The front door answers once the supervised engine is ready.
	require.Eventually(t, func() bool { return routedChat(proxy, routeQwen, "warm", 5*time.Second).status == http.StatusOK },
		60*time.Second, 200*time.Millisecond, "the front door serves")

	require.Eventually(t, func() bool { return up("a") == 1 && up("b") == 1 && up("c") == 1 },
		30*time.Second, 100*time.Millisecond, "every engine in")

	// Sessions a takes and sessions b takes, by the front door's own choice.
	onA, onB := []string{}, []string{}
	for i := 0; i < 60 && (len(onA) < 3 || len(onB) < 3); i++ {
		session := fmt.Sprint("conv-", i)
		a0, b0 := served("a"), served("b")
		require.Equal(t, http.StatusOK, routedChat(proxy, routeQwen, session, 10*time.Second).status)
		switch {
		case served("a") > a0:
			onA = append(onA, session)
		case served("b") > b0:
			onB = append(onB, session)
		}
	}
	require.GreaterOrEqual(t, len(onA), 3, "conversations on a")
	require.GreaterOrEqual(t, len(onB), 3, "conversations on b")
	// A conversation stays where it is.
	b0 := served("b")
	for range 3 {
		require.Equal(t, http.StatusOK, routedChat(proxy, routeQwen, onB[0], 10*time.Second).status)
	}
	assert.Equal(t, b0+3, served("b"), "the same conversation, the same engine")

	t.Run("AKilledEngineIsOutAndComesBack", func(t *testing.T) {
		require.Equal(t, http.StatusOK, routedChat(proxy, routeLlama, "l1", 10*time.Second).status)
		c.kill()
		// The only engine of the model is gone: the proxy's own 503.
		res := routedChat(proxy, routeLlama, "l1", 10*time.Second)
		require.NoError(t, res.err)
		assert.Equal(t, http.StatusServiceUnavailable, res.status, "%s", res.body)
		assert.Equal(t, "1", res.header.Get("Retry-After"))
		var e struct{ Error struct{ Type, Code string } }
		require.NoError(t, json.Unmarshal(res.body, &e), "%s", res.body)
		assert.Equal(t, "no_upstream_available", e.Error.Code)
		require.Eventually(t, func() bool { return up("c") == 0 }, 15*time.Second, 200*time.Millisecond, "mlx_upstream_up{c} 0")
		v, _ := scrape().Value("mlx_model_upstreams_up", "model", routeLlama)
		assert.Equal(t, 0.0, v, "no engine of the model")
		// The other model is served all along.
		assert.Equal(t, http.StatusOK, routedChat(proxy, routeQwen, onA[0], 10*time.Second).status)

		c.start()
		require.Eventually(t, func() bool { return routedChat(proxy, routeLlama, "l1", 5*time.Second).status == http.StatusOK },
			30*time.Second, 250*time.Millisecond, "c serves again once its probe says so")
		assert.Equal(t, 1.0, up("c"))
	})

	t.Run("ASupervisedEngineRestartedTakesItsConversationsBack", func(t *testing.T) {
		pids := enginePids(s)
		require.Len(t, pids, 1, "a's engine")
		require.NoError(t, syscall.Kill(pids[0], syscall.SIGKILL))
		// Gone once its port refuses (a request sent while it dies is one
		// in flight on it, which fails).
		require.Eventually(t, func() bool {
			c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", enginePort), time.Second)
			if err == nil {
				c.Close()
			}
			return err != nil
		}, 10*time.Second, 20*time.Millisecond, "a's engine gone")
		require.Eventually(t, func() bool { return up("a") == 0 }, 15*time.Second, 100*time.Millisecond, "mlx_upstream_up{a} 0")
		// While it is down its conversations are served by b: a request
		// that cannot reach a is sent to b, never failed.
		servedBy(t, onA, "b")
		// Its supervisor starts it again and says ready; then each of its
		// conversations goes back to it (the same key ranks the same
		// engine first once it is in).
		require.Eventually(t, func() bool { return up("a") == 1 }, 30*time.Second, 100*time.Millisecond, "mlx_upstream_up{a} 1")
		for _, session := range onA {
			a0 := served("a")
			r := routedChat(proxy, routeQwen, session, 10*time.Second)
			require.Equal(t, http.StatusOK, r.status, "%s: %s", session, r.body)
			assert.Equal(t, a0+1, served("a"), "%s back on a", session)
		}
	})

	t.Run("AWedgedEngineIsOutByItsSupervisor", func(t *testing.T) {
		// a wedges at its 12th completion (its supervisor's probes count
		// too): a's conversations' requests then wait for ever, until the
		// client gives up.
		wedged := false
		for i := 0; i < 40 && !wedged; i++ {
			res := routedChat(proxy, routeQwen, onA[i%len(onA)], 3*time.Second)
			wedged = res.err != nil
		}
		require.True(t, wedged, "a wedged")
		// Its /health still answers 200 (mlx_lm 0.31.3); its supervisor's
		// probe does not, and the front door hears it.
		res, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/health", enginePort))
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, http.StatusOK, res.StatusCode, "mlx_lm 0.31.3's /health after a wedge")
		require.Eventually(t, func() bool { return up("a") == 0 }, 30*time.Second, 200*time.Millisecond, "mlx_upstream_up{a} 0")
		// Every conversation that was on a is now served, by b.
		servedBy(t, onA, "b")
	})

	t.Run("ADeadThreadIsOutAndTheModelWithIt", func(t *testing.T) {
		// b's thread dies at its 40th completion: its /health answers 503
		// (mlx-lm #1791) and, a being wedged, the model has no engine.
		for i := 0; i < 60 && up("b") == 1; i++ {
			routedChat(proxy, routeQwen, onB[i%len(onB)], 3*time.Second)
		}
		require.Eventually(t, func() bool { return up("b") == 0 }, 15*time.Second, 200*time.Millisecond, "mlx_upstream_up{b} 0")
		res := routedChat(proxy, routeQwen, onB[0], 10*time.Second)
		require.NoError(t, res.err)
		assert.Equal(t, http.StatusServiceUnavailable, res.status, "%s", res.body)
		assert.Equal(t, "1", res.header.Get("Retry-After"))
		v, _ := scrape().Value("mlx_model_upstreams_up", "model", routeQwen)
		assert.Equal(t, 0.0, v)

		// b started again: the model is served again.
		b.kill()
		b.start()
		require.Eventually(t, func() bool { return routedChat(proxy, routeQwen, onB[0], 5*time.Second).status == http.StatusOK },
			30*time.Second, 250*time.Millisecond, "b serves again")
	})

	// Every request the front door sent ended, the wedged ones included
	// (their clients gave up, and the proxy cancelled them).
	sc := scrape()
	for _, u := range []string{"a", "b", "c"} {
		v, ok := sc.Value("mlx_upstream_in_flight", "upstream", u)
		require.True(t, ok, u)
		assert.Equal(t, 0.0, v, "%s: nothing left in flight", u)
	}
}
