package main

import (
	"bytes"
	"fmt"
	"go/format"
	"slices"
	"strconv"
	"strings"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mdgen/mdschema"
)

// The attribute keys of spans and log records (metadata.yaml's
// span_attributes, log_attributes, resource_attributes and span_events):
// their tables in documentation.md and their Go constants.

// attrTable is one attribute table of documentation.md, between the
// markers <!-- mdgen:<id>:begin ... --> and <!-- mdgen:<id>:end -->.
type attrTable struct {
	id   string // span_attributes, log_attributes.<kind>
	rows mdschema.RecordAttributes
}

// attrTables are the tables documentation.md shows: the spans', then each
// kind of log record's. The resource attributes and span events are not
// tables there (the prose names them).
func attrTables(c *mdschema.Component) []attrTable {
	var out []attrTable
	if len(c.SpanAttributes) > 0 {
		out = append(out, attrTable{"span_attributes", c.SpanAttributes})
	}
	for _, kind := range c.LogAttributes {
		out = append(out, attrTable{"log_attributes." + kind.Key, kind.Value})
	}
	return out
}

const markerPrefix = "<!-- mdgen:"

func attrMarkers(id string) (begin, end string) {
	return markerPrefix + id + ":begin (generated from metadata.yaml by cmd/mdgen: edit metadata.yaml, run go generate ./...) -->",
		markerPrefix + id + ":end -->"
}

// spliceAttributes writes each attribute table between its markers. A
// table without markers, or markers without a table, is an error.
func spliceAttributes(doc []byte, c *mdschema.Component) ([]byte, error) {
	tables := attrTables(c)
	var err error
	for _, t := range tables {
		begin, end := attrMarkers(t.id)
		if doc, err = spliceSection(doc, begin, end, attrMarkdown(t.rows)); err != nil {
			return nil, err
		}
	}
	for rest := doc; ; {
		i := bytes.Index(rest, []byte(markerPrefix))
		if i < 0 {
			break
		}
		rest = rest[i+len(markerPrefix):]
		id, _, _ := bytes.Cut(rest, []byte(":"))
		if string(id) != "metrics" && !slices.ContainsFunc(tables, func(t attrTable) bool { return t.id == string(id) }) {
			return nil, fmt.Errorf("markers of %s, which metadata.yaml does not have", id)
		}
	}
	return doc, nil
}

// attrMarkdown is a table of keys: | key | type | set | meaning |.
func attrMarkdown(rows mdschema.RecordAttributes) []byte {
	var b bytes.Buffer
	b.WriteString("| key | type | set | meaning |\n|---|---|---|---|\n")
	for _, e := range rows {
		a := e.Value
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", e.Key, a.TypeName(), a.SetText(), strings.ReplaceAll(a.Description, "|", `\|`))
	}
	return b.Bytes()
}

// attrSections are the sections whose keys -attributes can ask for.
var attrSections = []string{"span_attributes", "log_attributes", "resource_attributes", "span_events"}

// attrGoSource is the Go file of the keys of the sections asked for. The
// naming rule:
//
//   - a key is attr<Name>: the key's segments, split at every character
//     that is not a letter or a digit, each with its first letter upper
//     case (mlx.gen_seconds: attrMlxGenSeconds, http.request.method:
//     attrHttpRequestMethod);
//   - a key with placeholders is a function of its indexes, named without
//     them (llm.input_messages.<i>.message.role:
//     attrLlmInputMessagesMessageRole(i int) string);
//   - a span event's name is event<Name> (First Token Stream Event:
//     eventFirstTokenStreamEvent).
//
// Exported (a package of keys that other packages import), a key is
// <Name> and a span event Event<Name> (mlx.gen_seconds: MlxGenSeconds).
//
// A key in two sections is written once; two keys of one name are an
// error.
func attrGoSource(c *mdschema.Component, pkg, from string, sections []string, exported bool) ([]byte, error) {
	attrPrefix, eventPrefix := "attr", "event"
	if exported {
		attrPrefix, eventPrefix = "", "Event"
	}
	type group struct {
		title, prefix string
		keys          []string
	}
	var groups []group
	for _, s := range sections {
		switch s {
		case "span_attributes":
			groups = append(groups, group{"The span attributes", attrPrefix, c.SpanAttributes.Keys()})
		case "log_attributes":
			for _, kind := range c.LogAttributes {
				groups = append(groups, group{"The attributes of the " + kind.Key + " log records", attrPrefix, kind.Value.Keys()})
			}
		case "resource_attributes":
			groups = append(groups, group{"The resource attributes", attrPrefix, c.ResourceAttributes.Keys()})
		case "span_events":
			groups = append(groups, group{"The span events", eventPrefix, c.SpanEvents.Keys()})
		default:
			return nil, fmt.Errorf("-attributes: no section %q (one of %s)", s, strings.Join(attrSections, ", "))
		}
	}
	var consts, funcs bytes.Buffer
	byName := map[string]string{}
	for _, g := range groups {
		started := false
		for _, key := range g.keys {
			name := g.prefix + goName(key)
			if prev, ok := byName[name]; ok {
				if prev != key {
					return nil, fmt.Errorf("%s and %s are both %s", prev, key, name)
				}
				continue
			}
			byName[name] = key
			if ph := mdschema.Placeholders(key); len(ph) > 0 {
				fmt.Fprintf(&funcs, "\n// %s is the key %s.\nfunc %s(%s int) string {\n\treturn %s\n}\n", name, key, name, strings.Join(ph, ", "), keyExpr(key))
				continue
			}
			if !started {
				fmt.Fprintf(&consts, "\n// %s of %s.\nconst (\n", g.title, from)
				started = true
			}
			fmt.Fprintf(&consts, "\t%s = %q\n", name, key)
		}
		if started {
			consts.WriteString(")\n")
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by cmd/mdgen from %s. DO NOT EDIT.\n\npackage %s\n", from, pkg)
	if funcs.Len() > 0 {
		b.WriteString("\nimport \"strconv\"\n")
	}
	b.Write(consts.Bytes())
	if funcs.Len() > 0 {
		fmt.Fprintf(&b, "\n// The keys with indexes (<i>, <j>, <k>) of %s.\n", from)
		b.Write(funcs.Bytes())
	}
	return format.Source(b.Bytes())
}

// goName is a key's or an event's part of its Go name: every character
// that is not a letter or a digit separates words, placeholders are left
// out (see attrGoSource).
func goName(key string) string {
	var segs []string
	for _, seg := range strings.Split(key, ".") {
		if len(mdschema.Placeholders(seg)) == 0 {
			segs = append(segs, seg)
		}
	}
	words := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '.'
	}, strings.Join(segs, "."))
	return camel(words)
}

// keyExpr is the Go expression of a key with placeholders:
// "llm.input_messages." + strconv.Itoa(i) + ".message.role".
func keyExpr(key string) string {
	var parts []string
	lit := ""
	for i, seg := range strings.Split(key, ".") {
		if i > 0 {
			lit += "."
		}
		if ph := mdschema.Placeholders(seg); len(ph) == 1 {
			if lit != "" {
				parts = append(parts, strconv.Quote(lit))
			}
			parts = append(parts, "strconv.Itoa("+ph[0]+")")
			lit = ""
			continue
		}
		lit += seg
	}
	if lit != "" {
		parts = append(parts, strconv.Quote(lit))
	}
	return strings.Join(parts, " + ")
}
