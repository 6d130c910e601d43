//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/syncbuf"
)

// Jaeger with the shipped config keeps its traces in Badger under
// JAEGER_DATA_DIR: a trace stored before a restart is read back after it,
// whether Jaeger was stopped (SIGTERM, as obs-stack.sh stop and make run's
// end do) or killed (SIGKILL, a crash).
func TestJaegerKeepsTracesAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	j := runJaegerAt(t, dir)
	first := newTraceID(t)
	postOTLPSpan(t, j.otlpHTTP, first)
	j.waitTrace(t, first)

	j.stop(t, syscall.SIGTERM)
	j = runJaegerAt(t, dir)
	_, _, found := j.trace(t, first)
	require.True(t, found, "trace %s, stored before a SIGTERM, is read back after the restart", first)

	second := newTraceID(t)
	postOTLPSpan(t, j.otlpHTTP, second)
	j.waitTrace(t, second)
	j.stop(t, syscall.SIGKILL)
	j = runJaegerAt(t, dir)
	for _, id := range []string{first, second} {
		_, _, found := j.trace(t, id)
		require.True(t, found, "trace %s is read back after a SIGKILL and a restart", id)
	}
	entries, err := os.ReadDir(filepath.Join(dir, "values"))
	require.NoError(t, err)
	require.NotEmpty(t, entries, "Badger's value log is under JAEGER_DATA_DIR/values")
}

// restartableJaeger is one run of Jaeger on a given data directory.
type restartableJaeger struct {
	jaeger
	otlpHTTP string
	cmd      *exec.Cmd
	out      *syncbuf.Buffer
	done     chan struct{}
}

func runJaegerAt(t *testing.T, dir string) *restartableJaeger {
	t.Helper()
	j := &restartableJaeger{
		jaeger:   jaeger{query: fmt.Sprintf("127.0.0.1:%d", freePort(t)), otlp: fmt.Sprintf("127.0.0.1:%d", freePort(t))},
		otlpHTTP: fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		out:      &syncbuf.Buffer{},
		done:     make(chan struct{}),
	}
	j.cmd = exec.Command(binary(t, "JAEGER"), "--config", filepath.Join(repoRoot, "config/jaeger/jaeger.yaml"))
	j.cmd.Env = append(os.Environ(), "JAEGER_DATA_DIR="+dir, "JAEGER_RETENTION=24h",
		"JAEGER_QUERY_HTTP="+j.query, "JAEGER_OTLP_GRPC="+j.otlp, "JAEGER_OTLP_HTTP="+j.otlpHTTP,
		fmt.Sprintf("JAEGER_QUERY_GRPC=127.0.0.1:%d", freePort(t)))
	j.cmd.Stdout, j.cmd.Stderr = j.out, j.out
	require.NoError(t, j.cmd.Start())
	go func() { _ = j.cmd.Wait(); close(j.done) }()
	t.Cleanup(func() {
		j.stop(t, syscall.SIGKILL)
		if t.Failed() {
			t.Logf("jaeger output:\n%s", tailOf([]byte(j.out.String()), 3000))
		}
	})
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + j.query + "/api/services")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 30*time.Second, 50*time.Millisecond, "jaeger answers on %s", j.query)
	return j
}

// stop signals Jaeger and waits until it has exited (a second Jaeger
// cannot open the store while the first holds Badger's lock).
func (j *restartableJaeger) stop(t *testing.T, sig syscall.Signal) {
	select {
	case <-j.done:
		return
	default:
	}
	_ = j.cmd.Process.Signal(sig)
	select {
	case <-j.done:
	case <-time.After(30 * time.Second):
		_ = j.cmd.Process.Kill()
		<-j.done
		t.Errorf("jaeger did not exit within 30 s of %s", sig)
	}
}

// postOTLPSpan sends one span of trace traceID by OTLP/HTTP (JSON), as any
// OpenTelemetry SDK would.
func postOTLPSpan(t *testing.T, otlpHTTP, traceID string) {
	t.Helper()
	now := time.Now()
	body := fmt.Sprintf(`{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"mlx-otelcol-test"}}]},
"scopeSpans":[{"spans":[{"traceId":%q,"spanId":"00f067aa0ba902b7","name":"chat mlx-community/Qwen3-4B-4bit","kind":2,
"startTimeUnixNano":"%d","endTimeUnixNano":"%d"}]}]}]}`, traceID, now.Add(-time.Second).UnixNano(), now.UnixNano())
	resp, err := http.Post("http://"+otlpHTTP+"/v1/traces", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}
