package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/internal/opikapi"
)

// The original's Opik dashboard (tools/opik_dashboards.py, through the
// Opik SDK), provisioned over Opik's REST API: the dashboard's content is
// the frontend's schema (config version 4: sections of widgets with a
// 6-column layout), which the backend stores as it is.
const (
	dashboardName        = "mlx: serving health & quality"
	dashboardDescription = "Serving health & quality for the mlx project: trace volume, latency, token usage, cost, errors, and judge feedback scores."
	dashboardHeader      = "**mlx project**: metrics of the MLX serving proxy. Traces carry the proxy's model, timings and heuristic scores " +
		"(hallucination_quality, hallucination_flagged, token_confidence); the judge loop writes correctness, helpfulness and hallucination_free."
	configVersion = 4
	gridColumns   = 6
)

type widget struct {
	ID     string         `json:"id"`
	Type   string         `json:"type"`
	Title  string         `json:"title"`
	Config map[string]any `json:"config"`
}

type layoutItem struct {
	I string `json:"i"`
	X int    `json:"x"`
	Y int    `json:"y"`
	W int    `json:"w"`
	H int    `json:"h"`
}

type section struct {
	ID      string       `json:"id"`
	Title   string       `json:"title"`
	Widgets []widget     `json:"widgets"`
	Layout  []layoutItem `json:"layout"`
}

// statsCard is a number over the project's traces (StatsCardMetric).
func statsCard(title, metric string) widget {
	return widget{Type: "project_stats_card", Title: title, Config: map[string]any{"source": "traces", "metric": metric}}
}

// timeSeries is a chart over time (ProjectMetricType), broken down by a
// field when one is given.
func timeSeries(title, metricType, breakdown string, scores ...string) widget {
	c := map[string]any{"metricType": metricType, "chartType": "line"}
	if breakdown != "" {
		c["breakdown"] = map[string]any{"field": breakdown}
	}
	if len(scores) > 0 {
		c["feedbackScores"] = scores
	}
	return widget{Type: "project_metrics", Title: title, Config: c}
}

// The widget sizes of Opik's layout (sdks/python/.../dashboard/layout.py).
func size(w widget) (int, int) {
	switch w.Type {
	case "project_stats_card":
		return 1, 2
	case "text_markdown":
		return gridColumns, 4
	}
	return 2, 4
}

// newSection lays the widgets out left to right, a row at a time.
func newSection(key, title string, widgets ...widget) section {
	s := section{ID: key, Title: title}
	x, y, rowH := 0, 0, 0
	for i, w := range widgets {
		w.ID = key + "-" + strconv.Itoa(i+1)
		ww, wh := size(w)
		if x+ww > gridColumns {
			x, y, rowH = 0, y+rowH, 0
		}
		s.Widgets = append(s.Widgets, w)
		s.Layout = append(s.Layout, layoutItem{I: w.ID, X: x, Y: y, W: ww, H: wh})
		x += ww
		rowH = max(rowH, wh)
	}
	return s
}

// dashboardConfig is the original's two sections, Overview and Trends,
// and a chart that puts the judge's scores beside the proxy's heuristics.
// Project widgets name the project by id.
func dashboardConfig(projectID string) map[string]any {
	overview := newSection("overview", "Overview",
		widget{Type: "text_markdown", Title: "About", Config: map[string]any{"content": dashboardHeader}},
		statsCard("Total traces", "trace_count"),
		statsCard("Latency p50", "duration.p50"),
		statsCard("Latency p90", "duration.p90"),
		statsCard("Latency p99", "duration.p99"),
		statsCard("Errors", "error_count"),
		statsCard("Total tokens", "usage.total_tokens"),
		statsCard("Est. cost", "total_estimated_cost_sum"),
		statsCard("Correctness", "feedback_scores.correctness"),
		statsCard("Helpfulness", "feedback_scores.helpfulness"),
		statsCard("Hallucination-free", "feedback_scores.hallucination_free"),
	)
	trends := newSection("trends", "Trends",
		timeSeries("Trace volume", "TRACE_COUNT", ""),
		timeSeries("Trace duration", "DURATION", ""),
		timeSeries("Token usage", "TOKEN_USAGE", ""),
		timeSeries("Estimated cost", "COST", ""),
		timeSeries("Error rate", "TRACE_ERROR_RATE", ""),
		timeSeries("LLM spans by model", "SPAN_COUNT", "model"),
		timeSeries("Judge and heuristic scores", "FEEDBACK_SCORES", "",
			"correctness", "helpfulness", "hallucination_free", "hallucination_quality", "token_confidence"),
	)
	sections := []section{overview, trends}
	for _, s := range sections {
		for _, w := range s.Widgets {
			if w.Type != "text_markdown" {
				w.Config["projectId"] = projectID
			}
		}
	}
	return map[string]any{"version": configVersion, "sections": sections, "lastModified": time.Now().UnixMilli()}
}

// provision replaces the dashboard as the original did: every dashboard
// of that name is deleted, then it is created again. Creating it with
// project_name makes the project when there is none; its id, known from
// the answer, is then written into the widgets.
func provision(ctx context.Context, api *opikapi.Client, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintln(stderr, "mlxjudge: provision dashboard:", err)
		return 1
	}
	existing, err := api.Dashboards(ctx, dashboardName)
	if err != nil {
		return fail(err)
	}
	for _, d := range existing {
		if d.Name != dashboardName {
			continue // Opik matches a part of the name
		}
		if err := api.DeleteDashboard(ctx, d.ID); err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "[dashboards] deleted existing dashboard %s\n", d.ID)
	}
	created, err := api.CreateDashboard(ctx, opikapi.NewDashboard{Name: dashboardName, Description: dashboardDescription,
		Type: "multi_project", ProjectName: api.Project, Config: dashboardConfig("")})
	if err != nil {
		return fail(err)
	}
	if created.ProjectID == "" {
		return fail(fmt.Errorf("opik did not say which project %q is", api.Project))
	}
	if _, err := api.SetDashboardConfig(ctx, created.ID, dashboardConfig(created.ProjectID)); err != nil {
		return fail(err)
	}
	fmt.Fprintf(stdout, "[dashboards] created %q -> %s\n", created.Name, created.ID)
	confirm, err := api.GetDashboard(ctx, created.ID)
	if err != nil {
		return fail(err)
	}
	var cfg struct {
		Sections []section `json:"sections"`
	}
	if err := json.Unmarshal(confirm.Config, &cfg); err != nil || len(cfg.Sections) == 0 {
		return fail(fmt.Errorf("the stored dashboard has no sections (%v)", err))
	}
	fmt.Fprintf(stdout, "[dashboards] verified: id=%s name=%q sections=%d\n", confirm.ID, confirm.Name, len(cfg.Sections))
	return 0
}
