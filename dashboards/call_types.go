package dashboards

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

// callTypes is the original's "MLX Call Types (reasoning vs chat)": the
// call mix and how each kind behaves. Ours fixes two of its panels: the
// token rates are per minute as titled, and the flags are split by kind.
func callTypes() *dashboard.DashboardBuilder {
	// perKind is a counter's rate per request, by kind (clamped so an idle
	// kind reads 0, not NaN).
	perKind := func(metric string) string {
		return `sum by (kind) (rate(` + metric + `{{P}}[{R}])) / clamp_min(sum by (kind) (rate(mlx_requests_total{{P}}[{R}])), 0.0001)`
	}
	return newDashboard("mlx-call-types", "MLX Call Types (reasoning vs chat)").
		Description("Reasoning against plain chat: the call mix, tokens, tools, errors and quality by kind.").
		Tags([]string{"mlx", "calls"}).
		WithVariable(modelVar()).
		WithRow(dashboard.NewRowBuilder("Call mix")).
		WithPanel(ts("Requests / min by kind").Span(8).Unit("none").Min(0).Stacking(stacked()).
			WithTarget(q(`sum by (kind) (rate(mlx_requests_total{{P}}[{R}])) * 60`, "{{kind}}"))).
		WithPanel(ts("Reasoning share").Span(8).Unit("percentunit").Min(0).Max(1).
			WithTarget(q(`sum(rate(mlx_requests_total{{P}, kind="reasoning"}[{R}])) / clamp_min(sum(rate(mlx_requests_total{{P}}[{R}])), 0.0001)`, "reasoning"))).
		WithPanel(ts("Streamed and not, by kind").Span(8).Unit("none").Min(0).
			WithTarget(q(`sum by (kind, streaming) (rate(mlx_requests_total{{P}}[{R}])) * 60`, "{{kind}} stream={{streaming}}"))).
		WithRow(dashboard.NewRowBuilder("Behavior by kind")).
		WithPanel(ts("Prompt tokens / min by kind").Span(6).Unit("none").Min(0).
			WithTarget(q(`sum by (kind) (rate(mlx_tokens_prompt_total{{P}}[{R}])) * 60`, "{{kind}}"))).
		WithPanel(ts("Completion tokens / min by kind").Span(6).Unit("none").Min(0).
			WithTarget(q(`sum by (kind) (rate(mlx_tokens_completion_total{{P}}[{R}])) * 60`, "{{kind}}"))).
		WithPanel(ts("Tool calls / min by kind").Span(6).Unit("none").Min(0).
			WithTarget(qe(`sum by (kind) (rate(mlx_tool_calls_total{{P}}[{R}])) * 60`, "{{kind}}", toolsOnly))).
		WithPanel(ts("Finish reasons / min by kind").Span(6).Unit("none").Min(0).
			WithTarget(q(`sum by (kind, reason) (rate(mlx_finish_reason_total{{P}}[{R}])) * 60`, "{{kind}} {{reason}}"))).
		WithRow(dashboard.NewRowBuilder("Tool usage")).
		WithPanel(ts("Tool calls / min by tool").Span(12).Unit("none").Min(0).Stacking(stacked()).
			WithTarget(qe(`sum by (tool) (rate(mlx_tool_calls_total{{P}}[{R}])) * 60`, "{{tool}}", toolsOnly))).
		WithPanel(ts("Tool calls / min by type").Span(12).Unit("none").Min(0).Stacking(stacked()).
			WithTarget(qe(`sum by (type) (rate(mlx_tool_calls_total{{P}}[{R}])) * 60`, "{{type}}", toolsOnly))).
		WithRow(dashboard.NewRowBuilder("Efficiency and errors by kind")).
		WithPanel(ts("Prompt tokens / request").Span(6).Unit("none").Min(0).
			WithTarget(q(perKind("mlx_tokens_prompt_total"), "{{kind}}"))).
		WithPanel(ts("Completion tokens / request").Span(6).Unit("none").Min(0).
			WithTarget(q(perKind("mlx_tokens_completion_total"), "{{kind}}"))).
		WithPanel(ts("Error share by kind").Span(6).Unit("percentunit").Min(0).Max(1).
			WithTarget(q(perKind("mlx_error_total"), "{{kind}}"))).
		WithPanel(ts("Temperature by kind (last request)").Span(6).Unit("none").Min(0).
			WithTarget(q(`max by (kind) (mlx_temperature{{P}})`, "{{kind}}"))).
		WithRow(dashboard.NewRowBuilder("Quality by kind")).
		WithPanel(ts("Hallucination risk by kind (last request)").Span(8).Unit("none").Min(0).Max(1).
			WithTarget(q(`max by (kind) (mlx_hallucination_risk{{P}})`, "{{kind}}"))).
		WithPanel(ts("Hallucination flags / min by kind").Span(8).Unit("none").Min(0).
			WithTarget(qe(`sum by (kind) (rate(mlx_hallucination_flag_total{{P}}[{R}])) * 60`, "{{kind}}", flagsOnly))).
		WithPanel(stat("Reasoning share (24 h)").Span(8).Unit("percentunit").Min(0).Max(1).
			WithTarget(q(`sum(increase(mlx_requests_total{{P}, kind="reasoning"}[24h])) / clamp_min(sum(increase(mlx_requests_total{{P}}[24h])), 1)`, "reasoning")))
}
