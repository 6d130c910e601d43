package dashboards

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

func model() *dashboard.DashboardBuilder {
	return newDashboard("mlx-model", "MLX Model Architecture").
		Description("The served model's configuration (config.json), its context and KV-cache budget, and the engine's prompt cache.").
		Tags([]string{"mlx", "model"}).
		Time("now-6h", "now").
		WithVariable(modelVar()).
		WithRow(dashboard.NewRowBuilder("Model")).
		WithPanel(table("Architecture").Span(12).Height(5).
			WithTarget(instant(q(`mlx_model_arch{{P}}`, "")))).
		WithPanel(table("Configuration").Span(12).Height(10).
			WithTarget(instant(q(`mlx_model_info{{P}}`, "")))).
		WithPanel(stat("Layers").Span(4).Unit("none").
			WithTarget(q(modelInfo("layer_count"), "{{model}}"))).
		WithPanel(stat("KV heads").Span(4).Unit("none").
			WithTarget(q(modelInfo("kv_heads"), "{{model}}"))).
		WithPanel(stat("Head dim").Span(4).Unit("none").
			WithTarget(q(modelInfo("head_dim"), "{{model}}"))).
		WithPanel(stat("Hidden size").Span(4).Unit("none").
			WithTarget(q(modelInfo("hidden_size"), "{{model}}"))).
		WithPanel(stat("Quantization bits").Span(4).Unit("none").
			WithTarget(q(modelInfo("quant_bits"), "{{model}}"))).
		WithPanel(stat("Vocabulary").Span(4).Unit("none").
			WithTarget(q(modelInfo("vocab_size"), "{{model}}"))).
		WithRow(dashboard.NewRowBuilder("Context and KV budget")).
		WithPanel(stat("Max context").Span(6).Unit("none").
			WithTarget(q(`max by (model) (mlx_context_length_max_tokens{{P}})`, "{{model}}"))).
		WithPanel(stat("KV bytes / token").Span(6).Unit("bytes").
			WithTarget(q(`max by (model) (mlx_kv_bytes_per_token{{P}})`, "{{model}}"))).
		WithPanel(stat("KV bytes of a full context").Span(6).Unit("bytes").
			WithTarget(q(`max(mlx_kv_est_bytes_max_context{{KV}})`, "full context"))).
		WithPanel(stat("Model loaded").Span(6).Unit("none").Mappings(yesNo()).Thresholds(upIsGreen()).
			WithTarget(q(`max by (model) (mlx_model_loaded{{SUP}})`, "{{model}}"))).
		WithRow(dashboard.NewRowBuilder("Prompt cache")).
		WithPanel(ts("Cache bytes by type").Span(12).Unit("bytes").Min(0).
			WithTarget(q(`mlx_kv_cache_bytes{{KV}}`, "{{type}}")).
			WithTarget(qe(`mlx_kv_cache_max_bytes{{KV}}`, "limit", cfgKVBytes))).
		WithPanel(ts("Cache sequences and limit").Span(12).Unit("none").Min(0).
			WithTarget(q(`mlx_kv_cache_sequences{{KV}, type="total"}`, "sequences")).
			WithTarget(q(`mlx_kv_cache_max_sequences{{KV}}`, "limit (--prompt-cache-size)"))).
		WithPanel(ts("Cache fill").Span(12).Unit("percentunit").Min(0).
			Thresholds(thresholds("green", at(0.9, "orange"), at(1, "red"))).ThresholdsStyle(thresholdLines()).
			WithTarget(q(`mlx_kv_cache_utilization{{KV}}`, "fill"))).
		WithPanel(ts("Time since the engine last logged its cache").Span(12).Unit("s").Min(0).
			Description("The engine logs its cache at every admitted request: this is also the time since the last request.").
			WithTarget(q(`mlx_kv_cache_state_age_seconds{{KV}}`, "age")).
			WithTarget(q(`mlx_kv_agent_up{{KV}}`, "log readable"))).
		WithRow(dashboard.NewRowBuilder("Serving")).
		WithPanel(stat("Engine uptime").Span(6).Unit("s").
			WithTarget(q(`max(mlx_server_uptime_seconds{{SUP}})`, "uptime"))).
		WithPanel(stat("Restarts (24 h)").Span(6).Unit("none").
			WithTarget(q(`sum(increase(mlx_server_restarts_total{{SUP}}[24h])) or vector(0)`, "restarts"))).
		WithPanel(table("Last crash reason").Span(6).
			WithTarget(instant(qe(`mlx_server_last_crash_reason{{SUP}} == 1`, "", faultCrash)))).
		WithPanel(stat("Scoring coverage").Span(6).Unit("percentunit").Min(0).Max(1).
			WithTarget(q(`sum(rate(mlx_confidence_scored_total{{P}}[{R}])) / clamp_min(sum(rate(mlx_requests_total{{P}}[{R}])), 0.0001)`, "scored")))
}
