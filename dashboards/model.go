// Package dashboards holds mlx-otelcol's Grafana dashboards (*.json), the
// provisioning files that load them (provisioning/), and the Go description
// they are generated from (model.go, spec.go).
//
// The JSON files are generated: edit spec.go, then
//
//	go test ./dashboards -run TestGenerated -update
//
// The test fails when a JSON file differs from what spec.go generates, when a
// panel or target names another datasource than the dashboard's
// `datasource` variable, when a query
// does not parse as MetricsQL or reads an unknown series, and when
// expected-empty.yml names a query that does not exist.
package dashboards

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// DatasourceUID is the provisioned datasource (provisioning/datasources.yml
// defines it), and the default of every dashboard's `datasource`
// variable; DatasourceName is its name there.
const (
	DatasourceUID  = "mlx-victoriametrics"
	DatasourceName = "VictoriaMetrics (mlx)"
)

// DatasourceRef is what every panel, target, variable and annotation
// names: the dashboard's `datasource` variable (type prometheus), so a
// dashboard imported into any Grafana works with whichever
// Prometheus-compatible datasource the user picks (Grafana's convention
// for shareable dashboards).
const DatasourceRef = "${datasource}"

// SchemaVersion is Grafana's dashboard schema of Grafana 10.4 / 11.
const SchemaVersion = 39

var datasource = map[string]string{"type": "prometheus", "uid": DatasourceRef}

// datasourceVar is the `datasource` template variable, defaulting to the
// provisioned datasource.
var datasourceVar = ordered{
	{"name", "datasource"}, {"label", "Datasource"}, {"type", "datasource"},
	{"query", "prometheus"}, {"regex", ""}, {"refresh", 1},
	{"multi", false}, {"includeAll", false},
	{"current", ordered{{"selected", true}, {"text", DatasourceName}, {"value", DatasourceUID}}},
	{"options", []any{}}, {"hide", 0},
}

// Dashboard describes one dashboard.
type Dashboard struct {
	UID, Title, Description string
	Tags                    []string
	Vars                    []Var
	Rows                    []Row
	From                    string // time range start, "now-1h" if empty
}

// Var is a query template variable (multi-value, with All = ".*").
type Var struct {
	Name, Label, Query string // Query: label_values(selector, label)
}

// Row is a titled row of panels laid out left to right, wrapping at 24.
type Row struct {
	Title  string
	Panels []Panel
}

// Panel describes one panel.
type Panel struct {
	Type        string // timeseries, stat, gauge, bargauge, table, text
	Title       string
	Description string
	Unit        string
	W, H        int
	Min, Max    *float64
	Decimals    *int
	Steps       []Step            // thresholds; the first one's value is ignored (base)
	Mappings    map[string]string // value -> text (stat panels)
	Stack       bool
	Content     string // text panels: markdown
	Targets     []Target
}

// Step is a threshold step.
type Step struct {
	Color string
	Value float64
}

// Target is one query of a panel.
type Target struct {
	Expr, Legend string
	Instant      bool // tables and instant stats
	// EmptyReason, when set, says why the query may return nothing on a
	// stack without Apple hardware or without a fault; it goes to
	// expected-empty.yml, not into the dashboard.
	EmptyReason string
}

// Render returns the dashboard's JSON and the expected-empty entries of its
// targets ("<uid>/<panel title>/<refId>" -> reason).
func Render(d Dashboard) ([]byte, map[string]string, error) {
	empty := map[string]string{}
	var panels []any
	id := 0
	y := 0
	titles := map[string]bool{}
	for _, r := range d.Rows {
		id++
		panels = append(panels, ordered{
			{"id", id}, {"type", "row"}, {"title", r.Title}, {"collapsed", false},
			{"gridPos", grid{H: 1, W: 24, X: 0, Y: y}}, {"panels", []any{}},
		})
		y++
		x, rowH := 0, 0
		for _, p := range r.Panels {
			if titles[p.Title] {
				return nil, nil, fmt.Errorf("%s: two panels titled %q", d.UID, p.Title)
			}
			titles[p.Title] = true
			w, h := p.W, p.H
			if w == 0 {
				w = 12
			}
			if h == 0 {
				h = 8
				if p.Type == "stat" || p.Type == "gauge" {
					h = 4
				}
			}
			if x+w > 24 {
				x, y, rowH = 0, y+rowH, 0
			}
			id++
			pj, err := renderPanel(p, id, grid{H: h, W: w, X: x, Y: y})
			if err != nil {
				return nil, nil, fmt.Errorf("%s / %s: %w", d.UID, p.Title, err)
			}
			panels = append(panels, pj)
			for i, t := range p.Targets {
				if t.EmptyReason != "" {
					empty[d.UID+"/"+p.Title+"/"+refID(i)] = t.EmptyReason
				}
			}
			x += w
			rowH = max(rowH, h)
		}
		y += rowH
	}

	from := d.From
	if from == "" {
		from = "now-1h"
	}
	vars := []any{datasourceVar}
	for _, v := range d.Vars {
		vars = append(vars, ordered{
			{"name", v.Name}, {"label", v.Label}, {"type", "query"},
			{"datasource", datasource},
			{"definition", v.Query},
			// A plain label_values() string: every Grafana since 7 reads it
			// (10 and later convert it for their variable editor on load).
			{"query", v.Query},
			{"refresh", 2}, {"regex", ""}, {"sort", 1},
			{"multi", true}, {"includeAll", true}, {"allValue", ".*"},
			{"current", ordered{{"selected", true}, {"text", []string{"All"}}, {"value", []string{"$__all"}}}},
			{"options", []any{}}, {"hide", 0},
		})
	}
	dash := ordered{
		{"uid", d.UID},
		{"title", d.Title},
		{"description", d.Description},
		{"tags", d.Tags},
		{"schemaVersion", SchemaVersion},
		{"version", 1},
		{"editable", true},
		{"graphTooltip", 1},
		{"timezone", "browser"},
		{"refresh", "30s"},
		{"time", ordered{{"from", from}, {"to", "now"}}},
		{"timepicker", ordered{}},
		{"fiscalYearStartMonth", 0},
		{"liveNow", false},
		{"weekStart", ""},
		{"links", []any{ordered{
			{"title", "MLX dashboards"}, {"type", "dashboards"}, {"tags", []string{"mlx"}},
			{"asDropdown", true}, {"includeVars", false}, {"keepTime", true},
			{"icon", "external link"}, {"targetBlank", false}, {"tooltip", ""}, {"url", ""},
		}}},
		{"annotations", ordered{{"list", []any{ordered{
			{"name", "Firing alerts"},
			{"datasource", datasource},
			{"enable", true}, {"hide", false}, {"iconColor", "red"},
			{"expr", `ALERTS{alertstate="firing"}`},
			{"step", "60s"},
			{"titleFormat", "{{alertname}}"},
			{"textFormat", "{{severity}} {{node}} {{model}}"},
			{"tagKeys", "severity,category"},
			{"useValueForTime", false},
		}}}}},
		{"templating", ordered{{"list", vars}}},
		{"panels", panels},
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(dash); err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), empty, nil
}

type grid struct {
	H int `json:"h"`
	W int `json:"w"`
	X int `json:"x"`
	Y int `json:"y"`
}

func refID(i int) string { return string(rune('A' + i)) }

func renderPanel(p Panel, id int, g grid) (ordered, error) {
	out := ordered{{"id", id}, {"type", p.Type}, {"title", p.Title}}
	if p.Description != "" {
		out = append(out, kv{"description", p.Description})
	}
	out = append(out, kv{"gridPos", g})
	if p.Type == "text" {
		if len(p.Targets) > 0 {
			return nil, fmt.Errorf("a text panel has no queries")
		}
		return append(out, kv{"options", ordered{
			{"mode", "markdown"}, {"content", p.Content},
			{"code", ordered{{"language", "plaintext"}, {"showLineNumbers", false}, {"showMiniMap", false}}},
		}}), nil
	}
	if len(p.Targets) == 0 {
		return nil, fmt.Errorf("no queries")
	}
	if len(p.Targets) > 26 {
		return nil, fmt.Errorf("too many queries")
	}
	out = append(out, kv{"datasource", datasource})

	defaults := ordered{}
	if p.Unit != "" {
		defaults = append(defaults, kv{"unit", p.Unit})
	}
	if p.Min != nil {
		defaults = append(defaults, kv{"min", *p.Min})
	}
	if p.Max != nil {
		defaults = append(defaults, kv{"max", *p.Max})
	}
	if p.Decimals != nil {
		defaults = append(defaults, kv{"decimals", *p.Decimals})
	}
	steps := []any{ordered{{"color", "green"}, {"value", nil}}}
	if len(p.Steps) > 0 {
		steps = []any{ordered{{"color", p.Steps[0].Color}, {"value", nil}}}
		for _, s := range p.Steps[1:] {
			steps = append(steps, ordered{{"color", s.Color}, {"value", s.Value}})
		}
	}
	defaults = append(defaults, kv{"thresholds", ordered{{"mode", "absolute"}, {"steps", steps}}})
	if len(p.Mappings) > 0 {
		keys := make([]string, 0, len(p.Mappings))
		for k := range p.Mappings {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		opts := ordered{}
		for i, k := range keys {
			opts = append(opts, kv{k, ordered{{"index", i}, {"text", p.Mappings[k]}}})
		}
		defaults = append(defaults, kv{"mappings", []any{ordered{{"type", "value"}, {"options", opts}}}})
	} else {
		defaults = append(defaults, kv{"mappings", []any{}})
	}

	reduce := ordered{{"calcs", []string{"lastNotNull"}}, {"fields", ""}, {"values", false}}
	var options ordered
	switch p.Type {
	case "timeseries":
		stacking := "none"
		if p.Stack {
			stacking = "normal"
		}
		defaults = append(defaults,
			kv{"color", ordered{{"mode", "palette-classic"}}},
			kv{"custom", ordered{
				{"drawStyle", "line"}, {"lineWidth", 1}, {"fillOpacity", 10},
				{"showPoints", "never"}, {"spanNulls", false},
				{"stacking", ordered{{"mode", stacking}, {"group", "A"}}},
				{"thresholdsStyle", ordered{{"mode", thresholdsStyle(p)}}},
			}})
		options = ordered{
			{"legend", ordered{{"displayMode", "list"}, {"placement", "bottom"}, {"showLegend", true}}},
			{"tooltip", ordered{{"mode", "multi"}, {"sort", "desc"}}},
		}
	case "stat":
		defaults = append(defaults, kv{"color", ordered{{"mode", "thresholds"}}})
		options = ordered{
			{"reduceOptions", reduce}, {"colorMode", "value"}, {"graphMode", "none"},
			{"justifyMode", "auto"}, {"orientation", "auto"}, {"textMode", "auto"},
			{"wideLayout", true}, {"showPercentChange", false},
		}
	case "gauge":
		defaults = append(defaults, kv{"color", ordered{{"mode", "thresholds"}}})
		options = ordered{
			{"reduceOptions", reduce}, {"orientation", "auto"},
			{"showThresholdLabels", false}, {"showThresholdMarkers", true}, {"minVizWidth", 75}, {"minVizHeight", 75},
		}
	case "bargauge":
		defaults = append(defaults, kv{"color", ordered{{"mode", "thresholds"}}})
		options = ordered{
			{"reduceOptions", reduce}, {"orientation", "horizontal"}, {"displayMode", "gradient"},
			{"showUnfilled", true}, {"valueMode", "color"}, {"namePlacement", "auto"}, {"sizing", "auto"},
			{"minVizWidth", 8}, {"minVizHeight", 16}, {"maxVizHeight", 300},
		}
	case "table":
		defaults = append(defaults, kv{"custom", ordered{{"align", "auto"}, {"cellOptions", ordered{{"type", "auto"}}}, {"inspect", false}}})
		options = ordered{{"showHeader", true}, {"cellHeight", "sm"}, {"footer", ordered{{"show", false}, {"reducer", []string{"sum"}}, {"fields", ""}}}}
	default:
		return nil, fmt.Errorf("unknown panel type %q", p.Type)
	}
	out = append(out, kv{"fieldConfig", ordered{{"defaults", defaults}, {"overrides", []any{}}}}, kv{"options", options})

	var targets []any
	for i, t := range p.Targets {
		instant := t.Instant || p.Type == "table"
		tj := ordered{
			{"datasource", datasource},
			{"refId", refID(i)},
			{"editorMode", "code"},
			{"expr", t.Expr},
			{"legendFormat", legend(t.Legend)},
			{"range", !instant},
			{"instant", instant},
		}
		if p.Type == "table" {
			tj = append(tj, kv{"format", "table"})
		}
		targets = append(targets, tj)
	}
	out = append(out, kv{"targets", targets})
	if p.Type == "table" {
		out = append(out, kv{"transformations", []any{ordered{
			{"id", "organize"},
			{"options", ordered{{"excludeByName", ordered{{"Time", true}, {"__name__", true}}}, {"renameByName", ordered{{"Value", "value"}}}}},
		}}})
	}
	return out, nil
}

func legend(l string) string {
	if l == "" {
		return "__auto"
	}
	return l
}

func thresholdsStyle(p Panel) string {
	if len(p.Steps) > 1 {
		return "line"
	}
	return "off"
}

// ordered is a JSON object that keeps its keys in order.
type ordered []kv

type kv struct {
	K string
	V any
}

func (o ordered) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(e.K)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		var vb bytes.Buffer
		enc := json.NewEncoder(&vb)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(e.V); err != nil {
			return nil, err
		}
		b.Write(bytes.TrimRight(vb.Bytes(), "\n"))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
