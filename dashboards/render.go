package dashboards

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
)

// Build builds the dashboard, then does what Grafana's editor would do and
// the builders leave out: it numbers rows and panels (ids 1, 2... in
// order) and each panel's queries (refIds A, B...). It returns the
// expected-empty entries of its queries too ("<uid>/<panel title>/<refId>"
// -> reason, from qe), and fails on what would make those keys ambiguous
// or a panel wrong: two panels with one title, a query panel without
// queries, a text panel with some, a time series whose threshold steps
// and threshold lines disagree.
func Build(b *dashboard.DashboardBuilder) (dashboard.Dashboard, map[string]string, error) {
	d, err := b.Build()
	if err != nil {
		return dashboard.Dashboard{}, nil, err
	}
	if d.Uid == nil {
		return dashboard.Dashboard{}, nil, fmt.Errorf("dashboard %q: no uid", str(d.Title))
	}
	uid := *d.Uid
	empty := map[string]string{}
	titles := map[string]bool{}
	for i, pr := range d.Panels {
		id := uint32(i + 1)
		if pr.RowPanel != nil {
			pr.RowPanel.Id = id
			continue
		}
		p := pr.Panel
		p.Id = &id
		title := str(p.Title)
		if titles[title] {
			return dashboard.Dashboard{}, nil, fmt.Errorf("%s: two panels titled %q", uid, title)
		}
		titles[title] = true
		if err := checkPanel(p); err != nil {
			return dashboard.Dashboard{}, nil, fmt.Errorf("%s: %q: %w", uid, title, err)
		}
		for j, t := range p.Targets {
			pq, ok := t.(prometheus.Dataquery)
			if !ok {
				return dashboard.Dashboard{}, nil, fmt.Errorf("%s: %q: query %d is a %T, not a prometheus one", uid, title, j, t)
			}
			ref := string(rune('A' + j))
			pq.RefId = &ref
			p.Targets[j] = pq
			why, ok := emptyReason(pq.Expr)
			if !ok {
				return dashboard.Dashboard{}, nil, fmt.Errorf("%s: %q: two reasons why %s may be empty", uid, title, pq.Expr)
			}
			if why != "" {
				empty[uid+"/"+title+"/"+ref] = why
			}
		}
	}
	return d, empty, nil
}

func checkPanel(p *dashboard.Panel) error {
	if p.Type == "text" {
		if len(p.Targets) > 0 {
			return fmt.Errorf("a text panel has no queries")
		}
		return nil
	}
	if len(p.Targets) == 0 {
		return fmt.Errorf("no queries")
	}
	if len(p.Targets) > 26 {
		return fmt.Errorf("too many queries")
	}
	// A time series with thresholds draws them (thresholdLines), and one
	// without draws none.
	if p.Type != "timeseries" || p.FieldConfig == nil {
		return nil
	}
	if custom, ok := p.FieldConfig.Defaults.Custom.(*common.GraphFieldConfig); ok {
		steps := 0
		if th := p.FieldConfig.Defaults.Thresholds; th != nil {
			steps = len(th.Steps)
		}
		lines := custom.ThresholdsStyle != nil && custom.ThresholdsStyle.Mode == common.GraphThresholdsStyleModeLine
		if lines != (steps > 1) {
			return fmt.Errorf("%d threshold steps, threshold lines %v: set Thresholds and ThresholdsStyle(thresholdLines()) together", steps, lines)
		}
	}
	return nil
}

// Marshal is the dashboard's JSON as checked in: indented, and with <, >
// and & left as they are (queries hold them).
func Marshal(d dashboard.Dashboard) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
