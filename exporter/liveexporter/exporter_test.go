package liveexporter

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/mlx-otelcol/mlx-otelcol/standins/velotest"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/configtest"
)

func TestEndpointRules(t *testing.T) {
	cfg, err := configtest.Load[*Config](t, NewFactory(), "")
	require.NoError(t, err)
	u, _ := cfg.logsURL()
	assert.Equal(t, "http://velobench-host:9381/v1/logs", u)
	cfg, err = configtest.Load[*Config](t, NewFactory(), "noport")
	require.NoError(t, err)
	u, _ = cfg.logsURL()
	assert.Equal(t, "http://velobench-host:4318/v1/logs", u, "the emitter's default port")
	_, err = configtest.Load[*Config](t, NewFactory(), "https")
	require.ErrorContains(t, err, "is https, but no tls setting says how to trust it")
	_, err = configtest.Load[*Config](t, NewFactory(), "https_tls")
	require.NoError(t, err)
	_, err = configtest.Load[*Config](t, NewFactory(), "empty")
	require.ErrorContains(t, err, "endpoint: must be set")
}

// host offers a stand-in for the mlx_proxy extension's drop counter.
type host struct{ ext *drops }

func (h host) GetExtensions() map[component.ID]component.Component {
	return map[component.ID]component.Component{component.MustNewID("mlx_proxy"): h.ext}
}

type drops struct {
	component.StartFunc
	component.ShutdownFunc
	mu sync.Mutex
	n  map[string]int
}

func (d *drops) CountLiveDrops(reason string, n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.n[reason] += n
}

func records(n int) plog.Logs {
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for i := 0; i < n; i++ {
		lr := lrs.AppendEmpty()
		lr.Attributes().PutStr("event", "stream_delta")
		lr.Attributes().PutStr("request.id", "r")
		lr.Body().SetStr(`{"choices":[{"index":0,"delta":{"content":"x"}}]}`)
	}
	return ld
}

func start(t *testing.T, endpoint string) (*drops, func(plog.Logs) error) {
	cfg := createDefaultConfig().(*Config)
	cfg.Endpoint = endpoint
	exp, err := NewFactory().CreateLogs(context.Background(), exportertest.NewNopSettings(componentType), cfg)
	require.NoError(t, err)
	d := &drops{n: map[string]int{}}
	require.NoError(t, exp.Start(context.Background(), host{d}))
	t.Cleanup(func() { assert.NoError(t, exp.Shutdown(context.Background())) })
	return d, func(ld plog.Logs) error { return exp.ConsumeLogs(context.Background(), ld) }
}

// The records arrive as OTLP/HTTP-JSON, which VeloBenchmark reads.
func TestPostsJSON(t *testing.T) {
	velo, err := velotest.Start()
	require.NoError(t, err)
	defer velo.Close()
	d, consume := start(t, velo.Endpoint())
	ld := records(3)
	// VeloBenchmark opens a panel at its stream_start only.
	open := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	open.Attributes().PutStr("event", "stream_start")
	open.Body().SetEmptyMap()
	require.NoError(t, consume(ld))
	st, ok := velo.Stream("r")
	require.True(t, ok, "the receiver read the records: JSON, not protobuf")
	assert.Equal(t, "xx", st.Text)
	assert.Equal(t, []int{3}, velo.Posts())
	assert.Empty(t, d.n)
}

// A receiver that is down loses the batch, counted in the proxy's series;
// the pipeline is not held up and gets no error.
func TestADownReceiverIsCounted(t *testing.T) {
	velo, err := velotest.Start()
	require.NoError(t, err)
	endpoint := velo.Endpoint()
	velo.Close()
	d, consume := start(t, endpoint)
	begin := time.Now()
	require.NoError(t, consume(records(5)))
	require.NoError(t, consume(records(2)))
	assert.Less(t, time.Since(begin), 5*time.Second)
	assert.Equal(t, map[string]int{"export_failed": 7}, d.n)
}

func TestStartWithoutTheExtensionFailsClearly(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Endpoint = "http://127.0.0.1:1"
	exp, err := NewFactory().CreateLogs(context.Background(), exportertest.NewNopSettings(componentType), cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Shutdown(context.Background()), "safe without Start")
	err = exp.Start(context.Background(), componenttest.NewNopHost())
	require.ErrorContains(t, err, `extension "mlx_proxy" is not running`)
}
