package doccheck

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	dto "github.com/prometheus/client_model/go"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mdgen/mdschema"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/metrictest"
)

// MetadataNames returns the names of the metrics a metadata.yaml lists,
// sorted.
func MetadataNames(path string) ([]string, error) { return MetadataNamesOutside(path) }

// MetadataNamesOutside returns the metric names of a metadata.yaml but
// those of the groups given (a group served only under a setting: the
// proxy's vllm and routing), sorted.
func MetadataNamesOutside(path string, groups ...string) ([]string, error) {
	c, err := mdschema.Load(path)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range c.Metrics {
		if !slices.Contains(groups, e.Value.Group) {
			names = append(names, e.Key)
		}
	}
	sort.Strings(names)
	return names, nil
}

// MetadataPlatforms returns, for every metric of a metadata.yaml, its
// platforms entries for the platforms asked for: metric -> platform ->
// text.
func MetadataPlatforms(path string, platforms ...string) (map[string]map[string]string, error) {
	c, err := mdschema.Load(path)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]string{}
	for _, m := range c.Metrics {
		out[m.Key] = map[string]string{}
		for _, p := range platforms {
			if text, ok := m.Value.Platforms.Get(p); ok {
				out[m.Key][p] = text
			}
		}
	}
	return out, nil
}

// CheckMetrics holds emitted pdata metrics to a metadata.yaml: every metric
// is listed, with its type (and monotonicity), its description as help
// text, its unit, its attributes as the points' keys and its buckets.
func CheckMetrics(path string, md pmetric.Metrics) error {
	c, err := mdschema.Load(path)
	if err != nil {
		return err
	}
	var errs []error
	for _, m := range metrictest.Metrics(md) {
		errs = append(errs, checkMetric(c, m))
	}
	return errors.Join(errs...)
}

func checkMetric(c *mdschema.Component, m pmetric.Metric) error {
	meta, ok := c.Metrics.Get(m.Name())
	if !ok {
		return fmt.Errorf("%s: not in metadata.yaml", m.Name())
	}
	var errs []error
	fail := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf(m.Name()+": "+format, a...))
	}
	if m.Description() != meta.Description {
		fail("help %q, metadata.yaml says %q", m.Description(), meta.Description)
	}
	if m.Unit() != meta.Unit {
		fail("unit %q, metadata.yaml says %q", m.Unit(), meta.Unit)
	}
	// The common labels (node) are stamped on the receiver's output by
	// its role's consumer (internal/fleet/fleetmetrics): a point built
	// before it may lack them; one that has them has them all.
	want, own := c.Labels(meta), c.OwnLabels(meta)
	sort.Strings(want)
	sort.Strings(own)
	keys := func(attrs pcommon.Map) {
		var got []string
		for k := range attrs.All() {
			got = append(got, k)
		}
		sort.Strings(got)
		if !slices.Equal(got, want) && !slices.Equal(got, own) {
			fail("labels %v, metadata.yaml says %v", got, want)
		}
	}
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		if meta.Gauge == nil {
			fail("a gauge, metadata.yaml says %s", meta.Kind())
		}
		for i := 0; i < m.Gauge().DataPoints().Len(); i++ {
			keys(m.Gauge().DataPoints().At(i).Attributes())
		}
	case pmetric.MetricTypeSum:
		if meta.Sum == nil || meta.Sum.Monotonic != m.Sum().IsMonotonic() {
			fail("a sum (monotonic %t), metadata.yaml says %s", m.Sum().IsMonotonic(), meta.Kind())
		}
		for i := 0; i < m.Sum().DataPoints().Len(); i++ {
			keys(m.Sum().DataPoints().At(i).Attributes())
		}
	case pmetric.MetricTypeHistogram:
		if meta.Histogram == nil {
			fail("a histogram, metadata.yaml says %s", meta.Kind())
			break
		}
		for i := 0; i < m.Histogram().DataPoints().Len(); i++ {
			dp := m.Histogram().DataPoints().At(i)
			keys(dp.Attributes())
			if got := dp.ExplicitBounds().AsRaw(); !slices.Equal(got, meta.Histogram.Buckets) {
				fail("buckets %v, metadata.yaml says %v", got, meta.Histogram.Buckets)
			}
		}
	default:
		fail("type %s is not in the schema", m.Type())
	}
	return errors.Join(errs...)
}

// CheckScrape holds the families of a Prometheus scrape to a metadata.yaml:
// every family is listed, with its type, help text, buckets and labels,
// an enumerated label with one of its values (a
// series may leave out a label whose value is empty).
func CheckScrape(path string, families map[string]*dto.MetricFamily) error {
	c, err := mdschema.Load(path)
	if err != nil {
		return err
	}
	var errs []error
	for name, f := range families {
		meta, ok := c.Metrics.Get(name)
		if !ok {
			errs = append(errs, fmt.Errorf("%s: not in metadata.yaml", name))
			continue
		}
		fail := func(format string, a ...any) {
			errs = append(errs, fmt.Errorf(name+": "+format, a...))
		}
		typ := map[dto.MetricType]string{dto.MetricType_COUNTER: "counter", dto.MetricType_GAUGE: "gauge", dto.MetricType_HISTOGRAM: "histogram"}[f.GetType()]
		if typ != meta.PromType() {
			fail("a %s, metadata.yaml says %s", f.GetType(), meta.PromType())
		}
		if f.GetHelp() != meta.Description {
			fail("help %q, metadata.yaml says %q", f.GetHelp(), meta.Description)
		}
		labels := c.Labels(meta)
		// The values an enumerated label allows, by label name.
		enums := map[string][]string{}
		for _, id := range meta.Attributes {
			if a, _ := c.Attributes.Get(id); len(a.Enum) > 0 {
				enums[a.Name(id)] = a.Enum
			}
		}
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				if !slices.Contains(labels, l.GetName()) {
					fail("label %s, metadata.yaml says %v", l.GetName(), labels)
				}
				if e, ok := enums[l.GetName()]; ok && !slices.Contains(e, l.GetValue()) {
					fail("label %s=%q, metadata.yaml allows %v", l.GetName(), l.GetValue(), e)
				}
			}
			if h := s.GetHistogram(); h != nil && meta.Histogram != nil {
				var bounds []float64
				for _, b := range h.GetBucket() {
					if math.IsInf(b.GetUpperBound(), 1) {
						continue
					}
					bounds = append(bounds, b.GetUpperBound())
				}
				if !slices.Equal(bounds, meta.Histogram.Buckets) {
					fail("buckets %v, metadata.yaml says %v", bounds, meta.Histogram.Buckets)
				}
			}
		}
	}
	return errors.Join(errs...)
}
