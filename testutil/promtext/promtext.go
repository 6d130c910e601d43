// Package promtext reads a Prometheus text exposition into plain values, for
// tests that check what a scrape really returns.
package promtext

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Scrape is one parsed exposition.
type Scrape struct {
	Families map[string]*dto.MetricFamily
}

// Parse reads a text exposition (format 0.0.4).
func Parse(b []byte) (*Scrape, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return &Scrape{Families: fams}, nil
}

// Names returns the family names, sorted.
func (s *Scrape) Names() []string {
	names := make([]string, 0, len(s.Families))
	for n := range s.Families {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Value returns the value of the series name{labels}, where labels are
// name/value pairs that must all match (others are ignored). For a
// histogram it returns the sample count. ok is false when no series matches;
// an error-free match of several series returns the first.
func (s *Scrape) Value(name string, labels ...string) (v float64, ok bool) {
	f := s.Families[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		if !matches(m, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		case m.Untyped != nil:
			return m.GetUntyped().GetValue(), true
		}
	}
	return 0, false
}

// Series lists every series of a family as name{k="v",...} strings.
func (s *Scrape) Series(name string) []string {
	var out []string
	for _, m := range s.Families[name].GetMetric() {
		var ls []string
		for _, l := range m.GetLabel() {
			ls = append(ls, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
		}
		out = append(out, name+"{"+strings.Join(ls, ",")+"}")
	}
	sort.Strings(out)
	return out
}

func matches(m *dto.Metric, labels []string) bool {
	for i := 0; i+1 < len(labels); i += 2 {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
