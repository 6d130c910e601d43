package dashboards

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

func cluster() *dashboard.DashboardBuilder {
	return newDashboard("mlx-cluster", "MLX Cluster Overview").
		Description("The cluster at a glance: serving, inference, quality, cache and hardware.").
		Tags([]string{"mlx", "overview"}).
		WithVariable(modelVar()).
		WithVariable(nodeVar()).
		WithRow(dashboard.NewRowBuilder("Summary")).
		WithPanel(stat("Nodes online").Span(3).Unit("none").Thresholds(upIsGreen()).
			WithTarget(q(`count(up{job="mlx-hw"} == 1) or vector(0)`, "nodes"))).
		WithPanel(stat("Engine").Span(3).Unit("none").
			Description("mlx_server_state: 0 idle, 1 running, 2 starting, 3 backoff.").
			Mappings(engineState()).
			Thresholds(thresholds("red", at(1, "green"), at(2, "orange"))).
			WithTarget(q(`max(mlx_server_state{{SUP}})`, "state"))).
		WithPanel(stat("Upstream").Span(3).Unit("none").Mappings(upDown()).Thresholds(upIsGreen()).
			WithTarget(q(`min(mlx_up{job="mlx-proxy"})`, "up"))).
		WithPanel(stat("Requests (5m)").Span(3).Unit("none").
			WithTarget(q(`sum(increase(mlx_requests_total{{P}}[5m])) or vector(0)`, "requests"))).
		WithPanel(stat("Tokens out (5m)").Span(3).Unit("none").
			WithTarget(q(`sum(increase(mlx_tokens_completion_total{{P}}[5m])) or vector(0)`, "tokens"))).
		WithPanel(stat("TTFT p95 (5m)").Span(3).Unit("s").
			Description("Users' requests (origin=~\"user|\"; series from before the origin label have none), as the latency SLO counts them.").
			Thresholds(thresholds("green", at(5, "orange"), at(10, "red"))).
			WithTarget(q(`histogram_quantile(0.95, sum by (le) (rate(mlx_ttft_seconds_bucket{{P}, origin=~"user|"}[5m])))`, "p95"))).
		WithPanel(stat("Error ratio (5m)").Span(3).Unit("percentunit").
			Description("Users' requests (origin=~\"user|\"; series from before the origin label have none): the judge's, probes' and benchmarks' are apart.").
			Thresholds(thresholds("green", at(0.005, "orange"), at(0.05, "red"))).
			WithTarget(q(`(sum(rate(mlx_error_total{{P}, origin=~"user|"}[5m])) or vector(0)) / sum(rate(mlx_requests_total{{P}, origin=~"user|"}[5m]))`, "errors"))).
		WithPanel(stat("Firing alerts").Span(3).Unit("none").
			Thresholds(thresholds("green", at(1, "orange"), at(3, "red"))).
			WithTarget(q(`count(ALERTS{alertstate="firing"}) or vector(0)`, "firing"))).
		WithRow(dashboard.NewRowBuilder("Inference")).
		WithPanel(ts("Requests / min").Span(8).Unit("none").Min(0).
			WithTarget(q(`sum by (model) (rate(mlx_requests_total{{P}}[{R}])) * 60`, "{{model}}"))).
		WithPanel(ts("Time to first token").Span(8).Unit("s").Min(0).
			Description("Streamed completions: arrival at the proxy to the first content chunk.").
			Targets(quantiles("mlx_ttft_seconds", "{P}", 50, 95))).
		WithPanel(ts("Generation time").Span(8).Unit("s").Min(0).
			Targets(quantiles("mlx_generation_seconds", "{P}", 50, 95))).
		WithPanel(ts("Tokens / s").Span(8).Unit("none").Min(0).
			WithTarget(q(`sum(rate(mlx_tokens_completion_total{{P}}[{R}]))`, "completion")).
			WithTarget(q(`sum(rate(mlx_tokens_prompt_total{{P}}[{R}]))`, "prompt"))).
		WithPanel(ts("Decode speed").Span(8).Unit("none").Min(0).
			Description("Completion tokens per second of decoding, per request.").
			Targets(quantiles("mlx_token_rate_tokens_per_second", "{P}", 50, 95))).
		WithPanel(ts("In flight").Span(8).Unit("none").Min(0).
			Thresholds(thresholds("green", at(8, "red"))).ThresholdsStyle(thresholdLines()).
			WithTarget(q(`sum by (model) (mlx_in_flight{{P}})`, "{{model}}"))).
		WithRow(dashboard.NewRowBuilder("Quality")).
		WithPanel(ts("Hallucination risk (last request)").Span(8).Unit("none").Min(0).Max(1).
			Thresholds(thresholds("green", at(0.5, "orange"), at(0.8, "red"))).ThresholdsStyle(thresholdLines()).
			WithTarget(q(`mlx_hallucination_risk{{P}}`, "{{model}} {{kind}}"))).
		WithPanel(ts("Heuristics (last request)").Span(8).Unit("none").Min(0).Max(1).
			WithTarget(q(`max by (model) (mlx_heuristic_repetition{{P}})`, "repetition {{model}}")).
			WithTarget(q(`max by (model) (mlx_heuristic_refusal{{P}})`, "refusal {{model}}")).
			WithTarget(q(`max by (model) (mlx_heuristic_hedging{{P}})`, "hedging {{model}}")).
			WithTarget(q(`max by (model) (mlx_heuristic_ungrounded{{P}})`, "ungrounded {{model}}"))).
		WithPanel(ts("Flagged responses / min").Span(8).Unit("none").Min(0).
			WithTarget(q(`sum by (model) (rate(mlx_hallucination_flag_total{{P}}[{R}])) * 60`, "{{model}}"))).
		WithRow(dashboard.NewRowBuilder("Engine cache")).
		WithPanel(ts("Prompt cache sequences").Span(8).Unit("none").Min(0).
			WithTarget(q(`mlx_kv_cache_sequences{{KV}}`, "{{type}}"))).
		WithPanel(ts("Prompt cache fill").Span(8).Unit("percentunit").Min(0).
			Description("Against the engine's --prompt-cache-size (and byte limit): at 1 each new request evicts an older sequence.").
			WithTarget(q(`mlx_kv_cache_utilization{{KV}}`, "fill"))).
		WithPanel(ts("Context window used (last request)").Span(8).Unit("percentunit").Min(0).Max(1).
			WithTarget(q(`mlx_context_utilization{{P}}`, "{{model}}"))).
		WithRow(dashboard.NewRowBuilder("Hardware")).
		WithPanel(ts("GPU utilization").Span(8).Unit("percent").Min(0).
			WithTarget(qe(`mlx_hw_gpu_utilization_percent{{HW}}`, "{{node}}", macOS))).
		WithPanel(ts("Package power").Span(8).Unit("watt").Min(0).
			WithTarget(qe(`mlx_hw_package_power_milliwatts{{HW}} / 1000`, "{{node}}", macOS))).
		WithPanel(ts("Memory used").Span(8).Unit("percentunit").Min(0).Max(1).
			WithTarget(q(`mlx_hw_mem_used_bytes{{HW}} / mlx_hw_mem_total_bytes{{HW}}`, "{{node}}"))).
		WithRow(dashboard.NewRowBuilder("At a glance")).
		WithPanel(stat("Nodes throttling").Span(4).Unit("none").
			Thresholds(thresholds("green", at(1, "orange"))).
			WithTarget(qe(`count(mlx_hw_thermal_pressure{{HW}} > 0) or vector(0)`, "throttling", macOS))).
		WithPanel(stat("Average decode speed (5m)").Span(4).Unit("none").
			WithTarget(q(`sum(rate(mlx_token_rate_tokens_per_second_sum{{P}}[5m])) / sum(rate(mlx_token_rate_tokens_per_second_count{{P}}[5m]))`, "tok/s"))).
		WithPanel(stat("Tool calls (1 h)").Span(4).Unit("none").
			WithTarget(q(`sum(increase(mlx_tool_calls_total{{P}}[1h])) or vector(0)`, "calls"))).
		WithPanel(stat("Flagged responses (1 h)").Span(4).Unit("none").
			Thresholds(thresholds("green", at(1, "orange"))).
			WithTarget(q(`sum(increase(mlx_hallucination_flag_total{{P}}[1h])) or vector(0)`, "flagged"))).
		WithPanel(stat("Exporters up").Span(4).Unit("none").
			WithTarget(q(`count(up{job=~"mlx-.*"} == 1) or vector(0)`, "up"))).
		WithPanel(stat("Exporters down").Span(4).Unit("none").
			Thresholds(thresholds("green", at(1, "red"))).
			WithTarget(q(`count(up{job=~"mlx-.*"} == 0) or vector(0)`, "down"))).
		WithPanel(ts("Streamed against one-shot").Span(8).Unit("none").Min(0).Stacking(stacked()).
			WithTarget(q(`sum by (streaming) (rate(mlx_requests_total{{P}}[{R}])) * 60`, "stream={{streaming}}"))).
		WithPanel(ts("Sampling temperature (last request)").Span(8).Unit("none").Min(0).
			WithTarget(q(`max by (model, kind) (mlx_temperature{{P}})`, "{{model}} {{kind}}"))).
		WithPanel(ts("Tool calls / min by tool").Span(8).Unit("none").Min(0).Stacking(stacked()).
			WithTarget(qe(`sum by (tool) (rate(mlx_tool_calls_total{{P}}[{R}])) * 60`, "{{tool}}", toolsOnly))).
		WithRow(dashboard.NewRowBuilder("Per node")).
		WithPanel(heatmap("GPU utilization heatmap").Span(24).Height(8).Unit("percent").
			WithTarget(qe(`mlx_hw_gpu_utilization_percent{{HW}}`, "{{node}}", macOS))).
		WithPanel(ts("Load (1 min) per CPU").Span(12).Unit("percentunit").Min(0).
			WithTarget(q(`mlx_hw_load1{{HW}} / mlx_hw_cpu_count{{HW}}`, "{{node}}"))).
		WithPanel(ts("Disk used").Span(12).Unit("percentunit").Min(0).Max(1).
			WithTarget(q(`mlx_hw_disk_used_bytes{{HW}} / mlx_hw_disk_total_bytes{{HW}}`, "{{node}}"))).
		WithPanel(ts("CPU and ANE power").Span(12).Unit("watt").Min(0).
			WithTarget(qe(`mlx_hw_cpu_power_milliwatts{{HW}} / 1000`, "CPU {{node}}", macOS)).
			WithTarget(qe(`mlx_hw_ane_power_milliwatts{{HW}} / 1000`, "ANE {{node}}", macOS))).
		WithPanel(ts("Exporters up by job").Span(12).Unit("none").Min(0).Max(1).
			WithTarget(q(`up{job=~"mlx-.*"}`, "{{job}} {{node}}"))).
		// The fleet contract (internal/fleet, docs/fleet.md): every role of
		// every node's collector says whether it works, what build and
		// model it runs, how long it has run and how often it restarted.
		WithRow(dashboard.NewRowBuilder("Collector roles")).
		WithPanel(stat("Roles up").Span(8).Unit("none").
			Description("mlx_agent_up: roles that say they work, of those that report. A role that sends nothing is not counted here.").
			WithTarget(q(`sum(mlx_agent_up{node=~"$node"}) or vector(0)`, "up")).
			WithTarget(q(`count(mlx_agent_up{node=~"$node"}) or vector(0)`, "reporting"))).
		WithPanel(stat("Role restarts (1 h)").Span(8).Unit("none").
			Description("mlx_agent_restarts_total, counted across the collector's own restarts; crashes are the restarts after no clean stop.").
			Thresholds(thresholds("green", at(1, "orange"), at(3, "red"))).
			WithTarget(q(`sum(increase(mlx_agent_restarts_total{node=~"$node"}[1h])) or vector(0)`, "restarts")).
			WithTarget(q(`sum(increase(mlx_agent_crashes_total{node=~"$node"}[1h])) or vector(0)`, "crashes"))).
		WithPanel(stat("Lowest role uptime").Span(8).Unit("s").
			WithTarget(q(`min(mlx_agent_uptime_seconds{node=~"$node"})`, "uptime"))).
		WithPanel(table("Roles: build, model and weights").Span(24).
			Description("mlx_agent_info: version and commit of the build each role runs, its model and where the weights are on disk.").
			WithTarget(instant(q(`mlx_agent_info{node=~"$node"}`, ""))))
}
