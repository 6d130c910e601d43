package dashrender

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/promqlnames"
)

// Result is a dashboard evaluated at End over its time range.
type Result struct {
	Dashboard Dashboard
	End       time.Time
	Range     time.Duration
	Panels    []PanelResult
}

// PanelResult is one panel's queries and what it shows.
type PanelResult struct {
	Panel   Panel
	Queries []QueryResult
	// Stat: one item per series of every query; NoValue when there is none.
	Items   []Cell
	NoValue string
	// Table: the rows after the transformations and sorting.
	Table *Table
	// Timeline: one row per series, one cell per step at Times.
	Times    []time.Time
	Timeline []TimelineRow
}

// QueryResult is one target as run: Grafana's variables substituted.
type QueryResult struct {
	RefID  string
	Expr   string
	Series []Series
}

// Cell is a shown value: its text (mapped, or formatted by unit), colour
// ("" for the default) and name (a stat's legend, a timeline cell's time).
type Cell struct {
	Name   string
	Text   string
	Colour string
	Value  *float64
	Raw    string // a label's value
}

// Table is a table panel's columns and rows.
type Table struct {
	Columns []string
	Rows    [][]Cell
}

// Row returns the first row whose column col reads text, and its index.
func (t *Table) Row(col, text string) ([]Cell, int) {
	c := t.Col(col)
	if c < 0 {
		return nil, -1
	}
	for i, r := range t.Rows {
		if r[c].Text == text {
			return r, i
		}
	}
	return nil, -1
}

// Col is the index of column name, -1 if none.
func (t *Table) Col(name string) int {
	for i, c := range t.Columns {
		if c == name {
			return i
		}
	}
	return -1
}

// TimelineRow is one series of a state timeline.
type TimelineRow struct {
	Name  string
	Cells []Cell
}

// Evaluate runs every panel's queries against q, the dashboard's time range
// ending at end, and computes what each panel shows.
func Evaluate(d Dashboard, q Querier, end time.Time) (Result, error) {
	rng, err := relative(d.Time.From)
	if err != nil {
		return Result{}, err
	}
	res := Result{Dashboard: d, End: end, Range: rng}
	for _, p := range d.Panels {
		pr, err := evalPanel(p, q, end, rng)
		if err != nil {
			return Result{}, fmt.Errorf("%s: %q: %w", d.UID, p.Title, err)
		}
		res.Panels = append(res.Panels, pr)
	}
	return res, nil
}

// Panel returns the evaluated panel titled title.
func (r Result) Panel(title string) (PanelResult, bool) {
	for _, p := range r.Panels {
		if p.Panel.Title == title {
			return p, true
		}
	}
	return PanelResult{}, false
}

// step is Grafana's $__interval: the panel's (or target's) minimum
// interval, else the range over about 100 points, at least 15 s.
func step(p Panel, t Target, rng time.Duration) time.Duration {
	for _, s := range []string{t.Interval, p.Interval} {
		if d, err := time.ParseDuration(s); err == nil && d > 0 {
			return d
		}
	}
	return max((rng / 100).Round(time.Second), 15*time.Second)
}

func evalPanel(p Panel, q Querier, end time.Time, rng time.Duration) (PanelResult, error) {
	pr := PanelResult{Panel: p}
	if p.Type == "row" || p.Type == "text" {
		return pr, nil
	}
	if p.TimeFrom != "" {
		d, err := relative(p.TimeFrom)
		if err != nil {
			return pr, err
		}
		rng = d
	}
	for _, t := range p.Targets {
		st := step(p, t, rng)
		vars := map[string]string{
			"__range": seconds(rng), "__range_s": strconv.Itoa(int(rng.Seconds())), "__range_ms": strconv.Itoa(int(rng.Milliseconds())),
			"__interval": seconds(st), "__interval_ms": strconv.Itoa(int(st.Milliseconds())), "__rate_interval": seconds(4 * st),
		}
		expr := promqlnames.ExpandGrafana(t.Expr, vars)
		var ss []Series
		var err error
		if t.Instant {
			ss, err = q.Query(expr, end)
		} else {
			ss, err = q.QueryRange(expr, end.Add(-rng), end, st)
		}
		if err != nil {
			return pr, err
		}
		pr.Queries = append(pr.Queries, QueryResult{RefID: t.RefID, Expr: expr, Series: ss})
		if p.Type == "state-timeline" && len(pr.Times) == 0 {
			for ts := end.Add(-rng); !ts.After(end); ts = ts.Add(st) {
				pr.Times = append(pr.Times, ts)
			}
		}
	}
	switch p.Type {
	case "stat":
		pr.NoValue = p.FieldConfig.Defaults.NoValue
		if pr.NoValue == "" {
			pr.NoValue = "No data"
		}
		for i, qr := range pr.Queries {
			for _, s := range qr.Series {
				if len(s.Points) == 0 {
					continue
				}
				v := s.Points[len(s.Points)-1].V
				c := display(p, "", v, time.Time{})
				c.Name = legend(p.Targets[i].LegendFormat, s.Labels)
				pr.Items = append(pr.Items, c)
			}
		}
	case "table":
		pr.Table = table(p, pr.Queries, end)
	case "state-timeline":
		for i, qr := range pr.Queries {
			for _, s := range qr.Series {
				row := TimelineRow{Name: legend(p.Targets[i].LegendFormat, s.Labels)}
				at := map[int64]float64{}
				for _, pt := range s.Points {
					at[pt.T.Unix()] = pt.V
				}
				for _, ts := range pr.Times {
					c := Cell{Name: ts.UTC().Format("15:04")}
					if v, ok := at[ts.Unix()]; ok {
						c = display(p, "", v, end)
						c.Name = ts.UTC().Format("15:04")
					}
					row.Cells = append(row.Cells, c)
				}
				pr.Timeline = append(pr.Timeline, row)
			}
		}
	default:
		return pr, fmt.Errorf("panel type %s is not rendered here", p.Type)
	}
	return pr, nil
}

func seconds(d time.Duration) string { return strconv.Itoa(int(d.Seconds())) + "s" }

var legendVar = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)

// legend is Grafana's legend format: {{label}} replaced, __auto the labels.
func legend(format string, labels map[string]string) string {
	if format == "" || format == "__auto" {
		l := map[string]string{}
		for k, v := range labels {
			if k != "__name__" {
				l[k] = v
			}
		}
		return labelString(l)
	}
	return legendVar.ReplaceAllStringFunc(format, func(m string) string {
		return labels[legendVar.FindStringSubmatch(m)[1]]
	})
}

// fieldConfig is what column (a field's display name; "" for the panel's
// defaults) shows: its unit, mappings, thresholds and whether its cells
// are coloured.
func fieldConfig(p Panel, column string) (unit string, mappings []Mapping, th *Thresholds, coloured bool) {
	d := p.FieldConfig.Defaults
	unit, mappings, th = d.Unit, d.Mappings, d.Thresholds
	coloured = p.Type != "table" || len(mappings) > 0
	for _, o := range p.FieldConfig.Overrides {
		if o.Matcher.ID != "byName" || o.Matcher.Options != column || column == "" {
			continue
		}
		for _, prop := range o.Properties {
			switch prop.ID {
			case "unit":
				_ = json.Unmarshal(prop.Value, &unit)
			case "mappings":
				_ = json.Unmarshal(prop.Value, &mappings)
			case "custom.cellOptions":
				coloured = true
			}
		}
	}
	return
}

// display is how a value shows in column: the mapped text and colour, else
// the value in its unit, coloured by the thresholds.
func display(p Panel, column string, v float64, now time.Time) Cell {
	unit, mappings, th, coloured := fieldConfig(p, column)
	c := Cell{Value: &v}
	key := strconv.FormatFloat(v, 'f', -1, 64)
	for _, m := range mappings {
		if o, ok := m.Options[key]; ok && m.Type == "value" {
			if o.Text != nil {
				c.Text = *o.Text
			}
			if o.Color != nil && coloured {
				c.Colour = *o.Color
			}
		}
	}
	if c.Text == "" {
		c.Text = format(unit, v, now)
	}
	if c.Colour == "" && coloured && th != nil && p.Type != "table" {
		for _, s := range th.Steps {
			if s.Value == nil || v >= *s.Value {
				c.Colour = s.Color
			}
		}
	}
	return c
}

// format writes v in Grafana's unit: s (a duration), dateTimeFromNow
// (milliseconds since the epoch, as an age), else the number.
func format(unit string, v float64, now time.Time) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case unit == "s":
		d := time.Duration(v * float64(time.Second))
		switch {
		case d < time.Minute:
			return fmt.Sprintf("%.0f s", v)
		case d < time.Hour:
			return fmt.Sprintf("%.1f min", d.Minutes())
		case d < 48*time.Hour:
			return fmt.Sprintf("%.1f hour", d.Hours())
		default:
			return fmt.Sprintf("%.1f day", d.Hours()/24)
		}
	case unit == "dateTimeFromNow":
		age := now.Sub(time.UnixMilli(int64(v)))
		if age < time.Minute {
			return "just now"
		}
		return fmt.Sprintf("%.0f min ago", age.Minutes())
	}
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}

// frame is one query's table: its label columns and value column.
type frame struct {
	cols []string
	rows []map[string]Cell
}

// table builds a table panel's rows: one frame per query (labels as
// columns, the value last, named "Value", or "Value #<refId>" when the
// panel has several queries), then the panel's transformations (merge,
// organize, groupingToMatrix), then its sortBy.
func table(p Panel, qs []QueryResult, now time.Time) *Table {
	var frames []frame
	for _, qr := range qs {
		vcol := "Value"
		if len(qs) > 1 {
			vcol = "Value #" + qr.RefID
		}
		f := frame{}
		seen := map[string]bool{}
		for _, s := range qr.Series {
			row := map[string]Cell{}
			for k, v := range s.Labels {
				if !seen[k] {
					seen[k] = true
					f.cols = append(f.cols, k)
				}
				row[k] = Cell{Text: v, Raw: v}
			}
			if len(s.Points) > 0 {
				v := s.Points[len(s.Points)-1].V
				row[vcol] = Cell{Value: &v}
			}
			f.rows = append(f.rows, row)
		}
		sort.Strings(f.cols)
		f.cols = append(f.cols, vcol)
		frames = append(frames, f)
	}
	cur := frame{}
	if len(frames) > 0 {
		cur = frames[0]
	}
	for _, tr := range p.Transformations {
		switch tr.ID {
		case "merge":
			cur = mergeFrames(frames)
		case "organize":
			cur = organize(cur, tr.Options)
		case "groupingToMatrix":
			cur = matrix(cur, tr.Options)
		}
	}
	// Values shown through each column's field config.
	t := &Table{Columns: cur.cols}
	for _, r := range cur.rows {
		var out []Cell
		for _, c := range cur.cols {
			cell := r[c]
			if cell.Value != nil && cell.Raw == "" {
				cell = display(p, c, *cell.Value, now)
			}
			out = append(out, cell)
		}
		t.Rows = append(t.Rows, out)
	}
	for i := len(p.Options.SortBy) - 1; i >= 0; i-- {
		sb := p.Options.SortBy[i]
		c := t.Col(sb.DisplayName)
		if c < 0 {
			continue
		}
		sort.SliceStable(t.Rows, func(a, b int) bool {
			va, vb := t.Rows[a][c].Value, t.Rows[b][c].Value
			switch {
			case va == nil:
				return false
			case vb == nil:
				return true
			case sb.Desc:
				return *va > *vb
			default:
				return *va < *vb
			}
		})
	}
	return t
}

// mergeFrames is Grafana's merge: a row joins an earlier row whose shared
// label columns hold the same values; the columns are the union.
func mergeFrames(frames []frame) frame {
	out := frame{}
	has := map[string]bool{}
	isValue := func(c string) bool { return strings.HasPrefix(c, "Value") }
	for _, f := range frames {
		for _, c := range f.cols {
			if !has[c] {
				has[c] = true
				out.cols = append(out.cols, c)
			}
		}
		for _, r := range f.rows {
			joined := false
			for _, o := range out.rows {
				shared, same := 0, true
				for _, c := range f.cols {
					if isValue(c) {
						continue
					}
					if ov, ok := o[c]; ok {
						shared++
						if ov.Raw != r[c].Raw {
							same = false
						}
					}
				}
				if shared > 0 && same {
					for k, v := range r {
						o[k] = v
					}
					joined = true
					break
				}
			}
			if !joined {
				n := map[string]Cell{}
				for k, v := range r {
					n[k] = v
				}
				out.rows = append(out.rows, n)
			}
		}
	}
	// Label columns first, in name order; the value columns after, by query.
	var labels, values []string
	for _, c := range out.cols {
		if isValue(c) {
			values = append(values, c)
		} else {
			labels = append(labels, c)
		}
	}
	sort.Strings(labels)
	out.cols = append(labels, values...)
	return out
}

func organize(f frame, opts map[string]any) frame {
	ex, _ := opts["excludeByName"].(map[string]any)
	ren, _ := opts["renameByName"].(map[string]any)
	idx, _ := opts["indexByName"].(map[string]any)
	var cols []string
	for _, c := range f.cols {
		if b, _ := ex[c].(bool); b {
			continue
		}
		cols = append(cols, c)
	}
	name := func(c string) string {
		if n, ok := ren[c].(string); ok && n != "" {
			return n
		}
		return c
	}
	pos := func(c string) float64 {
		for _, k := range []string{c, name(c)} {
			if v, ok := idx[k].(float64); ok {
				return v
			}
		}
		return 1e9
	}
	sort.SliceStable(cols, func(a, b int) bool { return pos(cols[a]) < pos(cols[b]) })
	out := frame{}
	for _, c := range cols {
		out.cols = append(out.cols, name(c))
	}
	for _, r := range f.rows {
		n := map[string]Cell{}
		for _, c := range cols {
			if v, ok := r[c]; ok {
				n[name(c)] = v
			}
		}
		out.rows = append(out.rows, n)
	}
	return out
}

// matrix is Grafana's groupingToMatrix: a row per rowField value, a column
// per columnField value (in name order), valueField in the cells.
func matrix(f frame, opts map[string]any) frame {
	rf, _ := opts["rowField"].(string)
	cf, _ := opts["columnField"].(string)
	vf, _ := opts["valueField"].(string)
	out := frame{cols: []string{rf + `\` + cf}}
	var colVals, rowVals []string
	seenC, seenR := map[string]bool{}, map[string]bool{}
	cells := map[[2]string]Cell{}
	for _, r := range f.rows {
		rv, cv := r[rf].Raw, r[cf].Raw
		if !seenC[cv] {
			seenC[cv] = true
			colVals = append(colVals, cv)
		}
		if !seenR[rv] {
			seenR[rv] = true
			rowVals = append(rowVals, rv)
		}
		cells[[2]string{rv, cv}] = r[vf]
	}
	sort.Strings(colVals)
	sort.Strings(rowVals)
	out.cols = append(out.cols, colVals...)
	for _, rv := range rowVals {
		n := map[string]Cell{out.cols[0]: {Text: rv, Raw: rv}}
		for _, cv := range colVals {
			if c, ok := cells[[2]string{rv, cv}]; ok {
				n[cv] = c
			}
		}
		out.rows = append(out.rows, n)
	}
	return out
}
