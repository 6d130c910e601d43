// Package promqlnames reads the queries the project ships (the alerting and
// recording rules under rules/, the Grafana dashboards under dashboards/)
// and names the metrics they read. The rule and dashboard tests use it to
// check that every query parses as MetricsQL; the live-stack test uses it to
// check that every name read exists in VictoriaMetrics and that every
// dashboard query returns data.
//
// Expressions are parsed with github.com/VictoriaMetrics/metricsql, the
// parser of the VictoriaMetrics and vmalert that run them. MetricsQL accepts
// every PromQL expression the project writes; promtool checks the rules as
// PromQL separately (rules/rules.mk).
package promqlnames

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/VictoriaMetrics/metricsql"
)

// Names returns the metric names expr reads, sorted and without duplicates:
// the value of every `__name__="..."` filter (the name before the braces of
// a selector is one). A selector that names its metric by regexp, or has no
// name at all, is an error: every name must be explicit so that it can be
// checked. expr must be plain MetricsQL; expand Grafana variables with
// ExpandGrafana first.
func Names(expr string) ([]string, error) {
	e, err := metricsql.Parse(expr)
	if err != nil {
		return nil, err
	}
	set := map[string]struct{}{}
	var errs []string
	metricsql.VisitAll(e, func(x metricsql.Expr) {
		me, ok := x.(*metricsql.MetricExpr)
		if !ok {
			return
		}
		if len(me.LabelFilterss) == 0 {
			errs = append(errs, fmt.Sprintf("selector %s has no metric name", me.AppendString(nil)))
			return
		}
		for _, lfs := range me.LabelFilterss {
			named := false
			for _, lf := range lfs {
				if lf.Label != "__name__" {
					continue
				}
				if lf.IsRegexp || lf.IsNegative {
					errs = append(errs, fmt.Sprintf("selector %s matches its metric name by regexp or negation", me.AppendString(nil)))
					named = true
					continue
				}
				set[lf.Value] = struct{}{}
				named = true
			}
			if !named {
				errs = append(errs, fmt.Sprintf("selector %s has no metric name", me.AppendString(nil)))
			}
		}
	})
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

// GrafanaDefaults are the values ExpandGrafana gives Grafana's built-in
// interval variables: what a 1-hour dashboard with a 10 s scrape interval
// would get, roughly. Any other variable ($model, ${node}...) becomes ".*",
// so it must only be used inside a regexp matcher (model=~"$model").
var GrafanaDefaults = map[string]string{
	"__rate_interval": "1m",
	"__interval":      "30s",
	"__interval_ms":   "30000",
	"__range":         "1h",
	"__range_s":       "3600",
	"__range_ms":      "3600000",
}

// A variable's name starts with a letter or _: "$1" in label_replace's
// replacement is a capture group, which Grafana leaves as it is (no
// variable has that name).
var grafanaVar = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::[A-Za-z0-9_]+)?\}|\$([A-Za-z_][A-Za-z0-9_]*)`)

// ExpandGrafana replaces Grafana's template variables in a dashboard query:
// the interval ones by vars or GrafanaDefaults, every other one by vars or
// ".*" (All). vars may be nil.
func ExpandGrafana(expr string, vars map[string]string) string {
	return grafanaVar.ReplaceAllStringFunc(expr, func(m string) string {
		sub := grafanaVar.FindStringSubmatch(m)
		name := sub[1]
		if name == "" {
			name = sub[2]
		}
		if v, ok := vars[name]; ok {
			return v
		}
		if v, ok := GrafanaDefaults[name]; ok {
			return v
		}
		return ".*"
	})
}

var (
	labelValuesRe = regexp.MustCompile(`^\s*label_values\(\s*(.+?)\s*,\s*[A-Za-z_][A-Za-z0-9_]*\s*\)\s*$`)
	queryResultRe = regexp.MustCompile(`^\s*query_result\(\s*(.+)\s*\)\s*$`)
)

// VariableExpr returns the MetricsQL expression inside a Grafana Prometheus
// variable query: the selector of label_values(selector, label) or the
// expression of query_result(expr). ok is false for the forms that read no
// metric (label_names(), label_values(label), metrics(regexp)).
func VariableExpr(query string) (expr string, ok bool) {
	if m := labelValuesRe.FindStringSubmatch(query); m != nil {
		return m[1], true
	}
	if m := queryResultRe.FindStringSubmatch(query); m != nil {
		return m[1], true
	}
	return "", false
}
