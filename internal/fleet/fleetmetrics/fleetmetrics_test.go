package fleetmetrics

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/metrictest"
)

// fake is a receiver that sends one batch with a point of its own and one
// that already names its node (the hardware receiver's).
type fake struct {
	next    consumer.Metrics
	started atomic.Int32
}

func (f *fake) Start(context.Context, component.Host) error { f.started.Add(1); return nil }
func (f *fake) Shutdown(context.Context) error              { return nil }

func (f *fake) send(t *testing.T) {
	md := pmetric.NewMetrics()
	ms := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics()
	g := ms.AppendEmpty()
	g.SetName("mlx_own")
	g.SetEmptyGauge().DataPoints().AppendEmpty().SetDoubleValue(7)
	h := ms.AppendEmpty()
	h.SetName("mlx_named")
	dp := h.SetEmptySum().DataPoints().AppendEmpty()
	dp.SetDoubleValue(1)
	dp.Attributes().PutStr("node", "rank1")
	h.Sum().SetIsMonotonic(true)
	h.Sum().SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	require.NoError(t, f.next.ConsumeMetrics(context.Background(), md))
}

func start(t *testing.T, dir string, up func() bool) (receiver.Metrics, *fake, *consumertest.MetricsSink) {
	sink := new(consumertest.MetricsSink)
	set := receivertest.NewNopSettings(component.MustNewType("mlx_test"))
	set.BuildInfo.Version = "9.9.9"
	r := New(set, fleet.Config{StateDirectory: dir}, fleet.Settings{Role: fleet.RoleKVCache, Node: "n1", Model: "org/m"}, sink, up)
	f := &fake{next: r.Consumer()}
	rcv := r.Wrap(f)
	require.NoError(t, rcv.Start(context.Background(), componenttest.NewNopHost()))
	return rcv, f, sink
}

func TestTheRoleStampsNodeAndAddsItsSeries(t *testing.T) {
	var up atomic.Bool
	rcv, f, sink := start(t, t.TempDir(), up.Load)
	assert.Equal(t, int32(1), f.started.Load(), "the receiver itself starts")
	f.send(t)
	up.Store(true)
	f.send(t)
	require.NoError(t, rcv.Shutdown(context.Background()))

	first := metrictest.Points(t, sink.AllMetrics()[0])
	assert.Equal(t, 7.0, first["mlx_own{node=n1}"], "node stamped")
	assert.Equal(t, 1.0, first["mlx_named{node=rank1}"], "a node of its own is kept")
	assert.Equal(t, 0.0, metrictest.Value(t, first, "mlx_agent_up{node=n1,role=kvcache}"))
	assert.Equal(t, 1.0, first["mlx_agent_info{commit=unknown,model=org/m,model_path="+fleet.ModelPath("org/m")+",node=n1,role=kvcache,version=9.9.9}"])
	assert.Equal(t, 0.0, metrictest.Value(t, first, "mlx_agent_restarts_total{node=n1,role=kvcache}"))
	assert.Equal(t, 0.0, metrictest.Value(t, first, "mlx_agent_crashes_total{node=n1,role=kvcache}"))
	assert.Contains(t, first, "mlx_agent_uptime_seconds{node=n1,role=kvcache}")
	second := metrictest.Points(t, sink.AllMetrics()[1])
	assert.Equal(t, 1.0, second["mlx_agent_up{node=n1,role=kvcache}"], "up as the role says at each batch")
}

// Shutdown is a clean stop: the next start is a restart, not a crash; a
// start after a run that never shut down is both.
func TestRestartsAcrossWrappedReceivers(t *testing.T) {
	dir := t.TempDir()
	rcv, _, _ := start(t, dir, nil)
	require.NoError(t, rcv.Shutdown(context.Background()))
	_, f, sink := start(t, dir, nil) // never shut down: as if killed
	f.send(t)
	p := metrictest.Points(t, sink.AllMetrics()[0])
	assert.Equal(t, 1.0, p["mlx_agent_restarts_total{node=n1,role=kvcache}"])
	assert.Equal(t, 0.0, metrictest.Value(t, p, "mlx_agent_crashes_total{node=n1,role=kvcache}"))
	assert.Equal(t, 1.0, p["mlx_agent_up{node=n1,role=kvcache}"], "nil up: up while it runs")

	rcv, f, sink = start(t, dir, nil)
	f.send(t)
	p = metrictest.Points(t, sink.AllMetrics()[0])
	assert.Equal(t, 2.0, p["mlx_agent_restarts_total{node=n1,role=kvcache}"])
	assert.Equal(t, 1.0, p["mlx_agent_crashes_total{node=n1,role=kvcache}"])
	require.NoError(t, rcv.Shutdown(context.Background()))
}

func TestShutdownWithoutStart(t *testing.T) {
	set := receivertest.NewNopSettings(component.MustNewType("mlx_test"))
	r := New(set, fleet.Config{StateDirectory: t.TempDir()}, fleet.Settings{Role: fleet.RoleJudge}, consumertest.NewNop(), nil)
	assert.NoError(t, r.Wrap(&fake{}).Shutdown(context.Background()))
}
