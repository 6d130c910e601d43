package htmlreport

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mlxbench/bench"
)

//go:embed report.html.tmpl
var pageTemplate string

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"ms": bench.FormatMs,
	// pms and pnum print one statistic of a distribution, "–" when it is
	// empty (no TTFT without a stream).
	"pms": func(p bench.Pcts, stat string) string {
		if p.N == 0 {
			return "–"
		}
		return bench.FormatMs(p.Get(stat))
	},
	"pnum": func(p bench.Pcts, stat string) string {
		if p.N == 0 {
			return "–"
		}
		return fmtNum(p.Get(stat))
	},
	"num": func(v float64) string { return fmtNum(v) },
	"pct": func(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) },
	"errors": func(m map[string]int) string {
		if len(m) == 0 {
			return "–"
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
		}
		return strings.Join(parts, ", ")
	},
	"src":    func(f Figure) template.URL { return template.URL(f.DataURI()) },
	"pretty": prettyJSON,
	"dur":    func(r *bench.Report) string { return fmt.Sprintf("%.1f s", r.Finished.Sub(r.Started).Seconds()) },
	"isRate": func(l bench.Level) bool { return l.Mode == "rate" },
}).Parse(pageTemplate))

func fmtNum(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func prettyJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}

// snapshotErrors sums the scrapes that failed, by source.
type snapshotError struct {
	Source string
	Count  int
	Last   string
}

type pageData struct {
	R         *bench.Report
	Figures   []Figure
	SnapErrs  []snapshotError
	SnapOK    int
	Flags     [][2]string
	Sample    int
	HasRate   bool
	Scenarios []bench.ScenarioSummary
}

// Render returns the report's HTML page.
func Render(r *bench.Report, samples []bench.Sample) ([]byte, error) {
	figs, err := Figures(r, samples)
	if err != nil {
		return nil, err
	}
	d := pageData{R: r, Figures: figs, Sample: len(samples)}
	errs := map[string]*snapshotError{}
	for _, s := range r.Snapshots {
		if s.Err == "" {
			d.SnapOK++
			continue
		}
		e := errs[s.Source]
		if e == nil {
			e = &snapshotError{Source: s.Source}
			errs[s.Source] = e
		}
		e.Count++
		e.Last = s.Err
	}
	for _, e := range errs {
		d.SnapErrs = append(d.SnapErrs, *e)
	}
	sort.Slice(d.SnapErrs, func(i, j int) bool { return d.SnapErrs[i].Source < d.SnapErrs[j].Source })
	for k, v := range r.Flags {
		d.Flags = append(d.Flags, [2]string{k, v})
	}
	sort.Slice(d.Flags, func(i, j int) bool { return d.Flags[i][0] < d.Flags[j][0] })
	for _, l := range r.Levels {
		d.HasRate = d.HasRate || l.Mode == "rate"
	}
	if r.Agentic != nil {
		d.Scenarios = r.Agentic.Scenarios
	}
	var buf bytes.Buffer
	if err := page.Execute(&buf, d); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// PathFor is the HTML file beside a JSON report.
func PathFor(jsonPath string) string {
	return strings.TrimSuffix(jsonPath, ".json") + ".html"
}

// Write renders the report to path.
func Write(path string, r *bench.Report, samples []bench.Sample) error {
	b, err := Render(r, samples)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// WritePNGs writes each figure as <dir>/<prefix><id>.png (for docs).
func WritePNGs(dir, prefix string, figs []Figure) ([]string, error) {
	var out []string
	for _, f := range figs {
		p := fmt.Sprintf("%s/%s%s.png", strings.TrimRight(dir, "/"), prefix, f.ID)
		if err := os.WriteFile(p, f.PNG, 0o644); err != nil {
			return out, err
		}
		out = append(out, p)
	}
	return out, nil
}
