package dashrender

import (
	"bytes"
	"html/template"
	"strconv"
	"strings"
)

// Grafana's named colours, as its dark theme draws them.
var colours = map[string]string{
	"green": "#73bf69", "red": "#f2495c", "orange": "#ff9830", "yellow": "#fade2a",
	"blue": "#5794f2", "purple": "#b877d9", "text": "#ccccdc",
}

func css(c string) string {
	if v, ok := colours[c]; ok {
		return v
	}
	return c
}

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"css": css,
	"gridArea": func(p Panel) template.CSS {
		h := p.GridPos.H
		if h == 0 {
			h = 1
		}
		return template.CSS("grid-column: " + itoa(p.GridPos.X+1) + " / span " + itoa(p.GridPos.W) +
			"; grid-row: " + itoa(p.GridPos.Y+1) + " / span " + itoa(h))
	},
	"cellStyle": func(c Cell) template.CSS {
		if c.Colour == "" {
			return ""
		}
		return template.CSS("color: " + css(c.Colour))
	},
	"bg": func(c Cell) template.CSS {
		if c.Text == "" {
			return "background: transparent"
		}
		if c.Colour == "" {
			return "background: #333"
		}
		return template.CSS("background: " + css(c.Colour))
	},
	"every": func(n, i int) bool { return i%n == 0 },
	"cols": func(n int) template.CSS {
		return template.CSS("grid-template-columns: 90px repeat(" + itoa(n) + ", 1fr)")
	},
}).Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>{{.Dashboard.Title}}</title>
<style>
body { background: #111217; color: #ccccdc; font: 13px/1.3 Inter, "Helvetica Neue", Arial, sans-serif; margin: 0; padding: 12px 16px; }
h1 { font-size: 18px; font-weight: 500; margin: 0 0 2px; }
.sub { color: #8e8e8e; font-size: 12px; margin-bottom: 10px; }
.grid { display: grid; grid-template-columns: repeat(24, 1fr); grid-auto-rows: 30px; gap: 8px; }
.panel { background: #181b1f; border: 1px solid #2c3235; border-radius: 2px; padding: 6px 8px; overflow: hidden; display: flex; flex-direction: column; }
.row { grid-column: 1 / span 24; font-size: 15px; font-weight: 500; padding-top: 6px; }
.title { font-weight: 500; font-size: 13px; margin-bottom: 4px; white-space: nowrap; overflow: hidden; }
.stat { display: flex; gap: 18px; align-items: center; justify-content: center; flex: 1; flex-wrap: wrap; }
.stat .v { font-size: 30px; font-weight: 500; text-align: center; }
.stat .n { font-size: 12px; color: #8e8e8e; text-align: center; }
.nodata { color: #8e8e8e; font-size: 18px; }
table { border-collapse: collapse; width: 100%; font-size: 12px; }
th { text-align: left; color: #6e9fff; font-weight: 500; border-bottom: 1px solid #2c3235; padding: 3px 6px; }
td { border-bottom: 1px solid #22252b; padding: 2px 6px; white-space: nowrap; max-width: 420px; overflow: hidden; text-overflow: ellipsis; }
.tl { display: grid; gap: 1px; font-size: 10px; }
.tl .name { padding-right: 6px; white-space: nowrap; align-self: center; }
.tl .c { color: #111217; text-align: center; padding: 5px 0; overflow: hidden; white-space: nowrap; font-weight: 600; }
.tl .t { color: #8e8e8e; font-size: 10px; white-space: nowrap; }
</style></head><body>
<h1>{{.Dashboard.Title}}</h1>
<div class="sub">{{.Note}}</div>
<div class="grid">
{{range .Panels}}{{if eq .Panel.Type "row"}}<div class="row" style="{{gridArea .Panel}}">{{.Panel.Title}}</div>
{{else}}<div class="panel" id="panel-{{.Panel.ID}}" style="{{gridArea .Panel}}"><div class="title">{{.Panel.Title}}</div>
{{if eq .Panel.Type "stat"}}<div class="stat">{{range .Items}}<div><div class="v" style="{{cellStyle .}}">{{.Text}}</div>{{if .Name}}<div class="n">{{.Name}}</div>{{end}}</div>{{else}}<div class="nodata">{{.NoValue}}</div>{{end}}</div>
{{else if eq .Panel.Type "table"}}{{with .Table}}{{if .Rows}}<table><tr>{{range .Columns}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td style="{{cellStyle .}}">{{.Text}}</td>{{end}}</tr>
{{end}}</table>{{else}}<div class="nodata">No data</div>{{end}}{{end}}
{{else if eq .Panel.Type "state-timeline"}}{{$n := len .Times}}<div class="tl" style="{{cols $n}}">
{{range .Timeline}}<div class="name">{{.Name}}</div>{{range .Cells}}<div class="c" style="{{bg .}}" title="{{.Name}}">{{.Text}}</div>{{end}}
{{end}}<div></div>{{range $i, $t := .Times}}<div class="t">{{if every 5 $i}}{{$t.UTC.Format "15:04"}}{{end}}</div>{{end}}
</div>{{end}}
</div>
{{end}}{{end}}
</div></body></html>
`))

func itoa(i int) string { return strconv.Itoa(i) }

// HTML is the evaluated dashboard as a static page; note says where the
// data comes from (it is printed under the title).
func HTML(r Result, note string) ([]byte, error) {
	var b bytes.Buffer
	err := page.Execute(&b, struct {
		Result
		Note string
	}{r, strings.TrimSpace(note)})
	return b.Bytes(), err
}
