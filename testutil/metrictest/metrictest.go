// Package metrictest flattens pmetric.Metrics for tests: each data point
// becomes one entry keyed as the series' Prometheus name, so that a test
// compares what a receiver built with a plain map literal.
//
// Keys are "name{k=v,...}": labels sorted by name, no braces when there is
// none, values as they are (no quotes, an empty value stays "k=").
package metrictest

import (
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// T is what the checks need of a test. Points only reports (Errorf) and
// goes on, so it may run in a require.Eventually condition, off the test's
// goroutine.
type T interface {
	Errorf(format string, args ...any)
}

// Option changes how Points keys the series.
type Option func(*options)

type options struct {
	without map[string]string // label → the value every point carries
}

// Without leaves label out of every key. Every point must carry it, with
// the value want (a receiver's node label, say); Points reports those
// that do not.
func Without(label, want string) Option {
	return func(o *options) { o.without[label] = want }
}

// Points flattens md into key → value across all its resources and scopes.
// A gauge or sum point is one entry; a histogram point is two, name_count
// and name_sum, as Prometheus exposes them (its buckets are left out).
//
// It reports to t a series met twice, a sum that is not monotonic and
// cumulative (the only sum metricbuild builds: a Prometheus counter), a
// label of Without missing or with another value, and a metric of a type
// it does not flatten.
func Points(t T, md pmetric.Metrics, opts ...Option) map[string]float64 {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	o := options{without: map[string]string{}}
	for _, opt := range opts {
		opt(&o)
	}
	out := map[string]float64{}
	put := func(name string, attrs pcommon.Map, v float64) {
		key := o.key(t, name, attrs)
		if _, dup := out[key]; dup {
			t.Errorf("metrictest: series %s emitted twice", key)
		}
		out[key] = v
	}
	numbers := func(name string, dps pmetric.NumberDataPointSlice) {
		for _, dp := range dps.All() {
			v := dp.DoubleValue()
			if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
				v = float64(dp.IntValue())
			}
			put(name, dp.Attributes(), v)
		}
	}
	for _, m := range Metrics(md) {
		switch m.Type() {
		case pmetric.MetricTypeGauge:
			numbers(m.Name(), m.Gauge().DataPoints())
		case pmetric.MetricTypeSum:
			if !m.Sum().IsMonotonic() || m.Sum().AggregationTemporality() != pmetric.AggregationTemporalityCumulative {
				t.Errorf("metrictest: sum %s is not monotonic and cumulative", m.Name())
			}
			numbers(m.Name(), m.Sum().DataPoints())
		case pmetric.MetricTypeHistogram:
			for _, dp := range m.Histogram().DataPoints().All() {
				put(m.Name()+"_count", dp.Attributes(), float64(dp.Count()))
				put(m.Name()+"_sum", dp.Attributes(), dp.Sum())
			}
		default:
			t.Errorf("metrictest: %s is a %s, which Points does not flatten", m.Name(), m.Type())
		}
	}
	return out
}

func (o options) key(t T, name string, attrs pcommon.Map) string {
	for label, want := range o.without {
		if v, ok := attrs.Get(label); !ok {
			t.Errorf("metrictest: %s has no %s label", name, label)
		} else if v.AsString() != want {
			t.Errorf("metrictest: %s has %s=%s, want %s", name, label, v.AsString(), want)
		}
	}
	var labels []string
	attrs.Range(func(k string, _ pcommon.Value) bool {
		if _, left := o.without[k]; !left {
			labels = append(labels, k)
		}
		return true
	})
	if len(labels) == 0 {
		return name
	}
	sort.Strings(labels)
	for i, k := range labels {
		v, _ := attrs.Get(k)
		labels[i] = k + "=" + v.AsString()
	}
	return name + "{" + strings.Join(labels, ",") + "}"
}

// Metrics lists md's metrics in order, across all its resources and scopes.
func Metrics(md pmetric.Metrics) []pmetric.Metric {
	var out []pmetric.Metric
	for _, rm := range md.ResourceMetrics().All() {
		for _, sm := range rm.ScopeMetrics().All() {
			for _, m := range sm.Metrics().All() {
				out = append(out, m)
			}
		}
	}
	return out
}

// Names are the names of md's metrics, sorted, for comparing with a
// component's documented list. A name emitted as two metrics is listed
// twice.
func Names(md pmetric.Metrics) []string {
	var out []string
	for _, m := range Metrics(md) {
		out = append(out, m.Name())
	}
	sort.Strings(out)
	return out
}

// Value is the value of series key in p (from Points). A series p lacks is
// reported to t and reads as NaN, which no comparison passes: a missing
// series fails the test instead of reading as zero.
func Value(t T, p map[string]float64, key string) float64 {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	v, ok := p[key]
	if !ok {
		t.Errorf("metrictest: no series %s among %d: %v", key, len(p), slices.Sorted(maps.Keys(p)))
		return math.NaN()
	}
	return v
}
