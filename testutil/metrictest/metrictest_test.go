package metrictest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/mlx-otelcol/mlx-otelcol/internal/metricbuild"
)

// recorder is a T that keeps what Points reports.
type recorder struct{ errs []string }

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func built() pmetric.Metrics {
	b := metricbuild.New("test", nil, time.Now(), time.Now())
	b.Gauge("up", "", 1, "node", "n1")
	b.Counter("lines_total", "", 40, "severity", "info", "node", "n1", "category", "cache")
	b.Counter("lines_total", "", 0, "category", "http", "node", "n1", "severity", "error")
	b.Gauge("queue_depth", "", 7, "sink", "", "node", "n1")
	b.Histogram("pass_seconds", "", []float64{1, 5}, []uint64{1, 2, 0}, 6.5, "node", "n1")
	return b.Emit()
}

func TestKeysSortTheLabels(t *testing.T) {
	var r recorder
	assert.Equal(t, map[string]float64{
		"up{node=n1}": 1,
		"lines_total{category=cache,node=n1,severity=info}": 40,
		"lines_total{category=http,node=n1,severity=error}": 0,
		"queue_depth{node=n1,sink=}":                        7,
		"pass_seconds_count{node=n1}":                       3,
		"pass_seconds_sum{node=n1}":                         6.5,
	}, Points(&r, built()))
	assert.Empty(t, r.errs)
}

func TestWithoutLeavesTheLabelOut(t *testing.T) {
	var r recorder
	p := Points(&r, built(), Without("node", "n1"))
	assert.Equal(t, 1.0, p["up"], "no braces without labels")
	assert.Equal(t, 40.0, p["lines_total{category=cache,severity=info}"])
	assert.Equal(t, 7.0, p["queue_depth{sink=}"])
	assert.Equal(t, 3.0, p["pass_seconds_count"])
	assert.Len(t, p, 6)
	assert.Empty(t, r.errs)
}

func TestWithoutReportsAPointWithoutTheLabel(t *testing.T) {
	b := metricbuild.New("test", nil, time.Now(), time.Now())
	b.Gauge("a", "", 1, "node", "n2")
	b.Gauge("b", "", 2)
	var r recorder
	assert.Equal(t, map[string]float64{"a": 1, "b": 2}, Points(&r, b.Emit(), Without("node", "n1")))
	assert.Equal(t, []string{"metrictest: a has node=n2, want n1", "metrictest: b has no node label"}, r.errs)
}

func TestASeriesMetTwiceIsReported(t *testing.T) {
	b := metricbuild.New("test", nil, time.Now(), time.Now())
	b.Gauge("a", "", 1, "x", "1", "y", "2")
	b.Gauge("a", "", 2, "y", "2", "x", "1")
	var r recorder
	assert.Equal(t, map[string]float64{"a{x=1,y=2}": 2}, Points(&r, b.Emit()))
	assert.Equal(t, []string{"metrictest: series a{x=1,y=2} emitted twice"}, r.errs)
}

// Points reads every resource and scope, and int points as numbers.
func TestAllResourcesAndIntPoints(t *testing.T) {
	md := pmetric.NewMetrics()
	for i, name := range []string{"first", "second"} {
		m := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
		m.SetName(name)
		m.SetEmptyGauge().DataPoints().AppendEmpty().SetIntValue(int64(i + 1))
	}
	var r recorder
	assert.Equal(t, map[string]float64{"first": 1, "second": 2}, Points(&r, md))
	assert.Empty(t, r.errs)
	assert.Equal(t, []string{"first", "second"}, Names(md))
	assert.Len(t, Metrics(md), 2)
}

func TestSumsMustBeCounters(t *testing.T) {
	md := pmetric.NewMetrics()
	ms := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics()
	m := ms.AppendEmpty()
	m.SetName("updown")
	m.SetEmptySum().SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	m.Sum().DataPoints().AppendEmpty().SetDoubleValue(-1)
	m = ms.AppendEmpty()
	m.SetName("delta_total")
	m.SetEmptySum().SetIsMonotonic(true)
	m.Sum().SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	m.Sum().DataPoints().AppendEmpty().SetDoubleValue(1)
	var r recorder
	assert.Equal(t, map[string]float64{"updown": -1, "delta_total": 1}, Points(&r, md))
	assert.Equal(t, []string{
		"metrictest: sum updown is not monotonic and cumulative",
		"metrictest: sum delta_total is not monotonic and cumulative",
	}, r.errs)
}

func TestOtherTypesAreReported(t *testing.T) {
	md := pmetric.NewMetrics()
	m := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("s")
	m.SetEmptySummary().DataPoints().AppendEmpty()
	var r recorder
	assert.Empty(t, Points(&r, md))
	assert.Equal(t, []string{"metrictest: s is a Summary, which Points does not flatten"}, r.errs)
}

func TestNamesAreSortedAndNotMerged(t *testing.T) {
	md := built()
	assert.Equal(t, []string{"lines_total", "pass_seconds", "queue_depth", "up"}, Names(md))
	md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().AppendEmpty().SetName("up")
	assert.Equal(t, []string{"lines_total", "pass_seconds", "queue_depth", "up", "up"}, Names(md))
	assert.Equal(t, "lines_total", Metrics(md)[1].Name(), "in order")
}

func TestAMissingSeriesFails(t *testing.T) {
	p := map[string]float64{"up": 0, "lines_total{severity=info}": 3}
	var r recorder
	assert.Equal(t, 0.0, Value(&r, p, "up"))
	assert.Empty(t, r.errs)
	assert.NotEqual(t, 0.0, Value(&r, p, "down"), "a missing series is not zero")
	assert.Len(t, r.errs, 1)
}
