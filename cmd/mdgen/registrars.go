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
// client_golang (the proxy), the typed registrars: family<Name>, one per
// metric family, a counterFamily, gaugeFamily or histogramFamily with its
// name, help text, label names (metadata.yaml's order, which is the order
// of its WithLabelValues) and buckets, so that none of them is typed again
// by hand; and labelValues<Attribute>, the values each attribute with an
// enum allows. The package defines the three family types and their
// register method (proxy/metrics.go: the unit and the registry are its).
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
	b.WriteString("\n// The families of metadata.yaml, with their labels in order: family.register(r) registers one.\nvar (\n")
	for _, e := range c.Metrics {
		if slices.Contains(fleet.Metrics, e.Key) {
			continue
		}
		id := "metric" + camel(e.Key)
		labels := quoted(c.OwnLabels(e.Value))
		switch e.Value.PromType() {
		case "counter":
			fmt.Fprintf(b, "\tfamily%s = counterFamily{%s, %sHelp, %s}\n", camel(e.Key), id, id, labels)
		case "gauge":
			fmt.Fprintf(b, "\tfamily%s = gaugeFamily{%s, %sHelp, %s}\n", camel(e.Key), id, id, labels)
		default:
			fmt.Fprintf(b, "\tfamily%s = histogramFamily{%s, %sHelp, %s, %sBuckets}\n", camel(e.Key), id, id, labels, id)
		}
	}
	b.WriteString(")\n")
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
