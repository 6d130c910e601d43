package dashboards

func cluster() Dashboard {
	return Dashboard{
		UID: "mlx-cluster", Title: "MLX Cluster Overview", Tags: []string{"mlx", "overview"},
		Description: "The cluster at a glance: serving, inference, quality, cache and hardware.",
		Vars:        []Var{modelVar, nodeVar},
		Rows: []Row{
			{"Summary", []Panel{
				stat("Nodes online", "none", 3, q(`count(up{job="mlx-hw"} == 1) or vector(0)`, "nodes")).steps(redGreen...),
				stat("Engine", "none", 3, q(`max(mlx_server_state{{SUP}})`, "state")).
					maps(map[string]string{"0": "idle", "1": "running", "2": "starting", "3": "backoff"}).
					steps(Step{"red", 0}, Step{"green", 1}, Step{"orange", 2}).
					desc("mlx_server_state: 0 idle, 1 running, 2 starting, 3 backoff."),
				stat("Upstream", "none", 3, q(`min(mlx_up{job="mlx-proxy"})`, "up")).maps(upDown).steps(redGreen...),
				stat("Requests (5m)", "none", 3, q(`sum(increase(mlx_requests_total{{P}}[5m])) or vector(0)`, "requests")),
				stat("Tokens out (5m)", "none", 3, q(`sum(increase(mlx_tokens_completion_total{{P}}[5m])) or vector(0)`, "tokens")),
				stat("TTFT p95 (5m)", "s", 3, q(`histogram_quantile(0.95, sum by (le) (rate(mlx_ttft_seconds_bucket{{P}}[5m])))`, "p95")).
					steps(Step{"green", 0}, Step{"orange", 5}, Step{"red", 10}),
				stat("Error ratio (5m)", "percentunit", 3, q(`(sum(rate(mlx_error_total{{P}}[5m])) or vector(0)) / sum(rate(mlx_requests_total{{P}}[5m]))`, "errors")).
					steps(Step{"green", 0}, Step{"orange", 0.005}, Step{"red", 0.05}),
				stat("Firing alerts", "none", 3, q(`count(ALERTS{alertstate="firing"}) or vector(0)`, "firing")).
					steps(Step{"green", 0}, Step{"orange", 1}, Step{"red", 3}),
			}},
			{"Inference", []Panel{
				ts("Requests / min", "none", 8, q(`sum by (model) (rate(mlx_requests_total{{P}}[{R}])) * 60`, "{{model}}")).min0(),
				ts("Time to first token", "s", 8, quantiles("mlx_ttft_seconds", "{P}", 50, 95)...).min0().
					desc("Streamed completions: arrival at the proxy to the first content chunk."),
				ts("Generation time", "s", 8, quantiles("mlx_generation_seconds", "{P}", 50, 95)...).min0(),
				ts("Tokens / s", "none", 8,
					q(`sum(rate(mlx_tokens_completion_total{{P}}[{R}]))`, "completion"),
					q(`sum(rate(mlx_tokens_prompt_total{{P}}[{R}]))`, "prompt")).min0(),
				ts("Decode speed", "none", 8, quantiles("mlx_token_rate_tokens_per_second", "{P}", 50, 95)...).min0().
					desc("Completion tokens per second of decoding, per request."),
				ts("In flight", "none", 8, q(`sum by (model) (mlx_in_flight{{P}})`, "{{model}}")).min0().
					steps(Step{"green", 0}, Step{"red", 8}),
			}},
			{"Quality", []Panel{
				ts("Hallucination risk (last request)", "none", 8, q(`mlx_hallucination_risk{{P}}`, "{{model}} {{kind}}")).ratio().
					steps(Step{"green", 0}, Step{"orange", 0.5}, Step{"red", 0.8}),
				ts("Heuristics (last request)", "none", 8,
					q(`max by (model) (mlx_heuristic_repetition{{P}})`, "repetition {{model}}"),
					q(`max by (model) (mlx_heuristic_refusal{{P}})`, "refusal {{model}}"),
					q(`max by (model) (mlx_heuristic_hedging{{P}})`, "hedging {{model}}"),
					q(`max by (model) (mlx_heuristic_ungrounded{{P}})`, "ungrounded {{model}}")).ratio(),
				ts("Flagged responses / min", "none", 8, q(`sum by (model) (rate(mlx_hallucination_flag_total{{P}}[{R}])) * 60`, "{{model}}")).min0(),
			}},
			{"Engine cache", []Panel{
				ts("Prompt cache sequences", "none", 8, q(`mlx_kv_cache_sequences{{KV}}`, "{{type}}")).min0(),
				ts("Prompt cache fill", "percentunit", 8, q(`mlx_kv_cache_utilization{{KV}}`, "fill")).min0().
					desc("Against the engine's --prompt-cache-size (and byte limit): at 1 each new request evicts an older sequence."),
				ts("Context window used (last request)", "percentunit", 8, q(`mlx_context_utilization{{P}}`, "{{model}}")).ratio(),
			}},
			{"Hardware", []Panel{
				ts("GPU utilization", "percent", 8, qe(`mlx_hw_gpu_utilization_percent{{HW}}`, "{{node}}", macOS)).min0(),
				ts("Package power", "watt", 8, qe(`mlx_hw_package_power_milliwatts{{HW}} / 1000`, "{{node}}", macOS)).min0(),
				ts("Memory used", "percentunit", 8, q(`mlx_hw_mem_used_bytes{{HW}} / mlx_hw_mem_total_bytes{{HW}}`, "{{node}}")).ratio(),
			}},
			{"At a glance", []Panel{
				stat("Nodes throttling", "none", 4, qe(`count(mlx_hw_thermal_pressure{{HW}} > 0) or vector(0)`, "throttling", macOS)).
					steps(Step{"green", 0}, Step{"orange", 1}),
				stat("Average decode speed (5m)", "none", 4,
					q(`sum(rate(mlx_token_rate_tokens_per_second_sum{{P}}[5m])) / sum(rate(mlx_token_rate_tokens_per_second_count{{P}}[5m]))`, "tok/s")),
				stat("Tool calls (1 h)", "none", 4, q(`sum(increase(mlx_tool_calls_total{{P}}[1h])) or vector(0)`, "calls")),
				stat("Flagged responses (1 h)", "none", 4, q(`sum(increase(mlx_hallucination_flag_total{{P}}[1h])) or vector(0)`, "flagged")).
					steps(Step{"green", 0}, Step{"orange", 1}),
				stat("Exporters up", "none", 4, q(`count(up{job=~"mlx-.*"} == 1) or vector(0)`, "up")),
				stat("Exporters down", "none", 4, q(`count(up{job=~"mlx-.*"} == 0) or vector(0)`, "down")).steps(Step{"green", 0}, Step{"red", 1}),
				ts("Streamed against one-shot", "none", 8, q(`sum by (streaming) (rate(mlx_requests_total{{P}}[{R}])) * 60`, "stream={{streaming}}")).min0().stacked(),
				ts("Sampling temperature (last request)", "none", 8, q(`max by (model, kind) (mlx_temperature{{P}})`, "{{model}} {{kind}}")).min0(),
				ts("Tool calls / min by tool", "none", 8, qe(`sum by (tool) (rate(mlx_tool_calls_total{{P}}[{R}])) * 60`, "{{tool}}", toolsOnly)).min0().stacked(),
			}},
			{"Per node", []Panel{
				Panel{Type: "heatmap", Title: "GPU utilization heatmap", Unit: "percent", W: 24, H: 8, Targets: []Target{
					qe(`mlx_hw_gpu_utilization_percent{{HW}}`, "{{node}}", macOS)}},
				ts("Load (1 min) per CPU", "percentunit", 12, q(`mlx_hw_load1{{HW}} / mlx_hw_cpu_count{{HW}}`, "{{node}}")).min0(),
				ts("Disk used", "percentunit", 12, q(`mlx_hw_disk_used_bytes{{HW}} / mlx_hw_disk_total_bytes{{HW}}`, "{{node}}")).ratio(),
				ts("CPU and ANE power", "watt", 12,
					qe(`mlx_hw_cpu_power_milliwatts{{HW}} / 1000`, "CPU {{node}}", macOS),
					qe(`mlx_hw_ane_power_milliwatts{{HW}} / 1000`, "ANE {{node}}", macOS)).min0(),
				ts("Exporters up by job", "none", 12, q(`up{job=~"mlx-.*"}`, "{{job}} {{node}}")).ratio(),
			}},
		},
	}
}
