// Package metricbuild assembles pmetric.Metrics for the receivers of this
// distribution. mdatagen is not served here, so instead of a generated
// MetricsBuilder each receiver names its series through this small helper.
//
// The receivers name metrics with their final Prometheus names and leave the
// unit empty: the prometheus exporters run with
// translation_strategy UnderscoreEscapingWithoutSuffixes, so what is recorded
// here is byte for byte what a scrape shows.
package metricbuild

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// Builder collects the data points of one scrape. Points recorded under the
// same name share one pmetric.Metric, as Prometheus expects one family per
// name.
type Builder struct {
	metrics pmetric.Metrics
	scope   pmetric.ScopeMetrics
	byName  map[string]pmetric.Metric
	units   map[string]string
	start   pcommon.Timestamp
	now     pcommon.Timestamp
}

// New starts a scrape. scope is the instrumentation scope (the package's
// import path), units the metrics' units by name (the component's generated
// metricUnits, from its metadata.yaml), start the start time of cumulative
// series (the component's start).
//
// The unit reaches OTLP consumers. The prometheus exporter (v0.165) drops
// it: its descriptors carry no unit, and with UnderscoreEscapingWithoutSuffixes
// it adds no unit suffix, so the series names do not change.
func New(scope string, units map[string]string, start, now time.Time) *Builder {
	md := pmetric.NewMetrics()
	sm := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(scope)
	return &Builder{
		metrics: md,
		scope:   sm,
		byName:  map[string]pmetric.Metric{},
		units:   units,
		start:   pcommon.NewTimestampFromTime(start),
		now:     pcommon.NewTimestampFromTime(now),
	}
}

// Resource returns the resource of the metrics built, for attributes that
// the pipeline may promote to labels.
func (b *Builder) Resource() pcommon.Resource {
	return b.metrics.ResourceMetrics().At(0).Resource()
}

// Gauge records a gauge point. attrs are label name/value pairs.
func (b *Builder) Gauge(name, help string, value float64, attrs ...string) {
	m, ok := b.byName[name]
	if !ok {
		m = b.newMetric(name, help)
		m.SetEmptyGauge()
	}
	dp := m.Gauge().DataPoints().AppendEmpty()
	b.fill(dp, value, attrs)
}

// Counter records a monotonic cumulative sum point.
func (b *Builder) Counter(name, help string, value float64, attrs ...string) {
	m, ok := b.byName[name]
	if !ok {
		m = b.newMetric(name, help)
		s := m.SetEmptySum()
		s.SetIsMonotonic(true)
		s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	}
	dp := m.Sum().DataPoints().AppendEmpty()
	dp.SetStartTimestamp(b.start)
	b.fill(dp, value, attrs)
}

// Histogram records a cumulative histogram point: bounds are the upper
// bounds, counts the count of each bucket (one more than bounds, the last
// for +Inf), not cumulated.
func (b *Builder) Histogram(name, help string, bounds []float64, counts []uint64, sum float64, attrs ...string) {
	m, ok := b.byName[name]
	if !ok {
		m = b.newMetric(name, help)
		m.SetEmptyHistogram().SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	}
	dp := m.Histogram().DataPoints().AppendEmpty()
	dp.SetStartTimestamp(b.start)
	dp.SetTimestamp(b.now)
	dp.ExplicitBounds().FromRaw(bounds)
	dp.BucketCounts().FromRaw(counts)
	var n uint64
	for _, c := range counts {
		n += c
	}
	dp.SetCount(n)
	dp.SetSum(sum)
	for i := 0; i+1 < len(attrs); i += 2 {
		dp.Attributes().PutStr(attrs[i], attrs[i+1])
	}
}

// Emit returns the metrics built so far. The builder must not be used after.
func (b *Builder) Emit() pmetric.Metrics { return b.metrics }

func (b *Builder) newMetric(name, help string) pmetric.Metric {
	m := b.scope.Metrics().AppendEmpty()
	m.SetName(name)
	m.SetDescription(help)
	m.SetUnit(b.units[name])
	b.byName[name] = m
	return m
}

func (b *Builder) fill(dp pmetric.NumberDataPoint, value float64, attrs []string) {
	dp.SetTimestamp(b.now)
	dp.SetDoubleValue(value)
	for i := 0; i+1 < len(attrs); i += 2 {
		dp.Attributes().PutStr(attrs[i], attrs[i+1])
	}
}

// Bool is a gauge's value for a condition: 1 when it holds, else 0.
func Bool(v bool) float64 {
	if v {
		return 1
	}
	return 0
}
