package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

func performance() *dashboard.DashboardBuilder {
	return newDashboard("mlx-performance", "MLX Performance & Confidence").
		Description("Latency, throughput, caching, and the sampler's token-level confidence (logprobs).").
		Tags([]string{"mlx", "performance", "confidence"}).
		WithVariable(modelVar()).
		WithRow(dashboard.NewRowBuilder("Latency")).
		WithPanel(ts("TTFT percentiles").Span(12).Unit("s").Min(0).
			Description("SLO: p95 <= 10 s.").
			Thresholds(thresholds("green", at(10, "red"))).ThresholdsStyle(thresholdLines()).
			Targets(quantiles("mlx_ttft_seconds", "{P}", 50, 95, 99))).
		WithPanel(ts("Queue wait percentiles").Span(12).Unit("s").Min(0).
			Description("Every completion: arrival at the proxy to the request being sent to the engine (the proxy's own time).").
			Targets(quantiles("mlx_queue_wait_seconds", "{P}", 50, 95))).
		WithPanel(ts("Admission wait percentiles").Span(12).Unit("s").Min(0).
			Description("Streamed completions: arrival at the proxy to the engine's response headers (the engine admitted the request).").
			Targets(quantiles("mlx_admission_wait_seconds", "{P}", 50, 95))).
		WithPanel(ts("Generation time percentiles").Span(12).Unit("s").Min(0).
			Targets(quantiles("mlx_generation_seconds", "{P}", 50, 95, 99))).
		WithPanel(ts("Decode speed percentiles").Span(12).Unit("none").Min(0).
			Targets(quantiles("mlx_token_rate_tokens_per_second", "{P}", 50, 95))).
		// As vLLM's dashboard shows a server: per token, between tokens,
		// prefill against decode, and how long prompts and answers are.
		WithRow(dashboard.NewRowBuilder("Per token, prefill and decode")).
		WithPanel(percentilesOf("Time per output token", "mlx_time_per_output_token_seconds: a streamed answer's decode time over its tokens after the first.",
			"mlx_time_per_output_token_seconds", "{P}")).
		WithPanel(percentilesOf("Inter-token latency", "mlx_inter_token_latency_seconds: every gap between two chunks with text, as clients get them.",
			"mlx_inter_token_latency_seconds", "{P}")).
		WithPanel(ts("End-to-end latency (to 600 s)").Span(8).Unit("s").Min(0).
			Description("mlx_request_latency_seconds: arrival to the last byte, in buckets long enough for reasoning models.").
			Targets(quantiles("mlx_request_latency_seconds", "{P}", 50, 95, 99))).
		WithPanel(ts("Prefill and decode (p95)").Span(8).Unit("s").Min(0).
			Description("mlx_prefill_seconds: sent to the engine to the first text (its queue and prompt processing); mlx_decode_seconds: the first text to the end.").
			WithTarget(q(`histogram_quantile(0.95, sum by (le) (rate(mlx_prefill_seconds_bucket{{P}}[{R}])))`, "prefill p95")).
			WithTarget(q(`histogram_quantile(0.95, sum by (le) (rate(mlx_decode_seconds_bucket{{P}}[{R}])))`, "decode p95"))).
		WithPanel(heatmap("Prompt length").Span(8).Unit("none").
			Description("mlx_prompt_tokens: prompt tokens per request.").
			WithTarget(bucketHeatmap("mlx_prompt_tokens"))).
		WithPanel(heatmap("Generation length").Span(8).Unit("none").
			Description("mlx_generation_tokens: completion tokens per request, reasoning included.").
			WithTarget(bucketHeatmap("mlx_generation_tokens"))).
		// OpenTelemetry GenAI's server metrics, as GenAI dashboards and
		// gateways read them (gen_ai.server.*, semantic conventions v1.41.0).
		WithRow(dashboard.NewRowBuilder("OpenTelemetry GenAI (server)")).
		WithPanel(ts("GenAI request duration").Span(8).Unit("s").Min(0).
			Description("gen_ai_server_request_duration_seconds: every completion request, arrival to the last byte or the failure, by operation (chat, text_completion).").
			WithTarget(q(`histogram_quantile(0.5, sum by (le, gen_ai_operation_name) (rate(gen_ai_server_request_duration_seconds_bucket{{G}}[{R}])))`, "p50 {{gen_ai_operation_name}}")).
			WithTarget(q(`histogram_quantile(0.95, sum by (le, gen_ai_operation_name) (rate(gen_ai_server_request_duration_seconds_bucket{{G}}[{R}])))`, "p95 {{gen_ai_operation_name}}")).
			WithTarget(qe(`sum by (error_type) (rate(gen_ai_server_request_duration_seconds_count{{G}, error_type!=""}[{R}])) * 60`, "failed / min {{error_type}}", faultFailed))).
		WithPanel(percentilesOf("GenAI time to first token", "gen_ai_server_time_to_first_token_seconds: successful streamed completions, arrival to the first chunk with a token (reasoning and tool calls count).",
			"gen_ai_server_time_to_first_token_seconds", "{G}")).
		WithPanel(percentilesOf("GenAI time per output token", "gen_ai_server_time_per_output_token_seconds: successful streamed completions, decode time per token after the first.",
			"gen_ai_server_time_per_output_token_seconds", "{G}")).
		// vLLM's gauges (compat: [vllm]), as gateways and benchmarks read
		// them; empty without compat.
		WithRow(dashboard.NewRowBuilder("As gateways read it (compat: vllm)")).
		WithPanel(ts("Waiting and running (vLLM names)").Span(12).Unit("none").Min(0).
			Description("vllm:num_requests_waiting: streams sent to the engine it has not admitted (no headers yet); vllm:num_requests_running: admitted streams and non-streamed requests. Served with compat: [vllm].").
			WithTarget(qe(`sum by (model_name) (vllm:num_requests_waiting{{V}})`, "waiting {{model_name}}", cfgVLLM)).
			WithTarget(qe(`sum by (model_name) (vllm:num_requests_running{{V}})`, "running {{model_name}}", cfgVLLM))).
		WithPanel(ts("KV-cache usage (vLLM name)").Span(12).Unit("percentunit").Min(0).
			Description("vllm:kv_cache_usage_perc: the mlx_kvcache receiver's mlx_kv_cache_utilization, as the proxy serves it to gateways. Served with compat: [vllm].").
			WithTarget(qe(`max by (model_name) (vllm:kv_cache_usage_perc{{V}})`, "{{model_name}}", cfgVLLM))).
		// vLLM's request histograms and counters (compat: [vllm]), as
		// kubernetes-sigs/inference-perf reads them: quantiles of the
		// rate of the buckets, means of the rate of _sum over _count.
		WithPanel(ts("Latency as benchmarks read it (vLLM names)").Span(8).Unit("s").Min(0).
			Description("vllm:e2e_request_latency_seconds (requests the engine took), vllm:time_to_first_token_seconds and vllm:request_time_per_output_token_seconds (streams), p50 and p99 as inference-perf computes them. Served with compat: [vllm].").
			WithTarget(qe(`histogram_quantile(0.5, sum by (le) (rate(vllm:e2e_request_latency_seconds_bucket{{V}}[{R}])))`, "e2e p50", cfgVLLM)).
			WithTarget(qe(`histogram_quantile(0.99, sum by (le) (rate(vllm:e2e_request_latency_seconds_bucket{{V}}[{R}])))`, "e2e p99", cfgVLLM)).
			WithTarget(qe(`histogram_quantile(0.5, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket{{V}}[{R}])))`, "TTFT p50", cfgVLLM)).
			WithTarget(qe(`histogram_quantile(0.99, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket{{V}}[{R}])))`, "TTFT p99", cfgVLLM)).
			WithTarget(qe(`histogram_quantile(0.5, sum by (le) (rate(vllm:request_time_per_output_token_seconds_bucket{{V}}[{R}])))`, "TPOT p50", cfgVLLM)).
			WithTarget(qe(`histogram_quantile(0.5, sum by (le) (rate(vllm:inter_token_latency_seconds_bucket{{V}}[{R}])))`, "ITL p50", cfgVLLM))).
		WithPanel(ts("Engine phases, mean (vLLM names)").Span(8).Unit("s").Min(0).
			Description("vllm:request_queue_time_seconds (sent to admitted), vllm:request_prefill_time_seconds (admitted to the first token), vllm:request_decode_time_seconds (first token to the end), vllm:request_inference_time_seconds (admitted to the end), streams only. Served with compat: [vllm].").
			WithTarget(qe(`sum(rate(vllm:request_queue_time_seconds_sum{{V}}[{R}])) / sum(rate(vllm:request_queue_time_seconds_count{{V}}[{R}]))`, "queue", cfgVLLM)).
			WithTarget(qe(`sum(rate(vllm:request_prefill_time_seconds_sum{{V}}[{R}])) / sum(rate(vllm:request_prefill_time_seconds_count{{V}}[{R}]))`, "prefill", cfgVLLM)).
			WithTarget(qe(`sum(rate(vllm:request_decode_time_seconds_sum{{V}}[{R}])) / sum(rate(vllm:request_decode_time_seconds_count{{V}}[{R}]))`, "decode", cfgVLLM)).
			WithTarget(qe(`sum(rate(vllm:request_inference_time_seconds_sum{{V}}[{R}])) / sum(rate(vllm:request_inference_time_seconds_count{{V}}[{R}]))`, "inference", cfgVLLM))).
		WithPanel(ts("Tokens and finishes (vLLM names)").Span(8).Unit("none").Min(0).
			Description("vllm:prompt_tokens_total and vllm:generation_tokens_total per second; vllm:request_success_total per minute by finished_reason; mean prompt and answer length from vllm:request_prompt_tokens and vllm:request_generation_tokens. Served with compat: [vllm].").
			WithTarget(qe(`sum(rate(vllm:prompt_tokens_total{{V}}[{R}]))`, "prompt tokens / s", cfgVLLM)).
			WithTarget(qe(`sum(rate(vllm:generation_tokens_total{{V}}[{R}]))`, "generation tokens / s", cfgVLLM)).
			WithTarget(qe(`sum by (finished_reason) (rate(vllm:request_success_total{{V}}[{R}])) * 60`, "{{finished_reason}} / min", cfgVLLM)).
			WithTarget(qe(`sum(rate(vllm:request_prompt_tokens_sum{{V}}[{R}])) / sum(rate(vllm:request_prompt_tokens_count{{V}}[{R}]))`, "mean prompt length", cfgVLLM)).
			WithTarget(qe(`sum(rate(vllm:request_generation_tokens_sum{{V}}[{R}])) / sum(rate(vllm:request_generation_tokens_count{{V}}[{R}]))`, "mean answer length", cfgVLLM))).
		WithRow(dashboard.NewRowBuilder("Throughput and cache")).
		WithPanel(ts("Completion tokens / s by kind").Span(8).Unit("none").Min(0).Stacking(stacked()).
			WithTarget(q(`sum by (kind) (rate(mlx_tokens_completion_total{{P}}[{R}]))`, "{{kind}}"))).
		WithPanel(ts("Prompt tokens / s by kind").Span(8).Unit("none").Min(0).Stacking(stacked()).
			WithTarget(q(`sum by (kind) (rate(mlx_tokens_prompt_total{{P}}[{R}]))`, "{{kind}}"))).
		WithPanel(ts("Prompt cache hits").Span(8).Unit("percentunit").Min(0).Max(1).
			WithTarget(q(`sum(rate(mlx_prompt_cached_tokens_total{{P}}[{R}])) / sum(rate(mlx_tokens_prompt_total{{P}}[{R}]))`, "cached share of prompt tokens")).
			WithTarget(q(`max by (model) (mlx_prompt_cache_ratio{{P}})`, "last request {{model}}"))).
		WithPanel(ts("Context used (last request)").Span(12).Unit("none").Min(0).
			WithTarget(q(`mlx_context_used_tokens{{P}}`, "used {{model}}")).
			WithTarget(q(`mlx_context_length_max_tokens{{P}}`, "max {{model}}"))).
		WithPanel(ts("Context window used").Span(12).Unit("percentunit").Min(0).Max(1).
			WithTarget(q(`mlx_context_utilization{{P}}`, "{{model}}"))).
		WithRow(dashboard.NewRowBuilder("Confidence (logprobs)")).
		WithPanel(ts("Scoring coverage").Span(8).Unit("percentunit").Min(0).Max(1).
			Description("Share of completions scored with logprobs: all non-streaming ones, a sample of the streams.").
			WithTarget(q(`sum by (model) (rate(mlx_confidence_scored_total{{P}}[{R}])) / sum by (model) (rate(mlx_requests_total{{P}}[{R}]))`, "{{model}}"))).
		WithPanel(ts("Scored / min by source").Span(8).Unit("none").Min(0).Stacking(stacked()).
			WithTarget(q(`sum by (source) (rate(mlx_confidence_scored_total{{P}}[{R}])) * 60`, "{{source}}"))).
		WithPanel(ts("Low-confidence responses / min").Span(8).Unit("none").Min(0).
			WithTarget(q(`sum by (model) (rate(mlx_low_confidence_response_total{{P}}[{R}])) * 60`, "{{model}}"))).
		WithPanel(ts("Token confidence (last scored)").Span(12).Unit("none").Min(0).Max(1).
			Thresholds(thresholds("red", at(0.5, "green"))).ThresholdsStyle(thresholdLines()).
			WithTarget(q(`max by (model) (mlx_token_confidence_mean{{P}})`, "mean {{model}}")).
			WithTarget(q(`max by (model) (mlx_token_confidence_min{{P}})`, "min {{model}}")).
			WithTarget(q(`max by (model) (mlx_token_confidence_std{{P}})`, "std {{model}}"))).
		WithPanel(ts("Margin and low-confidence tokens (last scored)").Span(12).Unit("none").Min(0).Max(1).
			Thresholds(thresholds("red", at(0.15, "green"))).ThresholdsStyle(thresholdLines()).
			WithTarget(q(`max by (model) (mlx_token_margin_mean{{P}})`, "top1-top2 margin {{model}}")).
			WithTarget(q(`max by (model) (mlx_low_confidence_token_ratio{{P}})`, "low-confidence token share {{model}}"))).
		WithPanel(ts("Perplexity").Span(12).Unit("none").Min(0).
			Thresholds(thresholds("green", at(8, "red"))).ThresholdsStyle(thresholdLines()).
			WithTarget(q(`max by (model) (mlx_output_perplexity{{P}})`, "last {{model}}")).
			WithTarget(q(`histogram_quantile(0.5, sum by (le) (rate(mlx_output_perplexity_histogram_bucket{{P}}[{R}])))`, "p50")).
			WithTarget(q(`histogram_quantile(0.95, sum by (le) (rate(mlx_output_perplexity_histogram_bucket{{P}}[{R}])))`, "p95"))).
		WithPanel(ts("Token entropy").Span(12).Unit("none").Min(0).
			Description("Nats, over the returned top-k: a lower bound of the true entropy.").
			Thresholds(thresholds("green", at(1.5, "red"))).ThresholdsStyle(thresholdLines()).
			WithTarget(q(`max by (model) (mlx_token_entropy_nats{{P}})`, "last {{model}}")).
			WithTarget(q(`histogram_quantile(0.95, sum by (le) (rate(mlx_token_entropy_histogram_bucket{{P}}[{R}])))`, "p95"))).
		WithPanel(ts("Hallucination risk distribution").Span(12).Unit("none").Min(0).Max(1).
			Targets(quantiles("mlx_hallucination_risk_histogram", "{P}", 50, 95))).
		WithPanel(ts("Sampling temperature").Span(12).Unit("none").Min(0).
			WithTarget(q(`mlx_temperature{{P}}`, "{{model}} {{kind}}"))).
		WithRow(dashboard.NewRowBuilder("Judge and heuristics")).
		WithPanel(ts("Judge scores beside the heuristics").Span(12).Unit("none").Min(0).Max(1).
			Description("The judge's mean scores (the LLM-as-judge loop, receiver/judgereceiver) against the proxy's cheap per-request scores: when they part, one of them is wrong.").
			WithTarget(q(`sum by (name) (rate(mlx_judge_score_sum{{SUP}}[{R}])) / sum by (name) (rate(mlx_judge_score_count{{SUP}}[{R}]))`, "judge {{name}}")).
			WithTarget(q(`1 - avg(mlx_hallucination_risk{{P}})`, "heuristic quality (1 - risk)")).
			WithTarget(q(`avg(mlx_token_confidence_mean{{P}})`, "token confidence"))).
		WithPanel(ts("Feedback from people / h by verdict").Span(12).Unit("none").Min(0).Stacking(stacked()).
			Description("POST /v1/feedback (mlx_user_feedback_total): people's verdicts on traced answers, up or down (or low, mid, high for scores between 0 and 1), each answer once. In Opik, the trace's user_feedback score.").
			WithTarget(q(`sum by (value) (increase(mlx_user_feedback_total{{P}}[1h]))`, "{{value}}"))).
		WithPanel(ts("Judged traces / min by result").Span(6).Unit("none").Min(0).
			Description("scored, skipped (judged already, or no question and answer), parse_failed, judge_error.").
			WithTarget(q(`sum by (result) (rate(mlx_judge_traces_total{{SUP}}[{R}])) * 60`, "{{result}}"))).
		WithPanel(ts("Judge pass duration").Span(6).Unit("s").Min(0).
			WithTarget(q(`histogram_quantile(0.95, sum by (le) (rate(mlx_judge_pass_seconds_bucket{{SUP}}[{R}])))`, "p95")).
			WithTarget(q(`sum(rate(mlx_judge_passes_total{{SUP}, result!="ok"}[{R}])) / sum(rate(mlx_judge_passes_total{{SUP}}[{R}]))`, "share of passes not ok"))).
		WithRow(dashboard.NewRowBuilder("Totals")).
		WithPanel(stat("Truncated completions (5m)").Span(6).Unit("none").
			Description("finish_reason length: max_tokens or the context cut the answer.").
			WithTarget(q(`sum(increase(mlx_finish_reason_total{{P}, reason="length"}[5m])) or vector(0)`, "length"))).
		WithPanel(stat("Flagged responses (all time)").Span(6).Unit("none").
			WithTarget(q(`sum(mlx_hallucination_flag_total{{P}}) or vector(0)`, "flagged"))).
		WithPanel(stat("Current risk (last request)").Span(6).Unit("none").Min(0).Max(1).
			Thresholds(thresholds("green", at(0.5, "orange"), at(0.8, "red"))).
			WithTarget(q(`max(mlx_hallucination_risk{{P}})`, "risk"))).
		WithPanel(stat("Completions scored (24 h)").Span(6).Unit("none").
			WithTarget(q(`sum(increase(mlx_confidence_scored_total{{P}}[24h])) or vector(0)`, "scored")))
}

// percentilesOf is a third-width panel of a latency histogram's p50, p95
// and p99 under selector sel.
func percentilesOf(title, description, metric, sel string) *timeseries.PanelBuilder {
	return ts(title).Span(8).Unit("s").Min(0).Description(description).
		Targets(quantiles(metric, sel, 50, 95, 99))
}
