package supervisorreceiver

import (
	"errors"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/zap"
)

type failingWriter struct{ fail atomic.Bool }

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.fail.Load() {
		return 0, errors.New("no space left on device")
	}
	return len(p), nil
}

// A write error on the engine's log (a full disk) is counted and the
// engine's pipe is kept: the sink never fails the copy that feeds it.
func TestLogWriteErrorsKeepTheEnginesPipe(t *testing.T) {
	out := &failingWriter{}
	st := newStatus()
	sink := &logSink{out: out, st: st, logger: zap.NewNop()}
	n, err := sink.Write([]byte("line 1\n"))
	assert.Equal(t, 7, n)
	assert.NoError(t, err)
	out.fail.Store(true)
	for range 3 {
		n, err = sink.Write([]byte("line 2\n"))
		assert.Equal(t, 7, n, "the whole line is taken")
		assert.NoError(t, err, "the copy from the engine's pipe must not stop")
	}
	out.fail.Store(false)
	_, err = sink.Write([]byte("line 3\n"))
	assert.NoError(t, err)
	assert.Equal(t, int64(3), st.snapshot(true, st.procSince).logErrors)
}

// The engine's environment: what Python, MLX and the hub read, the
// configured passthrough and env; never the collector's credentials.
func TestEngineEnvironmentIsAnAllowlist(t *testing.T) {
	environ := []string{
		"PATH=/usr/bin", "HOME=/Users/me", "HF_HOME=/hf", "MLX_METAL_DEBUG=1", "LC_ALL=C", "PYTHONPATH=/p",
		"OPIK_API_KEY=secret", "MLX_OTELCOL_TOKEN=x", "MLX_METRICS_TOKEN=m", "AWS_SECRET_ACCESS_KEY=y", "GRAFANA_TOKEN=z", "MY_TOOL=1",
	}
	got := engineEnv(environ, []string{"MY_TOOL"}, map[string]string{"HF_HOME": "/override", "EXTRA": "2"})
	for _, want := range []string{"PATH=/usr/bin", "HOME=/Users/me", "HF_HOME=/override", "MLX_METAL_DEBUG=1", "LC_ALL=C", "PYTHONPATH=/p", "MY_TOOL=1", "EXTRA=2"} {
		assert.Contains(t, got, want)
	}
	for _, secret := range []string{"OPIK_API_KEY=secret", "AWS_SECRET_ACCESS_KEY=y", "GRAFANA_TOKEN=z", "HF_HOME=/hf", "MLX_METRICS_TOKEN=m"} {
		assert.NotContains(t, got, secret)
	}
	assert.True(t, slices.Contains(got, "MLX_OTELCOL_TOKEN=x"), "MLX_ is a prefix the engine's own settings use")
}
