// Package fleetmetrics puts a metric receiver's role in the fleet contract
// (package fleet) by construction: Wrap gives the receiver a consumer that
// stamps node on every data point and adds the role's mlx_agent_* series
// to each batch, and a receiver whose Start and Shutdown count the role's
// starts and clean stops.
package fleetmetrics

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver"

	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet"
)

// scopeName is the instrumentation scope of the agent series.
const scopeName = "github.com/mlx-otelcol/mlx-otelcol/internal/fleet"

// Role is a receiver's role: its Agent, the consumer to build the
// receiver on, and the wrapper of the receiver built.
type Role struct {
	Agent *fleet.Agent
	next  consumer.Metrics
	up    func() bool
	start time.Time
}

// New describes a receiver's role. role names it (Role, Model, and Node
// when the receiver has its own); the version is the collector's
// (set.BuildInfo), the state directory cfg's. up says, at each batch,
// whether the role works (package fleet's doc says what that is per
// role); nil means "while it runs".
func New(set receiver.Settings, cfg fleet.Config, role fleet.Settings, next consumer.Metrics, up func() bool) *Role {
	role.Version = set.BuildInfo.Version
	role.StateDir = cfg.StateDirectory
	if up == nil {
		up = func() bool { return true }
	}
	return &Role{Agent: fleet.New(role), next: next, up: up}
}

// Consumer is what the receiver sends its metrics to: next, with node on
// every point and the agent series added.
func (r *Role) Consumer() consumer.Metrics { return (*stamper)(r) }

// Wrap returns rcv with the role's Start before rcv's and its clean stop
// after rcv's Shutdown.
func (r *Role) Wrap(rcv receiver.Metrics) receiver.Metrics {
	return &wrapped{Metrics: rcv, role: r}
}

type wrapped struct {
	receiver.Metrics
	role *Role
}

func (w *wrapped) Start(ctx context.Context, host component.Host) error {
	now := time.Now()
	w.role.start = now
	if err := w.role.Agent.Start(now); err != nil {
		return err
	}
	return w.Metrics.Start(ctx, host)
}

func (w *wrapped) Shutdown(ctx context.Context) error {
	err := w.Metrics.Shutdown(ctx)
	return errors.Join(err, w.role.Agent.Stop())
}

// stamper is the Role as the receiver's consumer.
type stamper Role

func (s *stamper) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

func (s *stamper) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	s.Agent.SetUp(s.up())
	snap := s.Agent.Snapshot(time.Now())
	StampNode(md, snap.Node)
	if snap.Started {
		Append(md, snap, s.start)
	}
	return s.next.ConsumeMetrics(ctx, md)
}

// StampNode puts node on every data point of md that has no node.
func StampNode(md pmetric.Metrics, node string) {
	put := func(attrs pcommon.Map) {
		if _, ok := attrs.Get(fleet.LabelNode); !ok {
			attrs.PutStr(fleet.LabelNode, node)
		}
	}
	for _, rm := range md.ResourceMetrics().All() {
		for _, sm := range rm.ScopeMetrics().All() {
			for _, m := range sm.Metrics().All() {
				switch m.Type() {
				case pmetric.MetricTypeGauge:
					for _, dp := range m.Gauge().DataPoints().All() {
						put(dp.Attributes())
					}
				case pmetric.MetricTypeSum:
					for _, dp := range m.Sum().DataPoints().All() {
						put(dp.Attributes())
					}
				case pmetric.MetricTypeHistogram:
					for _, dp := range m.Histogram().DataPoints().All() {
						put(dp.Attributes())
					}
				case pmetric.MetricTypeExponentialHistogram:
					for _, dp := range m.ExponentialHistogram().DataPoints().All() {
						put(dp.Attributes())
					}
				case pmetric.MetricTypeSummary:
					for _, dp := range m.Summary().DataPoints().All() {
						put(dp.Attributes())
					}
				}
			}
		}
	}
}

// Append adds the role's series, as snap says them, to md: a scope of
// their own in a resource of their own. start is the counters' start time.
func Append(md pmetric.Metrics, snap fleet.Snapshot, start time.Time) {
	sm := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(scopeName)
	now := pcommon.NewTimestampFromTime(time.Now())
	point := func(dp pmetric.NumberDataPoint, v float64, extra ...string) {
		dp.SetTimestamp(now)
		dp.SetDoubleValue(v)
		dp.Attributes().PutStr(fleet.LabelRole, snap.Role)
		dp.Attributes().PutStr(fleet.LabelNode, snap.Node)
		for i := 0; i+1 < len(extra); i += 2 {
			dp.Attributes().PutStr(extra[i], extra[i+1])
		}
	}
	gauge := func(name, help, unit string, v float64, extra ...string) {
		m := sm.Metrics().AppendEmpty()
		m.SetName(name)
		m.SetDescription(help)
		m.SetUnit(unit)
		point(m.SetEmptyGauge().DataPoints().AppendEmpty(), v, extra...)
	}
	counter := func(name, help string, v float64) {
		m := sm.Metrics().AppendEmpty()
		m.SetName(name)
		m.SetDescription(help)
		sum := m.SetEmptySum()
		sum.SetIsMonotonic(true)
		sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		dp := sum.DataPoints().AppendEmpty()
		dp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		point(dp, v)
	}
	up := 0.0
	if snap.Up {
		up = 1
	}
	gauge(fleet.MetricUp, fleet.HelpUp, "", up)
	gauge(fleet.MetricInfo, fleet.HelpInfo, "", 1, snap.InfoLabels()...)
	gauge(fleet.MetricUptime, fleet.HelpUptime, "s", snap.Uptime.Seconds())
	counter(fleet.MetricRestarts, fleet.HelpRestarts, float64(snap.Restarts))
	counter(fleet.MetricCrashes, fleet.HelpCrashes, float64(snap.Crashes))
}
