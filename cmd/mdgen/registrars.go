package main

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mdgen/mdschema"
	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet"
)

// writeRegistrars writes, for a package that serves its metrics with
// client_golang (the proxy), the typed registrars: one method of the
// package's registrar type per metric family, which registers it with its
// name, help text, type, label names (metadata.yaml's order, which is the
// order of its WithLabelValues) and buckets, so that none of them is typed
// again by hand; and labelValues<Attribute>, the values each attribute
// with an enum allows. The package defines registrar with counter, gauge
// and histogramOf (proxy/metrics.go: the unit and the registry are its).
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
			q := make([]string, len(a.Value.Enum))
			for i, v := range a.Value.Enum {
				q[i] = fmt.Sprintf("%q", v)
			}
			fmt.Fprintf(b, "\tlabelValues%s = []string{%s}\n", camel(a.Key), strings.Join(q, ", "))
		}
		b.WriteString(")\n")
	}
	b.WriteString("\n// The typed registrars: each registers one family of metadata.yaml.\n")
	for _, e := range c.Metrics {
		if slices.Contains(fleet.Metrics, e.Key) {
			continue
		}
		m := e.Value
		id := "metric" + camel(e.Key)
		labels := c.OwnLabels(m)
		q := make([]string, len(labels))
		for i, l := range labels {
			q[i] = fmt.Sprintf("%q", l)
		}
		args := ""
		if len(q) > 0 {
			args = ", " + strings.Join(q, ", ")
		}
		fmt.Fprintf(b, "\n// %s registers %s {%s}.\n", registrarName(e.Key), e.Key, strings.Join(labels, ", "))
		switch typ := m.PromType(); typ {
		case "counter":
			fmt.Fprintf(b, "func (r registrar) %s() *prometheus.CounterVec {\n\treturn r.counter(%s, %sHelp%s)\n}\n", registrarName(e.Key), id, id, args)
		case "gauge":
			fmt.Fprintf(b, "func (r registrar) %s() *prometheus.GaugeVec {\n\treturn r.gauge(%s, %sHelp%s)\n}\n", registrarName(e.Key), id, id, args)
		default:
			fmt.Fprintf(b, "func (r registrar) %s() *prometheus.HistogramVec {\n\treturn r.histogramOf(%s, %sHelp, %sBuckets%s)\n}\n", registrarName(e.Key), id, id, id, args)
		}
	}
}

// registrarName is the registrar method of a metric: mlx_up is mlxUp.
func registrarName(metric string) string {
	c := []rune(camel(metric))
	c[0] = unicode.ToLower(c[0])
	return string(c)
}
