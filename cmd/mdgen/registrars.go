package main

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mdgen/mdschema"
	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet"
)

// writeRegistrars writes, for a package that serves its metrics with
// client_golang (the proxy), the registered families: per group of
// metadata.yaml (a metric's group; none is the main group), a struct
// <group>Families (families for the main group) with one field per family,
// named after the metric (mlx_requests_total is mlxRequestsTotal) and typed as
// client_golang registers it (a family without labels is its one series, at 0
// from the start), and its register method, which registers every family of
// the group with its name, help text, label names (metadata.yaml's order,
// which is the order of WithLabelValues) and buckets, so that none of them is
// typed again by hand; and labelValues<Attribute>, the values each attribute
// with an enum allows. The package defines registrar, whose counter, gauge
// and histogramOf register one family (proxy/metrics.go: the unit and the
// registry are its).
func writeRegistrars(b *bytes.Buffer, c *mdschema.Component) {
	var enums []mdschema.Entry[mdschema.Attribute]
	for _, a := range c.Attributes {
		if len(a.Value.Enum) > 0 {
			enums = append(enums, a)
		}
	}
	if len(enums) > 0 {
		b.WriteString("\n// The values each enumerated attribute allows, by attribute id.\nvar (\n")
		for _, a := range enums {
			fmt.Fprintf(b, "\tlabelValues%s = %s\n", camel(a.Key), quoted(a.Value.Enum))
		}
		b.WriteString(")\n")
	}
	var groups []string
	byGroup := map[string][]mdschema.Entry[mdschema.Metric]{}
	for _, e := range c.Metrics {
		if slices.Contains(fleet.Metrics, e.Key) {
			continue // internal/fleet's to emit
		}
		g := e.Value.Group
		if _, ok := byGroup[g]; !ok {
			groups = append(groups, g)
		}
		byGroup[g] = append(byGroup[g], e)
	}
	for _, g := range groups {
		typ := "families"
		if g != "" {
			typ = g + "Families"
		}
		var fields, regs bytes.Buffer
		for _, e := range byGroup[g] {
			id, field := "metric"+camel(e.Key), lowerFirst(camel(e.Key))
			labels := c.OwnLabels(e.Value)
			kind := e.Value.PromType()
			t := familyTypes[kind]
			args := fmt.Sprintf("%s, %sHelp", id, id)
			if kind == "histogram" {
				args += ", " + id + "Buckets"
			}
			for _, l := range labels {
				args += fmt.Sprintf(", %q", l)
			}
			ftype, with := t.vec, ""
			if len(labels) == 0 {
				ftype, with = t.one, ".WithLabelValues()"
			}
			fmt.Fprintf(&fields, "\t%s %s // %s%s\n", field, ftype, e.Key, braced(labels))
			fmt.Fprintf(&regs, "\tf.%s = r.%s(%s)%s\n", field, t.method, args, with)
		}
		fmt.Fprintf(b, "\n// %s are the families of metadata.yaml", typ)
		if g != "" {
			fmt.Fprintf(b, " in group %s", g)
		}
		fmt.Fprintf(b, ", with their labels in order.\ntype %s struct {\n%s}\n", typ, fields.Bytes())
		fmt.Fprintf(b, "\n// register registers every family of %s in r.\nfunc (f *%s) register(r registrar) {\n%s}\n", typ, typ, regs.Bytes())
	}
}

// familyTypes are, by Prometheus type, the field's type with labels and
// without, and the registrar's method.
var familyTypes = map[string]struct{ vec, one, method string }{
	"counter":   {"*prometheus.CounterVec", "prometheus.Counter", "counter"},
	"gauge":     {"*prometheus.GaugeVec", "prometheus.Gauge", "gauge"},
	"histogram": {"*prometheus.HistogramVec", "prometheus.Observer", "histogramOf"},
}

// braced is " {a, b}", or "" without labels.
func braced(labels []string) string {
	if len(labels) == 0 {
		return ""
	}
	return " {" + strings.Join(labels, ", ") + "}"
}

// lowerFirst is s with its first letter in lower case (MlxUp: mlxUp).
func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// quoted is a Go []string literal of ss (nil when empty).
func quoted(ss []string) string {
	if len(ss) == 0 {
		return "nil"
	}
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[]string{" + strings.Join(q, ", ") + "}"
}
