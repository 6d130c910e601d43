package dashboards

func httpKinds() Dashboard {
	return Dashboard{
		UID: "mlx-http", Title: "MLX HTTP & Call Kinds", Tags: []string{"mlx", "http"},
		Description: "Requests, outcomes and finish reasons, split by streaming and by call kind (chat / reasoning).",
		Vars:        []Var{modelVar},
		Rows: []Row{
			{"Traffic", []Panel{
				ts("Requests / min by streaming", "none", 8, q(`sum by (streaming) (rate(mlx_requests_total{{P}}[{R}])) * 60`, "streaming={{streaming}}")).min0().stacked(),
				ts("Requests / min by kind", "none", 8, q(`sum by (kind) (rate(mlx_requests_total{{P}}[{R}])) * 60`, "{{kind}}")).min0().stacked(),
				ts("In flight", "none", 8, q(`sum by (model) (mlx_in_flight{{P}})`, "{{model}}")).min0(),
			}},
			{"Outcomes", []Panel{
				ts("Errors / min by status", "none", 8, q(`sum by (status) (rate(mlx_error_total{{P}}[{R}])) * 60`, "{{status}}")).min0(),
				ts("Errors / min by kind", "none", 8, q(`sum by (kind) (rate(mlx_error_total{{P}}[{R}])) * 60`, "{{kind}}")).min0(),
				ts("Error ratio", "percentunit", 8,
					q(`(sum(rate(mlx_error_total{{P}}[{R}])) or vector(0)) / sum(rate(mlx_requests_total{{P}}[{R}]))`, "4xx+5xx"),
					q(`(sum(rate(mlx_error_total{{P}, status="5xx"}[{R}])) or vector(0)) / sum(rate(mlx_requests_total{{P}}[{R}]))`, "5xx")).min0(),
				ts("Finish reasons / min", "none", 12, q(`sum by (reason) (rate(mlx_finish_reason_total{{P}}[{R}])) * 60`, "{{reason}}")).min0().stacked(),
				ts("Truncated share (finish_reason=length)", "percentunit", 12,
					q(`(sum(rate(mlx_finish_reason_total{{P}, reason="length"}[{R}])) or vector(0)) / sum(rate(mlx_finish_reason_total{{P}}[{R}]))`, "length")).ratio().
					steps(Step{"green", 0}, Step{"red", 0.2}).desc("MLXResponsesTruncated fires above 20% over 15 minutes."),
			}},
			{"Call kinds", []Panel{
				ts("Completion tokens / s by kind", "none", 12, q(`sum by (kind) (rate(mlx_tokens_completion_total{{P}}[{R}]))`, "{{kind}}")).min0(),
				ts("Prompt tokens / s by kind", "none", 12, q(`sum by (kind) (rate(mlx_tokens_prompt_total{{P}}[{R}]))`, "{{kind}}")).min0(),
				ts("Cached prompt tokens / s by kind", "none", 12, q(`sum by (kind) (rate(mlx_prompt_cached_tokens_total{{P}}[{R}]))`, "{{kind}}")).min0(),
				ts("Hallucination risk by kind (last request)", "none", 12, q(`max by (kind) (mlx_hallucination_risk{{P}})`, "{{kind}}")).ratio(),
				ts("Temperature by kind (last request)", "none", 12, q(`max by (kind) (mlx_temperature{{P}})`, "{{kind}}")).min0(),
				ts("Tool calls / min by kind", "none", 12, qe(`sum by (kind) (rate(mlx_tool_calls_total{{P}}[{R}])) * 60`, "{{kind}}", toolsOnly)).min0(),
			}},
			{"Totals", []Panel{
				stat("Requests (24 h)", "none", 6, q(`sum(increase(mlx_requests_total{{P}}[24h])) or vector(0)`, "requests")),
				stat("Upstream reachable (1 h)", "percentunit", 6, q(`avg_over_time(min(mlx_up{job="mlx-proxy"})[1h:1m])`, "reachable")).ratio().
					steps(Step{"red", 0}, Step{"orange", 0.99}, Step{"green", 0.999}),
				stat("Tokens / request", "none", 6,
					q(`sum(rate(mlx_tokens_completion_total{{P}}[{R}])) / clamp_min(sum(rate(mlx_requests_total{{P}}[{R}])), 0.0001)`, "completion")),
				stat("Flags / min", "none", 6, q(`(sum(rate(mlx_hallucination_flag_total{{P}}[{R}])) * 60) or vector(0)`, "flags")),
			}},
		},
	}
}
