package dashboards

func tools() Dashboard {
	return Dashboard{
		UID: "mlx-tools", Title: "MLX Tool Calls", Tags: []string{"mlx", "tools"},
		Description: "Which tools the model calls, how often, and answers given without one.",
		Vars:        []Var{modelVar},
		Rows: []Row{
			{"Calls", []Panel{
				ts("Tool calls / min by tool", "none", 12, qe(`sum by (tool) (rate(mlx_tool_calls_total{{P}}[{R}])) * 60`, "{{tool}}", toolsOnly)).min0().stacked(),
				ts("Tool calls / min by type", "none", 12, qe(`sum by (type) (rate(mlx_tool_calls_total{{P}}[{R}])) * 60`, "{{type}}", toolsOnly)).min0().stacked(),
				table("Top tools (24 h)", 12, qe(`topk(10, sum by (tool, type) (increase(mlx_tool_calls_total{{P}}[24h])))`, "", toolsOnly)),
				ts("Completions ending in tool calls", "percentunit", 12,
					q(`(sum(rate(mlx_finish_reason_total{{P}, reason="tool_calls"}[{R}])) or vector(0)) / sum(rate(mlx_finish_reason_total{{P}}[{R}]))`, "tool_calls share")).ratio(),
			}},
			{"Grounding", []Panel{
				ts("Ungrounded heuristic (last request)", "none", 12, q(`max by (model) (mlx_heuristic_ungrounded{{P}})`, "{{model}}")).ratio().
					desc("1 when a factual-looking answer came back without any tool call although tools were offered."),
				ts("Tool calls per completion", "none", 12,
					qe(`sum(rate(mlx_tool_calls_total{{P}}[{R}])) / sum(rate(mlx_requests_total{{P}}[{R}]))`, "calls / completion", toolsOnly)).min0(),
			}},
			{"Totals", []Panel{
				stat("Tool calls (30 d)", "none", 6, q(`sum(increase(mlx_tool_calls_total{{P}}[30d])) or vector(0)`, "calls")),
				stat("Distinct tools (30 d)", "none", 6, q(`count(sum by (tool) (increase(mlx_tool_calls_total{{P}}[30d])) > 0) or vector(0)`, "tools")),
				stat("Tools active (7 d)", "none", 6, q(`count(sum by (tool) (increase(mlx_tool_calls_total{{P}}[7d])) > 0) or vector(0)`, "tools")),
				stat("Tools active (24 h)", "none", 6, q(`count(sum by (tool) (increase(mlx_tool_calls_total{{P}}[24h])) > 0) or vector(0)`, "tools")),
				Panel{Type: "piechart", Title: "Share of calls by tool (24 h)", Unit: "percentunit", W: 24, H: 8, Targets: []Target{
					qe(`sum by (tool) (increase(mlx_tool_calls_total{{P}}[24h])) / scalar(sum(increase(mlx_tool_calls_total{{P}}[24h])))`, "{{tool}}", toolsOnly)}},
			}},
		},
	}
}
