package supervisorreceiver

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"
)

// proxyHost offers an mlx_proxy extension that reports, as Unix
// nanoseconds in the atomics given (none: never), when the engine last sent
// stream bytes and last gave a whole answer.
type proxyHost struct{ activity, answer, inFlight *atomic.Int64 }

type proxyExt struct {
	extension.Extension
	h proxyHost
}

func (e proxyExt) LastEngineActivity() time.Time { return unixNanos(e.h.activity) }
func (e proxyExt) LastEngineAnswer() time.Time   { return unixNanos(e.h.answer) }
func (e proxyExt) InFlight() int64 {
	if e.h.inFlight == nil {
		return 0
	}
	return e.h.inFlight.Load()
}

func unixNanos(n *atomic.Int64) time.Time {
	if n == nil {
		return time.Time{}
	}
	return time.Unix(0, n.Load())
}

func (h proxyHost) GetExtensions() map[component.ID]component.Component {
	return map[component.ID]component.Component{component.MustNewID("mlx_proxy"): proxyExt{h: h}}
}

// An engine whose probes fail while it prints progress lines is busy, not
// hung: it is not killed. (A long unbatchable request holds mlx_lm's one
// generation thread, and the completion probe waits behind it.)
func TestBusyEngineWithOutputIsNotRestarted(t *testing.T) {
	var loaded, hung atomic.Bool
	loaded.Store(true)
	srv := engineAPI(t, &loaded, &hung)
	cfg := fastConfig(t, srv.URL, "sh", "-c", "while true; do echo 'Prompt processing progress: 1/2'; sleep 0.05; done")
	cfg.HealthCheck.HangAfter = 300 * time.Millisecond
	s := startSupervisor(t, cfg)
	require.Eventually(t, func() bool { return s.snap().ready }, 5*time.Second, 10*time.Millisecond)
	hung.Store(true)
	require.Eventually(t, func() bool { return s.snap().checks["fail"] >= 10 }, 10*time.Second, 10*time.Millisecond)
	assert.Zero(t, s.snap().crashes[ReasonHung], "killed a busy engine")
	assert.Zero(t, s.snap().restarts)
}

// The same with a silent engine whose tokens flow through the proxy.
func TestBusyEngineStreamingThroughTheProxyIsNotRestarted(t *testing.T) {
	var loaded, hung atomic.Bool
	loaded.Store(true)
	srv := engineAPI(t, &loaded, &hung)
	cfg := fastConfig(t, srv.URL, "sleep", "300")
	cfg.HealthCheck.HangAfter = 300 * time.Millisecond
	var last atomic.Int64
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				last.Store(time.Now().UnixNano())
			}
		}
	}()
	s := newSupervisor(cfg, zaptest.NewLogger(t))
	require.NoError(t, s.start(context.Background(), proxyHost{activity: &last}))
	t.Cleanup(func() { _ = s.shutdown(context.Background()) })
	require.Eventually(t, func() bool { return s.snap().ready }, 5*time.Second, 10*time.Millisecond)
	hung.Store(true)
	require.Eventually(t, func() bool { return s.snap().checks["fail"] >= 10 }, 10*time.Second, 10*time.Millisecond)
	assert.Zero(t, s.snap().crashes[ReasonHung], "killed an engine whose stream was flowing")
	// The stream stops: now it is hung.
	close(stop)
	require.Eventually(t, func() bool { return s.snap().crashes[ReasonHung] == 1 }, 10*time.Second, 10*time.Millisecond)
}

type waitingProxy struct {
	extension.Extension
	wait time.Duration
}

func (w waitingProxy) UpstreamWait() time.Duration { return w.wait }

type waitingHost struct{ wait time.Duration }

func (h waitingHost) GetExtensions() map[component.ID]component.Component {
	return map[component.ID]component.Component{component.MustNewID("mlx_proxy"): waitingProxy{wait: h.wait}}
}

// A proxy that waits longer for an answer than busy_limit excuses is
// warned about at start: the supervisor would restart an engine the proxy
// still waits on.
func TestBusyLimitShorterThanTheProxysWaitIsWarned(t *testing.T) {
	for _, c := range []struct {
		wait time.Duration
		warn bool
	}{{10 * time.Minute, false}, {30 * time.Minute, true}, {0, true}} {
		core, logs := observer.New(zap.WarnLevel)
		cfg := fastConfig(t, "http://127.0.0.1:1")
		s := newSupervisor(cfg, zap.New(core))
		require.NoError(t, s.start(context.Background(), waitingHost{wait: c.wait}))
		require.NoError(t, s.shutdown(context.Background()))
		assert.Equal(t, c.warn, logs.FilterMessageSnippet("busy_limit is shorter").Len() == 1, "proxy wait %s", c.wait)
	}
}
