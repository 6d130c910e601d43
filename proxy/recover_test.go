package proxy

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// panicsExpected lets a test's recovered panics pass the rig's check that
// nothing panicked.
var panicsExpected atomic.Bool

// panicAt makes the proxy panic once at one place (panicHook), for the
// length of a test.
func panicAt(t *testing.T, where string) *atomic.Bool {
	var fired atomic.Bool
	h := func(w string) {
		if w == where && fired.CompareAndSwap(false, true) {
			panic("injected panic at " + w)
		}
	}
	panicHook.Store(&h)
	t.Cleanup(func() { panicHook.Store(nil) })
	return &fired
}

// A panic in a request's handler, in the scorer's worker or in the probe
// loop is recovered, counted and logged; the proxy goes on serving (before,
// the worker's and the probe's would have killed the collector, and the
// handler's passed unseen at debug level).
func TestPanicsAreRecoveredAndCounted(t *testing.T) {
	for _, where := range []string{panicHandler, panicScorer, panicProbe} {
		t.Run(where, func(t *testing.T) {
			panicsExpected.Store(true)
			t.Cleanup(func() { panicsExpected.Store(false) }) // runs after the rig's check
			r := newRig(t)
			fired := panicAt(t, where)
			if where == panicProbe {
				go r.proxy.probeLoop(t.Context(), make(chan struct{}))
			}
			// The first request may be the one that panics (its connection
			// is aborted); the proxy serves the ones after it.
			if resp, err := r.client.Post(r.url+"/v1/chat/completions", "application/json", strings.NewReader(chatBody)); err == nil {
				resp.Body.Close()
			}
			require.Eventually(t, fired.Load, 5*time.Second, 10*time.Millisecond, "the panic fired")
			got := r.post("/v1/chat/completions", chatBody)
			assert.Equal(t, http.StatusOK, got.status, "served after the panic")
			require.Eventually(t, func() bool {
				v, _ := r.scrape().Value("mlx_proxy_panics_total", "where", where)
				return v == 1
			}, 5*time.Second, 10*time.Millisecond, "the panic is counted")
		})
	}
}
