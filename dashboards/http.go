package dashboards

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

func httpKinds() *dashboard.DashboardBuilder {
	return newDashboard("mlx-http", "MLX HTTP & Call Kinds").
		Description("Requests, outcomes and finish reasons, split by streaming and by call kind (chat / reasoning).").
		Tags([]string{"mlx", "http"}).
		WithVariable(modelVar()).
		WithRow(dashboard.NewRowBuilder("Traffic")).
		WithPanel(ts("Requests / min by streaming").Span(8).Unit("none").Min(0).Stacking(stacked()).
			WithTarget(q(`sum by (streaming) (rate(mlx_requests_total{{P}}[{R}])) * 60`, "streaming={{streaming}}"))).
		WithPanel(ts("Requests / min by kind").Span(8).Unit("none").Min(0).Stacking(stacked()).
			WithTarget(q(`sum by (kind) (rate(mlx_requests_total{{P}}[{R}])) * 60`, "{{kind}}"))).
		WithPanel(ts("In flight").Span(8).Unit("none").Min(0).
			WithTarget(q(`sum by (model) (mlx_in_flight{{P}})`, "{{model}}"))).
		WithPanel(ts("Requests / min by origin").Span(12).Unit("none").Min(0).Stacking(stacked()).
			Description("origin: user, or the proxy's own tools (judge, probe, bench; X-Mlx-Origin). The SLOs and the quality gauges count user only.").
			WithTarget(q(`sum by (origin) (rate(mlx_requests_total{{P}}[{R}])) * 60`, "{{origin}}"))).
		WithPanel(ts("Completion tokens / s by origin").Span(12).Unit("none").Min(0).Stacking(stacked()).
			Description("What the judge and benchmarks cost the engine beside users.").
			WithTarget(q(`sum by (origin) (rate(mlx_tokens_completion_total{{P}}[{R}]))`, "{{origin}}"))).
		WithRow(dashboard.NewRowBuilder("Outcomes")).
		WithPanel(ts("Errors / min by status").Span(8).Unit("none").Min(0).
			WithTarget(q(`sum by (status) (rate(mlx_error_total{{P}}[{R}])) * 60`, "{{status}}"))).
		WithPanel(ts("Errors / min by kind").Span(8).Unit("none").Min(0).
			WithTarget(q(`sum by (kind) (rate(mlx_error_total{{P}}[{R}])) * 60`, "{{kind}}"))).
		WithPanel(ts("Error ratio").Span(8).Unit("percentunit").Min(0).
			WithTarget(q(`(sum(rate(mlx_error_total{{P}}[{R}])) or vector(0)) / sum(rate(mlx_requests_total{{P}}[{R}]))`, "4xx+5xx")).
			WithTarget(q(`(sum(rate(mlx_error_total{{P}, status="5xx"}[{R}])) or vector(0)) / sum(rate(mlx_requests_total{{P}}[{R}]))`, "5xx"))).
		WithPanel(ts("Finish reasons / min").Span(12).Unit("none").Min(0).Stacking(stacked()).
			WithTarget(q(`sum by (reason) (rate(mlx_finish_reason_total{{P}}[{R}])) * 60`, "{{reason}}"))).
		WithPanel(ts("Truncated share (finish_reason=length)").Span(12).Unit("percentunit").Min(0).Max(1).
			Description("MLXResponsesTruncated fires above 20% over 15 minutes.").
			Thresholds(thresholds("green", at(0.2, "red"))).ThresholdsStyle(thresholdLines()).
			WithTarget(q(`(sum(rate(mlx_finish_reason_total{{P}, reason="length"}[{R}])) or vector(0)) / sum(rate(mlx_finish_reason_total{{P}}[{R}]))`, "length"))).
		// Several engines behind one proxy (upstreams): which takes what.
		WithRow(dashboard.NewRowBuilder("Engines (upstreams)")).
		WithPanel(ts("Engines up").Span(6).Unit("none").Min(0).Max(1).
			Description("1 while the proxy sends requests to the engine: its /health answers 200, its supervisor says ready, and it is not ejected for failed connections. MLXUpstreamOut fires after 2 minutes at 0.").
			WithTarget(qe(`max by (upstream, upstream_node) (mlx_upstream_up{job="mlx-proxy"})`, "{{upstream}} ({{upstream_node}})", cfgRouting))).
		WithPanel(ts("Engines up by model").Span(6).Unit("none").Min(0).
			Description("How many engines serving each model take requests. MLXModelNoUpstream fires at 0.").
			WithTarget(qe(`max by (model) (mlx_model_upstreams_up{{P}})`, "{{model}}", cfgRouting))).
		WithPanel(ts("Requests / min by engine").Span(6).Unit("none").Min(0).Stacking(stacked()).
			WithTarget(qe(`sum by (upstream) (rate(mlx_upstream_requests_total{{P}}[{R}])) * 60`, "{{upstream}}", cfgRouting))).
		WithPanel(ts("In flight by engine").Span(6).Unit("none").Min(0).
			Description("Requests the proxy has sent each engine that have not ended; at the engine's max_in_flight a conversation spills over.").
			WithTarget(qe(`max by (upstream) (mlx_upstream_in_flight{job="mlx-proxy"})`, "{{upstream}}", cfgRouting))).
		WithPanel(ts("Spill-over share by model").Span(8).Unit("percentunit").Min(0).Max(1).
			Description("Requests that found the engine their conversation is on saturated (spilled elsewhere, or waited there). MLXSpillOverHot fires above 20% for 15 minutes.").
			Thresholds(thresholds("green", at(0.2, "red"))).ThresholdsStyle(thresholdLines()).
			WithTarget(qe(`(sum by (model) (rate(mlx_upstream_requests_total{{P}, choice=~"spilled|saturated"}[{R}])) or sum by (model) (rate(mlx_upstream_requests_total{{P}}[{R}])) * 0) / sum by (model) (rate(mlx_upstream_requests_total{{P}}[{R}]))`, "{{model}}", cfgRouting))).
		WithPanel(ts("Ejections / min by engine").Span(8).Unit("none").Min(0).
			Description("An engine whose connections fail is taken out for a while (routing.eject_*), between its probes.").
			WithTarget(qe(`sum by (upstream) (rate(mlx_upstream_ejections_total{job="mlx-proxy"}[{R}])) * 60`, "{{upstream}}", cfgRouting))).
		WithPanel(ts("Retries / min by engine that failed").Span(8).Unit("none").Min(0).
			Description("Requests sent once more to another engine because this one could not be reached (never one the engine may have started).").
			WithTarget(qe(`sum by (upstream) (rate(mlx_upstream_retries_total{job="mlx-proxy"}[{R}])) * 60`, "{{upstream}}", cfgRouting))).
		WithRow(dashboard.NewRowBuilder("Call kinds")).
		WithPanel(ts("Completion tokens / s by kind").Span(12).Unit("none").Min(0).
			WithTarget(q(`sum by (kind) (rate(mlx_tokens_completion_total{{P}}[{R}]))`, "{{kind}}"))).
		WithPanel(ts("Prompt tokens / s by kind").Span(12).Unit("none").Min(0).
			WithTarget(q(`sum by (kind) (rate(mlx_tokens_prompt_total{{P}}[{R}]))`, "{{kind}}"))).
		WithPanel(ts("Cached prompt tokens / s by kind").Span(12).Unit("none").Min(0).
			WithTarget(q(`sum by (kind) (rate(mlx_prompt_cached_tokens_total{{P}}[{R}]))`, "{{kind}}"))).
		WithPanel(ts("Hallucination risk by kind (last request)").Span(12).Unit("none").Min(0).Max(1).
			WithTarget(q(`max by (kind) (mlx_hallucination_risk{{P}})`, "{{kind}}"))).
		WithPanel(ts("Temperature by kind (last request)").Span(12).Unit("none").Min(0).
			WithTarget(q(`max by (kind) (mlx_temperature{{P}})`, "{{kind}}"))).
		WithPanel(ts("Tool calls / min by kind").Span(12).Unit("none").Min(0).
			WithTarget(qe(`sum by (kind) (rate(mlx_tool_calls_total{{P}}[{R}])) * 60`, "{{kind}}", toolsOnly))).
		// The original's Latency and Cache & queue rows, restored.
		WithRow(dashboard.NewRowBuilder("Latency")).
		WithPanel(ts("Time to first token (p50 / p95 / p99)").Span(8).Unit("s").Min(0).
			Description("mlx_ttft_seconds, the original's buckets (to 60 s).").
			Targets(quantiles("mlx_ttft_seconds", "{P}", 50, 95, 99))).
		WithPanel(ts("Generation time (p50 / p95)").Span(8).Unit("s").Min(0).
			Targets(quantiles("mlx_generation_seconds", "{P}", 50, 95))).
		WithPanel(ts("Token rate (p50 / p95)").Span(8).Unit("none").Min(0).
			Targets(quantiles("mlx_token_rate_tokens_per_second", "{P}", 50, 95))).
		WithPanel(heatmap("Time to first token heatmap").Span(12).Unit("s").
			WithTarget(bucketHeatmap("mlx_time_to_first_token_seconds"))).
		WithPanel(heatmap("End-to-end latency heatmap").Span(12).Unit("s").
			WithTarget(bucketHeatmap("mlx_request_latency_seconds"))).
		WithRow(dashboard.NewRowBuilder("Cache & queue")).
		WithPanel(ts("Prompt cache hit ratio (last request)").Span(6).Unit("percentunit").Min(0).Max(1).
			WithTarget(q(`max by (model) (mlx_prompt_cache_ratio{{P}})`, "{{model}}"))).
		WithPanel(ts("Cumulative cache hit share (10 m)").Span(6).Unit("percentunit").Min(0).Max(1).
			WithTarget(q(`(sum(increase(mlx_prompt_cached_tokens_total{{P}}[10m])) or vector(0)) / clamp_min(sum(increase(mlx_tokens_prompt_total{{P}}[10m])), 1)`, "cached share"))).
		WithPanel(ts("Queue wait (p50 / p95)").Span(6).Unit("s").Min(0).
			Description("mlx_queue_wait_seconds: arrival to the request sent to the engine (the proxy's own queue).").
			Targets(quantiles("mlx_queue_wait_seconds", "{P}", 50, 95))).
		WithPanel(ts("Low-confidence responses / min").Span(6).Unit("none").Min(0).
			WithTarget(q(`sum(rate(mlx_low_confidence_response_total{{P}}[{R}])) * 60`, "low confidence"))).
		WithRow(dashboard.NewRowBuilder("Totals")).
		WithPanel(stat("Requests (24 h)").Span(6).Unit("none").
			WithTarget(q(`sum(increase(mlx_requests_total{{P}}[24h])) or vector(0)`, "requests"))).
		WithPanel(stat("Upstream reachable (1 h)").Span(6).Unit("percentunit").Min(0).Max(1).
			Thresholds(thresholds("red", at(0.99, "orange"), at(0.999, "green"))).
			WithTarget(q(`avg_over_time(min(mlx_up{job="mlx-proxy"})[1h:1m])`, "reachable"))).
		WithPanel(stat("Tokens / request").Span(6).Unit("none").
			WithTarget(q(`sum(rate(mlx_tokens_completion_total{{P}}[{R}])) / clamp_min(sum(rate(mlx_requests_total{{P}}[{R}])), 0.0001)`, "completion"))).
		WithPanel(stat("Flags / min").Span(6).Unit("none").
			WithTarget(q(`(sum(rate(mlx_hallucination_flag_total{{P}}[{R}])) * 60) or vector(0)`, "flags")))
}
