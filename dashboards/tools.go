package dashboards

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

func tools() *dashboard.DashboardBuilder {
	return newDashboard("mlx-tools", "MLX Tool Calls").
		Description("Which tools the model calls, how often, and answers given without one.").
		Tags([]string{"mlx", "tools"}).
		WithVariable(modelVar()).
		WithRow(dashboard.NewRowBuilder("Calls")).
		WithPanel(ts("Tool calls / min by tool").Span(12).Unit("none").Min(0).Stacking(stacked()).
			WithTarget(qe(`sum by (tool) (rate(mlx_tool_calls_total{{P}}[{R}])) * 60`, "{{tool}}", toolsOnly))).
		WithPanel(ts("Tool calls / min by type").Span(12).Unit("none").Min(0).Stacking(stacked()).
			WithTarget(qe(`sum by (type) (rate(mlx_tool_calls_total{{P}}[{R}])) * 60`, "{{type}}", toolsOnly))).
		WithPanel(table("Top tools (24 h)").Span(12).
			WithTarget(instant(qe(`topk(10, sum by (tool, type) (increase(mlx_tool_calls_total{{P}}[24h])))`, "", toolsOnly)))).
		WithPanel(ts("Completions ending in tool calls").Span(12).Unit("percentunit").Min(0).Max(1).
			WithTarget(q(`(sum(rate(mlx_finish_reason_total{{P}, reason="tool_calls"}[{R}])) or vector(0)) / sum(rate(mlx_finish_reason_total{{P}}[{R}]))`, "tool_calls share"))).
		WithRow(dashboard.NewRowBuilder("Grounding")).
		WithPanel(ts("Ungrounded heuristic (last request)").Span(12).Unit("none").Min(0).Max(1).
			Description("1 when a factual-looking answer came back without any tool call although tools were offered.").
			WithTarget(q(`max by (model) (mlx_heuristic_ungrounded{{P}})`, "{{model}}"))).
		WithPanel(ts("Tool calls per completion").Span(12).Unit("none").Min(0).
			WithTarget(qe(`sum(rate(mlx_tool_calls_total{{P}}[{R}])) / sum(rate(mlx_requests_total{{P}}[{R}]))`, "calls / completion", toolsOnly))).
		WithRow(dashboard.NewRowBuilder("Totals")).
		WithPanel(stat("Tool calls (30 d)").Span(6).Unit("none").
			WithTarget(q(`sum(increase(mlx_tool_calls_total{{P}}[30d])) or vector(0)`, "calls"))).
		WithPanel(stat("Distinct tools (30 d)").Span(6).Unit("none").
			WithTarget(q(`count(sum by (tool) (increase(mlx_tool_calls_total{{P}}[30d])) > 0) or vector(0)`, "tools"))).
		WithPanel(stat("Tools active (7 d)").Span(6).Unit("none").
			WithTarget(q(`count(sum by (tool) (increase(mlx_tool_calls_total{{P}}[7d])) > 0) or vector(0)`, "tools"))).
		WithPanel(stat("Tools active (24 h)").Span(6).Unit("none").
			WithTarget(q(`count(sum by (tool) (increase(mlx_tool_calls_total{{P}}[24h])) > 0) or vector(0)`, "tools"))).
		WithPanel(pie("Share of calls by tool (24 h)").Span(24).Height(8).Unit("percentunit").
			WithTarget(qe(`sum by (tool) (increase(mlx_tool_calls_total{{P}}[24h])) / scalar(sum(increase(mlx_tool_calls_total{{P}}[24h])))`, "{{tool}}", toolsOnly)))
}
