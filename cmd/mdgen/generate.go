package main

import (
	"bytes"
	"errors"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mdgen/mdschema"
	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet"
)

type options struct {
	metadata, doc, goFile, pkg string
	// registrars: the Go file also has the typed registrars (registrars.go).
	registrars bool
	// attrGoFile is the Go file of the keys of the sections attrWanted lists (comma-separated; attributes.go).
	attrGoFile, attrWanted string
	attrExported           bool // exported names (attributes.go)
}

// The markers of the generated metrics section of documentation.md.
var beginMarker, endMarker = attrMarkers("metrics")

// generate returns the files mdgen writes, by path.
func (o options) generate() (map[string][]byte, error) {
	c, err := mdschema.Load(o.metadata)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	if o.doc != "" {
		old, err := os.ReadFile(o.doc)
		if err != nil {
			return nil, err
		}
		b := old
		// A component without metrics (the proxy receiver's spans and
		// records) needs no metrics section.
		if len(c.Metrics) > 0 || bytes.Contains(old, []byte(beginMarker)) {
			b, err = spliceDoc(b, metricsMarkdown(c))
		}
		if err == nil {
			b, err = spliceAttributes(b, c)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.doc, err)
		}
		files[o.doc] = b
	}
	if (o.goFile != "" || o.attrGoFile != "") && o.pkg == "" {
		return nil, errors.New("no -package (and no GOPACKAGE)")
	}
	if o.goFile != "" {
		b, err := goSource(c, o.pkg, o.from(o.goFile), o.registrars)
		if err != nil {
			return nil, err
		}
		files[o.goFile] = b
	}
	if o.attrGoFile != "" {
		b, err := attrGoSource(c, o.pkg, o.from(o.attrGoFile), strings.Split(o.attrWanted, ","), o.attrExported)
		if err != nil {
			return nil, err
		}
		files[o.attrGoFile] = b
	}
	return files, nil
}

// from is metadata.yaml's path as the Go file at goFile names it.
func (o options) from(goFile string) string {
	rel := o.metadata
	absGo, err1 := filepath.Abs(goFile)
	absMeta, err2 := filepath.Abs(o.metadata)
	if r, err := filepath.Rel(filepath.Dir(absGo), absMeta); err1 == nil && err2 == nil && err == nil {
		rel = r
	}
	return filepath.ToSlash(rel)
}

// spliceDoc puts section between the metrics markers of doc.
func spliceDoc(doc, section []byte) ([]byte, error) {
	return spliceSection(doc, beginMarker, endMarker, section)
}

// spliceSection puts section between the markers beginMark and endMark of doc.
func spliceSection(doc []byte, beginMark, endMark string, section []byte) ([]byte, error) {
	begin := bytes.Index(doc, []byte(beginMark))
	end := bytes.Index(doc, []byte(endMark))
	if begin < 0 || end < begin {
		return nil, fmt.Errorf("no %q ... %q markers", beginMark, endMark)
	}
	var out bytes.Buffer
	out.Write(doc[:begin+len(beginMark)])
	out.WriteString("\n\n")
	out.Write(section)
	out.WriteString("\n")
	out.Write(doc[end:])
	return out.Bytes(), nil
}

// metricsMarkdown is the generated section: one `### name` per metric, in
// the order of metadata.yaml, in contrib's documentation.md layout.
func metricsMarkdown(c *mdschema.Component) []byte {
	var b bytes.Buffer
	if len(c.CommonAttributes) > 0 {
		b.WriteString("Every metric also carries these labels:\n\n")
		for _, id := range c.CommonAttributes {
			a, _ := c.Attributes.Get(id)
			fmt.Fprintf(&b, "- `%s`: %s\n", a.Name(id), a.Description)
		}
		b.WriteString("\n")
	}
	for i, e := range c.Metrics {
		m := e.Value
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "### %s\n\n%s\n\n", e.Key, m.Description)
		switch {
		case m.Sum != nil:
			b.WriteString("| Unit | Metric Type | Value Type | Aggregation Temporality | Monotonic |\n| ---- | ----------- | ---------- | ----------------------- | --------- |\n")
			fmt.Fprintf(&b, "| %s | Sum | %s | %s | %t |\n", m.Unit, title(m.Sum.ValueType), title(m.Sum.AggregationTemporality), m.Sum.Monotonic)
		case m.Gauge != nil:
			b.WriteString("| Unit | Metric Type | Value Type |\n| ---- | ----------- | ---------- |\n")
			fmt.Fprintf(&b, "| %s | Gauge | %s |\n", m.Unit, title(m.Gauge.ValueType))
		default:
			b.WriteString("| Unit | Metric Type | Value Type | Buckets |\n| ---- | ----------- | ---------- | ------- |\n")
			fmt.Fprintf(&b, "| %s | Histogram | %s | %s |\n", m.Unit, title(m.Histogram.ValueType), floats(m.Histogram.Buckets, " "))
		}
		if ext := strings.TrimSpace(m.ExtendedDocumentation); ext != "" {
			fmt.Fprintf(&b, "\n%s\n", ext)
		}
		if len(m.Platforms) > 0 {
			b.WriteString("\n")
			for _, p := range m.Platforms {
				fmt.Fprintf(&b, "- %s: %s\n", p.Key, p.Value)
			}
		}
		if len(m.Attributes) > 0 {
			b.WriteString("\n#### Attributes\n\n| Name | Description | Values |\n| ---- | ----------- | ------ |\n")
			for _, id := range m.Attributes {
				a, _ := c.Attributes.Get(id)
				values := "Any " + title(a.Type)
				if len(a.Enum) > 0 {
					q := make([]string, len(a.Enum))
					for i, v := range a.Enum {
						q[i] = "`" + v + "`"
					}
					values = title(a.Type) + ": " + strings.Join(q, ", ")
				}
				fmt.Fprintf(&b, "| %s | %s | %s |\n", a.Name(id), strings.ReplaceAll(a.Description, "|", `\|`), values)
			}
		}
	}
	return b.Bytes()
}

func title(s string) string {
	switch s {
	case "string":
		return "Str"
	case "":
		return "Double"
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func floats(fs []float64, sep string) string {
	s := make([]string, len(fs))
	for i, f := range fs {
		s[i] = strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strings.Join(s, sep)
}

// goSource is the Go file: for each metric, metric<Name> (the name),
// metric<Name>Help and, for a histogram, metric<Name>Buckets; and
// metricUnits, the units by metric name; with registrars, the typed
// registrars and the attributes' allowed values (registrars.go).
func goSource(c *mdschema.Component, pkg, from string, registrars bool) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by cmd/mdgen from %s. DO NOT EDIT.\n\npackage %s\n\n", from, pkg)
	if registrars {
		b.WriteString("import \"github.com/prometheus/client_golang/prometheus\"\n\n")
	}

	if len(c.Metrics) > 0 {
		b.WriteString("// The metrics of " + from + ": name and help text.\nconst (\n")
		for _, e := range c.Metrics {
			// The fleet contract's series are internal/fleet's to emit.
			if slices.Contains(fleet.Metrics, e.Key) {
				continue
			}
			id := "metric" + camel(e.Key)
			fmt.Fprintf(&b, "\t%s = %q\n\t%sHelp = %q\n", id, e.Key, id, e.Value.Description)
		}
		b.WriteString(")\n")
		writeUnits(&b, c)
	}
	var hist []mdschema.Entry[mdschema.Metric]
	for _, e := range c.Metrics {
		if e.Value.Histogram != nil {
			hist = append(hist, e)
		}
	}
	if len(hist) > 0 {
		b.WriteString("\n// Histogram buckets (upper bounds).\nvar (\n")
		for _, e := range hist {
			fmt.Fprintf(&b, "\tmetric%sBuckets = []float64{%s}\n", camel(e.Key), floats(e.Value.Histogram.Buckets, ", "))
		}
		b.WriteString(")\n")
	}
	if registrars {
		writeRegistrars(&b, c)
	}
	return format.Source(b.Bytes())
}

// writeUnits writes metricUnits: each metric's unit (UCUM, as OTLP carries
// it), by metric name. A metric without a unit is absent. It is a map, not
// one constant per metric, because the code that builds metrics looks the
// unit up by name (internal/metricbuild, the proxy's registry).
func writeUnits(b *bytes.Buffer, c *mdschema.Component) {
	b.WriteString("\n// metricUnits are the metrics' units (UCUM), by name; a metric without one is absent.\nvar metricUnits = map[string]string{\n")
	for _, e := range c.Metrics {
		if e.Value.Unit != "" && !slices.Contains(fleet.Metrics, e.Key) {
			fmt.Fprintf(b, "\t%q: %q,\n", e.Key, e.Value.Unit)
		}
	}
	b.WriteString("}\n")
}

// camel turns mlx_hw_up into MlxHwUp.
func camel(s string) string {
	var b strings.Builder
	up := true
	for _, r := range s {
		if r == '_' || r == '.' || r == ':' {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		b.WriteRune(r)
	}
	return b.String()
}
