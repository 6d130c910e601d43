package promqlnames

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Query is one query of a Grafana dashboard: a panel target, an annotation
// or a template variable.
type Query struct {
	File         string
	DashboardUID string
	Dashboard    string // title
	Kind         string // "target", "annotation" or "variable"
	PanelID      int    // 0 for annotations and variables
	Panel        string // panel title, annotation name or variable name
	RefID        string // the target's refId ("" for annotations and variables)
	Expr         string // as written, Grafana variables included
}

// Key identifies a query across runs: "<dashboard uid>/<panel title>/<refId>"
// for a target, "<dashboard uid>/annotation:<name>" and
// "<dashboard uid>/variable:<name>" for the others.
func (q Query) Key() string {
	switch q.Kind {
	case "target":
		return q.DashboardUID + "/" + q.Panel + "/" + q.RefID
	default:
		return q.DashboardUID + "/" + q.Kind + ":" + q.Panel
	}
}

// MetricsQL is the query as VictoriaMetrics would receive it: Grafana
// variables expanded (ExpandGrafana with vars), and a variable's
// label_values() / query_result() reduced to the expression inside. ok is
// false for a variable query that reads no metric.
func (q Query) MetricsQL(vars map[string]string) (expr string, ok bool) {
	e := q.Expr
	if q.Kind == "variable" {
		if e, ok = VariableExpr(e); !ok {
			return "", false
		}
	}
	return ExpandGrafana(e, vars), true
}

type dashboardJSON struct {
	UID         string          `json:"uid"`
	Title       string          `json:"title"`
	Panels      []panelJSON     `json:"panels"`
	Annotations json.RawMessage `json:"annotations"`
	Templating  struct {
		List []struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Query json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

type panelJSON struct {
	ID      int         `json:"id"`
	Title   string      `json:"title"`
	Type    string      `json:"type"`
	Panels  []panelJSON `json:"panels"` // a collapsed row's panels
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
}

// LoadDashboardQueries reads every *.json dashboard in dir and returns its
// queries, dashboards sorted by file name, panels in file order.
func LoadDashboardQueries(dir string) ([]Query, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no dashboard in %s", dir)
	}
	sort.Strings(files)
	var out []Query
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var d dashboardJSON
		if err := json.Unmarshal(b, &d); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		base := Query{File: f, DashboardUID: d.UID, Dashboard: d.Title}
		var walk func(ps []panelJSON)
		walk = func(ps []panelJSON) {
			for _, p := range ps {
				for _, t := range p.Targets {
					if strings.TrimSpace(t.Expr) == "" {
						continue
					}
					q := base
					q.Kind, q.PanelID, q.Panel, q.RefID, q.Expr = "target", p.ID, p.Title, t.RefID, t.Expr
					out = append(out, q)
				}
				walk(p.Panels)
			}
		}
		walk(d.Panels)

		var ann struct {
			List []struct {
				Name string `json:"name"`
				Expr string `json:"expr"`
			} `json:"list"`
		}
		if len(d.Annotations) > 0 {
			if err := json.Unmarshal(d.Annotations, &ann); err != nil {
				return nil, fmt.Errorf("%s: annotations: %w", f, err)
			}
		}
		for _, a := range ann.List {
			if strings.TrimSpace(a.Expr) == "" {
				continue
			}
			q := base
			q.Kind, q.Panel, q.Expr = "annotation", a.Name, a.Expr
			out = append(out, q)
		}

		for _, v := range d.Templating.List {
			if v.Type != "query" || len(v.Query) == 0 {
				continue
			}
			// A string (older Grafana) or {"query": "...", ...}.
			var s string
			if err := json.Unmarshal(v.Query, &s); err != nil {
				var obj struct {
					Query string `json:"query"`
				}
				if err := json.Unmarshal(v.Query, &obj); err != nil {
					return nil, fmt.Errorf("%s: variable %s: query is neither a string nor an object", f, v.Name)
				}
				s = obj.Query
			}
			q := base
			q.Kind, q.Panel, q.Expr = "variable", v.Name, s
			out = append(out, q)
		}
	}
	return out, nil
}

// ExpectedEmpty is a query allowed to return no data on a stack without Apple
// hardware or without a fault, and why (dashboards/expected-empty.yml).
type ExpectedEmpty struct {
	Key    string `yaml:"key"`    // Query.Key()
	Reason string `yaml:"reason"` // "macos-only: ...", "fault-only: ...", "config-only: ..."
}

// LoadExpectedEmpty reads the list of queries allowed to return no data,
// keyed by Query.Key().
func LoadExpectedEmpty(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var list []ExpectedEmpty
	if err := yaml.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := map[string]string{}
	for _, e := range list {
		if e.Key == "" || e.Reason == "" {
			return nil, fmt.Errorf("%s: entry %q needs a key and a reason", path, e.Key)
		}
		if _, dup := out[e.Key]; dup {
			return nil, fmt.Errorf("%s: %s listed twice", path, e.Key)
		}
		out[e.Key] = e.Reason
	}
	return out, nil
}
