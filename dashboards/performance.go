package dashboards

func performance() Dashboard {
	return Dashboard{
		UID: "mlx-performance", Title: "MLX Performance & Confidence", Tags: []string{"mlx", "performance", "confidence"},
		Description: "Latency, throughput, caching, and the sampler's token-level confidence (logprobs).",
		Vars:        []Var{modelVar},
		Rows: []Row{
			{"Latency", []Panel{
				ts("TTFT percentiles", "s", 12, quantiles("mlx_ttft_seconds", "{P}", 50, 95, 99)...).min0().
					steps(Step{"green", 0}, Step{"red", 10}).desc("SLO: p95 <= 10 s."),
				ts("Queue wait percentiles", "s", 12, quantiles("mlx_queue_wait_seconds", "{P}", 50, 95)...).min0().
					desc("Every completion: arrival at the proxy to the request being sent to the engine (the proxy's own time)."),
				ts("Admission wait percentiles", "s", 12, quantiles("mlx_admission_wait_seconds", "{P}", 50, 95)...).min0().
					desc("Streamed completions: arrival at the proxy to the engine's response headers (the engine admitted the request)."),
				ts("Generation time percentiles", "s", 12, quantiles("mlx_generation_seconds", "{P}", 50, 95, 99)...).min0(),
				ts("Decode speed percentiles", "none", 12, quantiles("mlx_token_rate_tokens_per_second", "{P}", 50, 95)...).min0(),
			}},
			{"Throughput and cache", []Panel{
				ts("Completion tokens / s by kind", "none", 8, q(`sum by (kind) (rate(mlx_tokens_completion_total{{P}}[{R}]))`, "{{kind}}")).min0().stacked(),
				ts("Prompt tokens / s by kind", "none", 8, q(`sum by (kind) (rate(mlx_tokens_prompt_total{{P}}[{R}]))`, "{{kind}}")).min0().stacked(),
				ts("Prompt cache hits", "percentunit", 8,
					q(`sum(rate(mlx_prompt_cached_tokens_total{{P}}[{R}])) / sum(rate(mlx_tokens_prompt_total{{P}}[{R}]))`, "cached share of prompt tokens"),
					q(`max by (model) (mlx_prompt_cache_ratio{{P}})`, "last request {{model}}")).ratio(),
				ts("Context used (last request)", "none", 12,
					q(`mlx_context_used_tokens{{P}}`, "used {{model}}"),
					q(`mlx_context_length_max_tokens{{P}}`, "max {{model}}")).min0(),
				ts("Context window used", "percentunit", 12, q(`mlx_context_utilization{{P}}`, "{{model}}")).ratio(),
			}},
			{"Confidence (logprobs)", []Panel{
				ts("Scoring coverage", "percentunit", 8,
					q(`sum by (model) (rate(mlx_confidence_scored_total{{P}}[{R}])) / sum by (model) (rate(mlx_requests_total{{P}}[{R}]))`, "{{model}}")).ratio().
					desc("Share of completions scored with logprobs: all non-streaming ones, a sample of the streams."),
				ts("Scored / min by source", "none", 8, q(`sum by (source) (rate(mlx_confidence_scored_total{{P}}[{R}])) * 60`, "{{source}}")).min0().stacked(),
				ts("Low-confidence responses / min", "none", 8, q(`sum by (model) (rate(mlx_low_confidence_response_total{{P}}[{R}])) * 60`, "{{model}}")).min0(),
				ts("Token confidence (last scored)", "none", 12,
					q(`max by (model) (mlx_token_confidence_mean{{P}})`, "mean {{model}}"),
					q(`max by (model) (mlx_token_confidence_min{{P}})`, "min {{model}}"),
					q(`max by (model) (mlx_token_confidence_std{{P}})`, "std {{model}}")).ratio().
					steps(Step{"red", 0}, Step{"green", 0.5}),
				ts("Margin and low-confidence tokens (last scored)", "none", 12,
					q(`max by (model) (mlx_token_margin_mean{{P}})`, "top1-top2 margin {{model}}"),
					q(`max by (model) (mlx_low_confidence_token_ratio{{P}})`, "low-confidence token share {{model}}")).ratio().
					steps(Step{"red", 0}, Step{"green", 0.15}),
				ts("Perplexity", "none", 12,
					q(`max by (model) (mlx_output_perplexity{{P}})`, "last {{model}}"),
					q(`histogram_quantile(0.5, sum by (le) (rate(mlx_output_perplexity_histogram_bucket{{P}}[{R}])))`, "p50"),
					q(`histogram_quantile(0.95, sum by (le) (rate(mlx_output_perplexity_histogram_bucket{{P}}[{R}])))`, "p95")).min0().
					steps(Step{"green", 0}, Step{"red", 8}),
				ts("Token entropy", "none", 12,
					q(`max by (model) (mlx_token_entropy_nats{{P}})`, "last {{model}}"),
					q(`histogram_quantile(0.95, sum by (le) (rate(mlx_token_entropy_histogram_bucket{{P}}[{R}])))`, "p95")).min0().
					steps(Step{"green", 0}, Step{"red", 1.5}).desc("Nats, over the returned top-k: a lower bound of the true entropy."),
				ts("Hallucination risk distribution", "none", 12,
					q(`histogram_quantile(0.5, sum by (le) (rate(mlx_hallucination_risk_histogram_bucket{{P}}[{R}])))`, "p50"),
					q(`histogram_quantile(0.95, sum by (le) (rate(mlx_hallucination_risk_histogram_bucket{{P}}[{R}])))`, "p95")).ratio(),
				ts("Sampling temperature", "none", 12, q(`mlx_temperature{{P}}`, "{{model}} {{kind}}")).min0(),
			}},
			{"Judge and heuristics", []Panel{
				ts("Judge scores beside the heuristics", "none", 12,
					q(`sum by (name) (rate(mlx_judge_score_sum{{SUP}}[{R}])) / sum by (name) (rate(mlx_judge_score_count{{SUP}}[{R}]))`, "judge {{name}}"),
					q(`1 - avg(mlx_hallucination_risk{{P}})`, "heuristic quality (1 - risk)"),
					q(`avg(mlx_token_confidence_mean{{P}})`, "token confidence")).ratio().
					desc("The judge's mean scores (the LLM-as-judge loop, receiver/judgereceiver) against the proxy's cheap per-request scores: when they part, one of them is wrong."),
				ts("Judged traces / min by result", "none", 6, q(`sum by (result) (rate(mlx_judge_traces_total{{SUP}}[{R}])) * 60`, "{{result}}")).min0().
					desc("scored, skipped (judged already, or no question and answer), parse_failed, judge_error."),
				ts("Judge pass duration", "s", 6,
					q(`histogram_quantile(0.95, sum by (le) (rate(mlx_judge_pass_seconds_bucket{{SUP}}[{R}])))`, "p95"),
					q(`sum(rate(mlx_judge_passes_total{{SUP}, result!="ok"}[{R}])) / sum(rate(mlx_judge_passes_total{{SUP}}[{R}]))`, "share of passes not ok")).min0(),
			}},
			{"Totals", []Panel{
				stat("Truncated completions (5m)", "none", 6, q(`sum(increase(mlx_finish_reason_total{{P}, reason="length"}[5m])) or vector(0)`, "length")).
					desc("finish_reason length: max_tokens or the context cut the answer."),
				stat("Flagged responses (all time)", "none", 6, q(`sum(mlx_hallucination_flag_total{{P}}) or vector(0)`, "flagged")),
				stat("Current risk (last request)", "none", 6, q(`max(mlx_hallucination_risk{{P}})`, "risk")).ratio().
					steps(Step{"green", 0}, Step{"orange", 0.5}, Step{"red", 0.8}),
				stat("Completions scored (24 h)", "none", 6, q(`sum(increase(mlx_confidence_scored_total{{P}}[24h])) or vector(0)`, "scored")),
			}},
		},
	}
}
