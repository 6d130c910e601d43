package dashboards

// callTypes is the original's "MLX Call Types (reasoning vs chat)": the
// call mix and how each kind behaves. Ours fixes two of its panels: the
// token rates are per minute as titled, and the flags are split by kind.
func callTypes() Dashboard {
	perKind := func(metric string) string {
		return `sum by (kind) (rate(` + metric + `{{P}}[{R}])) / clamp_min(sum by (kind) (rate(mlx_requests_total{{P}}[{R}])), 0.0001)`
	}
	return Dashboard{
		UID: "mlx-call-types", Title: "MLX Call Types (reasoning vs chat)", Tags: []string{"mlx", "calls"},
		Description: "Reasoning against plain chat: the call mix, tokens, tools, errors and quality by kind.",
		Vars:        []Var{modelVar},
		Rows: []Row{
			{"Call mix", []Panel{
				ts("Requests / min by kind", "none", 8, q(`sum by (kind) (rate(mlx_requests_total{{P}}[{R}])) * 60`, "{{kind}}")).min0().stacked(),
				ts("Reasoning share", "percentunit", 8,
					q(`sum(rate(mlx_requests_total{{P}, kind="reasoning"}[{R}])) / clamp_min(sum(rate(mlx_requests_total{{P}}[{R}])), 0.0001)`, "reasoning")).ratio(),
				ts("Streamed and not, by kind", "none", 8, q(`sum by (kind, streaming) (rate(mlx_requests_total{{P}}[{R}])) * 60`, "{{kind}} stream={{streaming}}")).min0(),
			}},
			{"Behavior by kind", []Panel{
				ts("Prompt tokens / min by kind", "none", 6, q(`sum by (kind) (rate(mlx_tokens_prompt_total{{P}}[{R}])) * 60`, "{{kind}}")).min0(),
				ts("Completion tokens / min by kind", "none", 6, q(`sum by (kind) (rate(mlx_tokens_completion_total{{P}}[{R}])) * 60`, "{{kind}}")).min0(),
				ts("Tool calls / min by kind", "none", 6, qe(`sum by (kind) (rate(mlx_tool_calls_total{{P}}[{R}])) * 60`, "{{kind}}", toolsOnly)).min0(),
				ts("Finish reasons / min by kind", "none", 6, q(`sum by (kind, reason) (rate(mlx_finish_reason_total{{P}}[{R}])) * 60`, "{{kind}} {{reason}}")).min0(),
			}},
			{"Tool usage", []Panel{
				ts("Tool calls / min by tool", "none", 12, qe(`sum by (tool) (rate(mlx_tool_calls_total{{P}}[{R}])) * 60`, "{{tool}}", toolsOnly)).min0().stacked(),
				ts("Tool calls / min by type", "none", 12, qe(`sum by (type) (rate(mlx_tool_calls_total{{P}}[{R}])) * 60`, "{{type}}", toolsOnly)).min0().stacked(),
			}},
			{"Efficiency and errors by kind", []Panel{
				ts("Prompt tokens / request", "none", 6, q(perKind("mlx_tokens_prompt_total"), "{{kind}}")).min0(),
				ts("Completion tokens / request", "none", 6, q(perKind("mlx_tokens_completion_total"), "{{kind}}")).min0(),
				ts("Error share by kind", "percentunit", 6, q(perKind("mlx_error_total"), "{{kind}}")).ratio(),
				ts("Temperature by kind (last request)", "none", 6, q(`max by (kind) (mlx_temperature{{P}})`, "{{kind}}")).min0(),
			}},
			{"Quality by kind", []Panel{
				ts("Hallucination risk by kind (last request)", "none", 8, q(`max by (kind) (mlx_hallucination_risk{{P}})`, "{{kind}}")).ratio(),
				ts("Hallucination flags / min by kind", "none", 8, qe(`sum by (kind) (rate(mlx_hallucination_flag_total{{P}}[{R}])) * 60`, "{{kind}}", flagsOnly)).min0(),
				stat("Reasoning share (24 h)", "percentunit", 8,
					q(`sum(increase(mlx_requests_total{{P}, kind="reasoning"}[24h])) / clamp_min(sum(increase(mlx_requests_total{{P}}[24h])), 1)`, "reasoning")).ratio(),
			}},
		},
	}
}
