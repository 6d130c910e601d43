// Package mdschema reads a component's metadata.yaml, the one schema of
// what the component emits: every metric with its type, unit, description
// (the help text a scrape shows), attributes, buckets and the platforms that
// emit it, and the attribute keys of the spans and log records it emits.
// cmd/mdgen writes documentation.md's metrics section and attribute tables
// and the Go constants from it; the doc tests and testutil/promqlnames read
// it too.
//
// The schema follows contrib's mdatagen where it has a field for the purpose
// (type, attributes with enum and name_override, metrics with gauge, sum or
// histogram, extended_documentation, resource_attributes); buckets,
// platforms and the span and log record sections (records.go) are this
// repository's.
package mdschema

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"

	"go.yaml.in/yaml/v3"
)

// Component is one metadata.yaml.
type Component struct {
	Type       string             `yaml:"type"`
	Status     yaml.Node          `yaml:"status"`
	Tests      yaml.Node          `yaml:"tests"`
	Attributes Ordered[Attribute] `yaml:"attributes"`
	// CommonAttributes are ids of attributes every metric of the
	// component carries besides its own (node: the fleet contract stamps
	// it on every point, internal/fleet/fleetmetrics).
	CommonAttributes []string        `yaml:"common_attributes"`
	Metrics          Ordered[Metric] `yaml:"metrics"`

	// The keys of the spans and log records (records.go).
	SpanAttributes     RecordAttributes          `yaml:"span_attributes"`
	LogAttributes      Ordered[RecordAttributes] `yaml:"log_attributes"`
	ResourceAttributes RecordAttributes          `yaml:"resource_attributes"`
	SpanEvents         Ordered[SpanEvent]        `yaml:"span_events"`
}

// Attribute is a metric attribute (a Prometheus label).
type Attribute struct {
	Description string `yaml:"description"`
	Type        string `yaml:"type"`
	// NameOverride is the label's name when two attributes of the
	// component share it with different values (mdatagen's name_override).
	NameOverride string   `yaml:"name_override"`
	Enum         []string `yaml:"enum"`
}

// Name is the label name.
func (a Attribute) Name(id string) string {
	if a.NameOverride != "" {
		return a.NameOverride
	}
	return id
}

// Metric is one metric family. Every family listed is emitted: the schema
// has no enabled (mdatagen's default of a per-metric setting, which no
// component here has), and check refuses one, so a metric cannot be
// listed, documented and held by dashboards while never served.
type Metric struct {
	Enabled     any    `yaml:"enabled"` // refused by check
	Description string `yaml:"description"`
	// ExtendedDocumentation is markdown for documentation.md, after the
	// description.
	ExtendedDocumentation string     `yaml:"extended_documentation"`
	Unit                  string     `yaml:"unit"`
	Gauge                 *Gauge     `yaml:"gauge"`
	Sum                   *Sum       `yaml:"sum"`
	Histogram             *Histogram `yaml:"histogram"`
	// Attributes are ids of the component's attributes.
	Attributes []string `yaml:"attributes"`
	// Platforms say, per platform (macOS, Linux), what feeds the metric
	// there; a platform not listed never has it. Empty: every platform.
	Platforms Ordered[string] `yaml:"platforms"`
	// Group names the families a component registers together (cmd/mdgen
	// -registrars: the struct <group>Families), such as those served only
	// under a setting. Empty: the component's main group (families).
	Group string `yaml:"group"`
}

// Gauge is a gauge metric.
type Gauge struct {
	ValueType string `yaml:"value_type"`
}

// Sum is a sum metric (a Prometheus counter when monotonic).
type Sum struct {
	ValueType              string `yaml:"value_type"`
	Monotonic              bool   `yaml:"monotonic"`
	AggregationTemporality string `yaml:"aggregation_temporality"`
}

// Histogram is an explicit-bucket histogram.
type Histogram struct {
	ValueType string    `yaml:"value_type"`
	Buckets   []float64 `yaml:"buckets"`
}

// Kind is the metric's type: gauge, sum or histogram.
func (m Metric) Kind() string {
	switch {
	case m.Gauge != nil:
		return "gauge"
	case m.Sum != nil:
		return "sum"
	default:
		return "histogram"
	}
}

// PromType is the type a Prometheus scrape shows: gauge, counter or
// histogram.
func (m Metric) PromType() string {
	if m.Sum != nil {
		if m.Sum.Monotonic {
			return "counter"
		}
		return "gauge"
	}
	return m.Kind()
}

// Entry is one key of an Ordered map.
type Entry[T any] struct {
	Key   string
	Value T
}

// Ordered is a YAML mapping that keeps the order of its keys.
type Ordered[T any] []Entry[T]

// UnmarshalYAML implements yaml.Unmarshaler.
func (o *Ordered[T]) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: a mapping is expected", n.Line)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i].Value
		if seen[k] {
			return fmt.Errorf("line %d: %q twice", n.Content[i].Line, k)
		}
		seen[k] = true
		var v T
		if err := decodeStrict(n.Content[i+1], &v); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		*o = append(*o, Entry[T]{k, v})
	}
	return nil
}

// decodeStrict decodes a node refusing unknown fields.
func decodeStrict(n *yaml.Node, v any) error {
	b, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	d := yaml.NewDecoder(bytes.NewReader(b))
	d.KnownFields(true)
	return d.Decode(v)
}

// Get returns the value of key.
func (o Ordered[T]) Get(key string) (T, bool) {
	for _, e := range o {
		if e.Key == key {
			return e.Value, true
		}
	}
	var zero T
	return zero, false
}

// Keys returns the keys in order.
func (o Ordered[T]) Keys() []string {
	out := make([]string, len(o))
	for i, e := range o {
		out[i] = e.Key
	}
	return out
}

// Parse reads and checks a metadata.yaml.
func Parse(b []byte) (*Component, error) {
	var c Component
	d := yaml.NewDecoder(bytes.NewReader(b))
	d.KnownFields(true)
	if err := d.Decode(&c); err != nil {
		return nil, err
	}
	return &c, c.check()
}

// Load reads and checks the metadata.yaml at path.
func Load(path string) (*Component, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// groupName is what a group may be called: it starts a Go identifier.
var groupName = regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)

func (c *Component) check() error {
	var errs []error
	if c.Type == "" {
		errs = append(errs, errors.New("no type"))
	}
	for _, a := range c.Attributes {
		if a.Value.Description == "" || a.Value.Type == "" {
			errs = append(errs, fmt.Errorf("attribute %s: description and type are required", a.Key))
		}
	}
	for _, id := range c.CommonAttributes {
		if _, ok := c.Attributes.Get(id); !ok {
			errs = append(errs, fmt.Errorf("common_attributes: %s is not under attributes", id))
		}
	}
	for _, e := range c.Metrics {
		m := e.Value
		n := 0
		for _, set := range []bool{m.Gauge != nil, m.Sum != nil, m.Histogram != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			errs = append(errs, fmt.Errorf("metric %s: exactly one of gauge, sum and histogram", e.Key))
		}
		if m.Description == "" {
			errs = append(errs, fmt.Errorf("metric %s: no description", e.Key))
		}
		if m.Enabled != nil {
			errs = append(errs, fmt.Errorf("metric %s: enabled is not part of the schema (every metric listed is emitted): remove the line", e.Key))
		}
		if m.Group != "" && !groupName.MatchString(m.Group) {
			errs = append(errs, fmt.Errorf("metric %s: group %q is not a lower-case identifier", e.Key, m.Group))
		}
		if m.Histogram != nil && len(m.Histogram.Buckets) == 0 {
			errs = append(errs, fmt.Errorf("metric %s: a histogram needs its buckets", e.Key))
		}
		labels := map[string]bool{}
		for _, id := range m.Attributes {
			a, ok := c.Attributes.Get(id)
			if !ok {
				errs = append(errs, fmt.Errorf("metric %s: attribute %s is not under attributes", e.Key, id))
				continue
			}
			if labels[a.Name(id)] {
				errs = append(errs, fmt.Errorf("metric %s: label %s twice", e.Key, a.Name(id)))
			}
			labels[a.Name(id)] = true
		}
	}
	errs = append(errs, c.checkRecords())
	return errors.Join(errs...)
}

// Labels returns the label names of a metric, in its attributes' order,
// then the common attributes it does not list itself.
func (c *Component) Labels(m Metric) []string {
	out := c.OwnLabels(m)
	for _, id := range c.CommonAttributes {
		a, _ := c.Attributes.Get(id)
		if !slices.Contains(out, a.Name(id)) {
			out = append(out, a.Name(id))
		}
	}
	return out
}

// OwnLabels returns the label names of a metric's own attributes, in
// order, without the common ones.
func (c *Component) OwnLabels(m Metric) []string {
	out := make([]string, 0, len(m.Attributes))
	for _, id := range m.Attributes {
		a, _ := c.Attributes.Get(id)
		out = append(out, a.Name(id))
	}
	return out
}

// CommonLabels returns the label names of the common attributes.
func (c *Component) CommonLabels() []string {
	out := make([]string, 0, len(c.CommonAttributes))
	for _, id := range c.CommonAttributes {
		a, _ := c.Attributes.Get(id)
		out = append(out, a.Name(id))
	}
	return out
}

// MetricNames returns the metric names in order.
func (c *Component) MetricNames() []string { return c.Metrics.Keys() }
