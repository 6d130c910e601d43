package dashboards

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

// modelInternals is the original's "MLX Model Sharding & Internals": the
// architecture (the linear-attention row when the model has one), weight
// and KV footprint, the ranks and their interconnect.
func modelInternals() *dashboard.DashboardBuilder {
	return newDashboard("mlx-model-internals", "MLX Model Sharding & Internals").
		Description("The model's architecture from config.json (with the linear-attention layers of hybrid models), its weight and KV footprint, the ranks and the ring between them.").
		Tags([]string{"mlx", "model"}).
		Time("now-6h", "now").
		WithVariable(modelVar()).
		WithVariable(nodeVar()).
		WithRow(dashboard.NewRowBuilder("Model facts")).
		WithPanel(table("Architecture").Span(4).Height(5).
			WithTarget(instant(q(`mlx_model_arch{{P}}`, "")))).
		WithPanel(stat("Layers").Span(4).Unit("none").WithTarget(q(modelInfo("layer_count"), "{{model}}"))).
		WithPanel(stat("Attention heads").Span(4).Unit("none").WithTarget(q(modelInfo("attention_heads"), "{{model}}"))).
		WithPanel(stat("KV heads").Span(4).Unit("none").WithTarget(q(modelInfo("kv_heads"), "{{model}}"))).
		WithPanel(stat("Head dim").Span(4).Unit("none").WithTarget(q(modelInfo("head_dim"), "{{model}}"))).
		WithPanel(stat("Hidden size").Span(4).Unit("none").WithTarget(q(modelInfo("hidden_size"), "{{model}}"))).
		// Hybrid linear-attention models only: empty with the demo's model.
		WithRow(dashboard.NewRowBuilder("Linear attention")).
		WithPanel(stat("Linear key heads").Span(4).Unit("none").WithTarget(qe(modelInfo("linear_key_heads"), "{{model}}", hybridOnly))).
		WithPanel(stat("Linear value heads").Span(4).Unit("none").WithTarget(qe(modelInfo("linear_value_heads"), "{{model}}", hybridOnly))).
		WithPanel(stat("Linear key head dim").Span(4).Unit("none").WithTarget(qe(modelInfo("linear_key_head_dim"), "{{model}}", hybridOnly))).
		WithPanel(stat("Linear value head dim").Span(4).Unit("none").WithTarget(qe(modelInfo("linear_value_head_dim"), "{{model}}", hybridOnly))).
		WithPanel(stat("Conv kernel dim").Span(4).Unit("none").WithTarget(qe(modelInfo("linear_conv_kernel_dim"), "{{model}}", hybridOnly))).
		WithPanel(stat("MTP layers").Span(4).Unit("none").WithTarget(qe(modelInfo("mtp_layers"), "{{model}}", mtpOnly))).
		WithRow(dashboard.NewRowBuilder("Weight footprint")).
		WithPanel(stat("Quantization bits").Span(4).Unit("none").WithTarget(q(modelInfo("quant_bits"), "{{model}}"))).
		WithPanel(stat("Quant group size").Span(4).Unit("none").WithTarget(q(modelInfo("quant_group_size"), "{{model}}"))).
		WithPanel(stat("Vocabulary").Span(4).Unit("none").WithTarget(q(modelInfo("vocab_size"), "{{model}}"))).
		WithPanel(stat("Intermediate size").Span(4).Unit("none").WithTarget(q(modelInfo("intermediate_size"), "{{model}}"))).
		WithPanel(stat("Tied embeddings").Span(4).Unit("none").Mappings(yesNo()).
			WithTarget(q(modelInfo("tie_word_embeddings"), "{{model}}"))).
		WithPanel(stat("mlx_lm.server memory").Span(4).Unit("bytes").
			WithTarget(q(`sum(mlx_worker_rss_bytes{{HW}})`, "all ranks"))).
		WithRow(dashboard.NewRowBuilder("Runtime shards per node")).
		WithPanel(ts("mlx_lm.server RSS per node").Span(8).Unit("bytes").Min(0).
			WithTarget(q(`sum by (node) (mlx_worker_rss_bytes{{HW}})`, "{{node}}"))).
		WithPanel(ts("GPU memory used per node").Span(8).Unit("bytes").Min(0).
			WithTarget(qe(`sum by (node) (mlx_hw_gpu_mem_used_bytes{{HW}})`, "{{node}}", macOS))).
		WithPanel(ts("GPU utilization per node").Span(8).Unit("percent").Min(0).
			WithTarget(qe(`sum by (node) (mlx_hw_gpu_utilization_percent{{HW}})`, "{{node}}", macOS))).
		WithRow(dashboard.NewRowBuilder("Ring interconnect")).
		WithPanel(stat("Ring links").Span(24).Height(4).Unit("none").
			Description("mlx_net_link_up: each ring interface up and with a carrier (MLXRingLinkDown).").
			Mappings(upDown()).Thresholds(upIsGreen()).
			WithTarget(q(`min by (node, iface) (mlx_net_link_up{{HW}})`, "{{node}} {{iface}}"))).
		WithPanel(ts("Ring receive and send").Span(12).Unit("Bps").Min(0).
			WithTarget(q(`sum by (node) (rate(mlx_net_rx_bytes_total{{HW}}[{R}]))`, "{{node}} rx")).
			WithTarget(q(`sum by (node) (rate(mlx_net_tx_bytes_total{{HW}}[{R}]))`, "{{node}} tx"))).
		WithPanel(ts("Ring errors / s").Span(12).Unit("none").Min(0).
			WithTarget(q(`sum by (node) (rate(mlx_net_rx_errors_total{{HW}}[{R}]) + rate(mlx_net_tx_errors_total{{HW}}[{R}]))`, "{{node}}"))).
		WithRow(dashboard.NewRowBuilder("KV cache")).
		WithPanel(ts("KV cache bytes by type").Span(8).Unit("bytes").Min(0).
			WithTarget(q(`sum by (type) (mlx_kv_cache_bytes{{KV}})`, "{{type}}"))).
		WithPanel(ts("KV sequences by type").Span(8).Unit("none").Min(0).
			WithTarget(q(`sum by (type) (mlx_kv_cache_sequences{{KV}})`, "{{type}}"))).
		WithPanel(stat("KV cache utilization").Span(4).Unit("percentunit").Min(0).Max(1).
			WithTarget(q(`max(mlx_kv_cache_utilization{{KV}})`, "utilization"))).
		WithPanel(stat("Max sequences").Span(4).Unit("none").
			WithTarget(q(`max(mlx_kv_cache_max_sequences{{KV}})`, "max"))).
		WithRow(dashboard.NewRowBuilder("Context")).
		WithPanel(stat("Max context tokens").Span(6).Unit("none").
			WithTarget(q(`max by (model) (mlx_context_length_max_tokens{{P}})`, "{{model}}"))).
		WithPanel(stat("Context used (last request)").Span(6).Unit("none").
			WithTarget(q(`max by (model) (mlx_context_used_tokens{{P}})`, "{{model}}"))).
		WithPanel(stat("Context utilization").Span(6).Unit("percentunit").Min(0).Max(1).
			WithTarget(q(`max by (model) (mlx_context_utilization{{P}})`, "{{model}}"))).
		WithPanel(stat("KV bytes / token").Span(6).Unit("bytes").
			WithTarget(q(`max by (model) (mlx_kv_bytes_per_token{{P}})`, "{{model}}"))).
		WithPanel(stat("KV bytes of a full context").Span(6).Unit("bytes").
			WithTarget(q(`max(mlx_kv_est_bytes_max_context{{KV}})`, "full context"))).
		WithRow(dashboard.NewRowBuilder("Parallelism")).
		WithPanel(text("How the model is split", parallelismNote).Span(8).Height(7)).
		WithPanel(ts("mlx_lm.server CPU per node").Span(8).Unit("percent").Min(0).
			WithTarget(q(`sum by (node) (mlx_worker_cpu_percent{{HW}})`, "{{node}}"))).
		WithPanel(stat("Ranks (nodes reporting)").Span(8).Unit("none").
			WithTarget(q(`count(max by (node) (mlx_hw_up{{HW}}))`, "nodes")))
}

const parallelismNote = `mlx_lm.server runs alone on one Mac, or under ` + "`mlx.launch --backend ring`" + ` across the ring's ranks: each rank holds a shard of the layers (pipeline) or of every layer (tensor parallel), and activations cross the ring between them.

The ring counters are the Thunderbolt or Ethernet interfaces of each node (` + "`mlx_net_*`" + `, the hardware receiver); the shards are the mlx_lm.server processes (` + "`mlx_worker_*`" + `).`
