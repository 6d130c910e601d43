package hwreceiver

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/metrictest"
)

func TestReceiverLifecycle(t *testing.T) {
	cfg := testConfig()
	cfg.CollectionInterval = 50 * time.Millisecond
	cfg.CommandTimeout = 40 * time.Millisecond
	sink := new(consumertest.MetricsSink)
	r, err := NewFactory().CreateMetrics(context.Background(), receivertest.NewNopSettings(componentType), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	require.Eventually(t, func() bool { return len(sink.AllMetrics()) >= 2 }, 20*time.Second, 10*time.Millisecond)
	require.NoError(t, r.Shutdown(context.Background()))

	p := points(t, sink.AllMetrics()[0], "test-node")
	assert.Equal(t, 1.0, p["mlx_hw_up"])
	assert.Contains(t, p, "mlx_hw_load1")

	r, err = NewFactory().CreateMetrics(context.Background(), receivertest.NewNopSettings(componentType), cfg, sink)
	require.NoError(t, err)
	assert.NoError(t, r.Shutdown(context.Background()), "shutdown without start")
}

func TestNodeDefaultsToTheHostName(t *testing.T) {
	assert.Equal(t, "rank1", fleet.NodeName("rank1"))
	assert.NotEmpty(t, fleet.NodeName(""))
}

// A failing source is logged when it starts failing and when it recovers,
// not at every scrape.
func TestSourceFailuresAreLoggedOnChange(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	var fail atomic.Bool
	src := &source{name: "vm_stat", collect: func(context.Context) (func(*sample), error) {
		if fail.Load() {
			return nil, errors.New("vm_stat: no page size")
		}
		return func(s *sample) { s.memFree = fp(1) }, nil
	}}
	cfg := testConfig()
	h := newHWScraperWith(cfg, zap.New(core), newProcMatcher(cfg, 1), []*source{src}, nil)
	scrape := func() map[string]float64 {
		md, err := h.scrape(context.Background())
		require.NoError(t, err, "a failing source is no scrape error")
		return points(t, md, "test-node")
	}

	assert.Equal(t, 1.0, scrape()["mlx_hw_source_up{source=vm_stat}"])
	fail.Store(true)
	for range 3 {
		p := scrape()
		assert.Equal(t, 0.0, metrictest.Value(t, p, "mlx_hw_source_up{source=vm_stat}"))
		assert.NotContains(t, p, "mlx_hw_mem_free_bytes")
	}
	fail.Store(false)
	scrape()
	scrape()

	var msgs []string
	for _, e := range logs.All() {
		msgs = append(msgs, e.Level.String()+": "+e.Message)
	}
	assert.Equal(t, []string{
		"warn: Hardware source failed; its series are not emitted until it works",
		"info: Hardware source works again",
	}, msgs)
	assert.Equal(t, "vm_stat: no page size", logs.All()[0].ContextMap()["error"])
}
