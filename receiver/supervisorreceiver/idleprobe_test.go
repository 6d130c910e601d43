package supervisorreceiver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

// While users' answers flow through the proxy, the engine is not sent
// completion probes (each costs it a generation); they are counted as
// skipped, and probing starts again when the traffic stops.
func TestProbesOnlyWhenNoUserWasAnswered(t *testing.T) {
	var probes atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/chat/completions" {
			probes.Add(1)
		}
		_, _ = w.Write([]byte(`{"id": "chatcmpl-1", "choices": [{"index": 0, "finish_reason": "length"}]}`))
	}))
	t.Cleanup(srv.Close)
	cfg := fastConfig(t, srv.URL, "sleep", "300")
	var last atomic.Int64
	s := newSupervisor(cfg, zaptest.NewLogger(t))
	require.NoError(t, s.start(context.Background(), proxyHost{answer: &last}))
	t.Cleanup(func() { _ = s.shutdown(context.Background()) })
	require.Eventually(t, func() bool { return s.snap().ready }, 5*time.Second, 10*time.Millisecond)

	// Users are answered every 10 ms until five checks have been skipped.
	stop, answering := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(answering)
		for {
			last.Store(time.Now().UnixNano())
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	skipped := func() int64 { return s.snap().checks["skipped"] }
	// A first skip: a check saw the answers, and any probe before it is done.
	from := skipped()
	require.Eventually(t, func() bool { return skipped() > from }, 5*time.Second, time.Millisecond)
	before, from := probes.Load(), skipped()
	require.Eventually(t, func() bool { return skipped() >= from+5 }, 10*time.Second, time.Millisecond)
	close(stop)
	<-answering
	// Five checks while users were answered: at most a probe or two where
	// the machine was too busy to run the answering goroutine for a whole
	// interval.
	assert.LessOrEqual(t, probes.Load()-before, int64(2), "probed an engine that was answering users")
	assert.True(t, s.snap().ready)

	// No more answers: the probes come back, and once they have, no check
	// is skipped.
	stopped := probes.Load()
	require.Eventually(t, func() bool { return probes.Load() > stopped }, 5*time.Second, time.Millisecond)
	back, from := probes.Load(), skipped()
	require.Eventually(t, func() bool { return probes.Load() >= back+4 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, from, skipped())
}

// The models probe finds a local --model under the resolved absolute path
// mlx_lm lists it as (mlx_lm v0.31.3 server.py, handle_models_request:
// str(model_path.resolve())).
func TestModelsProbeKnowsALocalPath(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	require.NoError(t, os.Mkdir(real, 0o755))
	require.NoError(t, os.Symlink(real, filepath.Join(dir, "qwen")))
	t.Chdir(dir)
	resolved, err := filepath.EvalSymlinks(real)
	require.NoError(t, err)
	assert.True(t, listedAs(resolved, "./qwen"), "resolved here")
	assert.True(t, listedAs("/Users/me/models/qwen", "models/qwen"), "an engine elsewhere: the path's end")
	assert.True(t, listedAs("mlx-community/Qwen3-4B-4bit", "mlx-community/Qwen3-4B-4bit"))
	assert.False(t, listedAs("mlx-community/Qwen3-4B-4bit", "mlx-community/Qwen3-1.7B-4bit"))
	assert.False(t, listedAs("/x/mlx-community/Qwen3-4B-4bitX", "mlx-community/Qwen3-4B-4bit"))
	assert.False(t, listedAs("/", "."))
}
