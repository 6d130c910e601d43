package dashboards

// modelInternals is the original's "MLX Model Sharding & Internals": the
// architecture (the linear-attention row when the model has one), weight
// and KV footprint, the ranks and their interconnect.
func modelInternals() Dashboard {
	info := func(title, attr string) Panel {
		return stat(title, "none", 4, q(`max by (model) (mlx_model_info{{P}, attr="`+attr+`"})`, "{{model}}"))
	}
	linear := func(title, attr, why string) Panel {
		return stat(title, "none", 4, qe(`max by (model) (mlx_model_info{{P}, attr="`+attr+`"})`, "{{model}}", why))
	}
	return Dashboard{
		UID: "mlx-model-internals", Title: "MLX Model Sharding & Internals", Tags: []string{"mlx", "model"},
		Description: "The model's architecture from config.json (with the linear-attention layers of hybrid models), its weight and KV footprint, the ranks and the ring between them.",
		Vars:        []Var{modelVar, nodeVar},
		From:        "now-6h",
		Rows: []Row{
			{"Model facts", []Panel{
				table("Architecture", 4, q(`mlx_model_arch{{P}}`, "")).h(5),
				info("Layers", "layer_count"),
				info("Attention heads", "attention_heads"),
				info("KV heads", "kv_heads"),
				info("Head dim", "head_dim"),
				info("Hidden size", "hidden_size"),
			}},
			{"Linear attention", []Panel{
				linear("Linear key heads", "linear_key_heads", hybridOnly),
				linear("Linear value heads", "linear_value_heads", hybridOnly),
				linear("Linear key head dim", "linear_key_head_dim", hybridOnly),
				linear("Linear value head dim", "linear_value_head_dim", hybridOnly),
				linear("Conv kernel dim", "linear_conv_kernel_dim", hybridOnly),
				linear("MTP layers", "mtp_layers", mtpOnly),
			}},
			{"Weight footprint", []Panel{
				info("Quantization bits", "quant_bits"),
				info("Quant group size", "quant_group_size"),
				info("Vocabulary", "vocab_size"),
				info("Intermediate size", "intermediate_size"),
				stat("Tied embeddings", "none", 4, q(`max by (model) (mlx_model_info{{P}, attr="tie_word_embeddings"})`, "{{model}}")).maps(map[string]string{"0": "no", "1": "yes"}),
				stat("mlx_lm.server memory", "bytes", 4, q(`sum(mlx_worker_rss_bytes{{HW}})`, "all ranks")),
			}},
			{"Runtime shards per node", []Panel{
				ts("mlx_lm.server RSS per node", "bytes", 8, q(`sum by (node) (mlx_worker_rss_bytes{{HW}})`, "{{node}}")).min0(),
				ts("GPU memory used per node", "bytes", 8, qe(`sum by (node) (mlx_hw_gpu_mem_used_bytes{{HW}})`, "{{node}}", macOS)).min0(),
				ts("GPU utilization per node", "percent", 8, qe(`sum by (node) (mlx_hw_gpu_utilization_percent{{HW}})`, "{{node}}", macOS)).min0(),
			}},
			{"Ring interconnect", []Panel{
				ts("Ring receive and send", "Bps", 12,
					q(`sum by (node) (rate(mlx_net_rx_bytes_total{{HW}}[{R}]))`, "{{node}} rx"),
					q(`sum by (node) (rate(mlx_net_tx_bytes_total{{HW}}[{R}]))`, "{{node}} tx")).min0(),
				ts("Ring errors / s", "none", 12,
					q(`sum by (node) (rate(mlx_net_rx_errors_total{{HW}}[{R}]) + rate(mlx_net_tx_errors_total{{HW}}[{R}]))`, "{{node}}")).min0(),
			}},
			{"KV cache", []Panel{
				ts("KV cache bytes by type", "bytes", 8, q(`sum by (type) (mlx_kv_cache_bytes{{KV}})`, "{{type}}")).min0(),
				ts("KV sequences by type", "none", 8, q(`sum by (type) (mlx_kv_cache_sequences{{KV}})`, "{{type}}")).min0(),
				stat("KV cache utilization", "percentunit", 4, q(`max(mlx_kv_cache_utilization{{KV}})`, "utilization")).ratio(),
				stat("Max sequences", "none", 4, q(`max(mlx_kv_cache_max_sequences{{KV}})`, "max")),
			}},
			{"Context", []Panel{
				stat("Max context tokens", "none", 6, q(`max by (model) (mlx_context_length_max_tokens{{P}})`, "{{model}}")),
				stat("Context used (last request)", "none", 6, q(`max by (model) (mlx_context_used_tokens{{P}})`, "{{model}}")),
				stat("Context utilization", "percentunit", 6, q(`max by (model) (mlx_context_utilization{{P}})`, "{{model}}")).ratio(),
				stat("KV bytes / token", "bytes", 6, q(`max by (model) (mlx_kv_bytes_per_token{{P}})`, "{{model}}")),
				stat("KV bytes of a full context", "bytes", 6, q(`max(mlx_kv_est_bytes_max_context{{KV}})`, "full context")),
			}},
			{"Parallelism", []Panel{
				{Type: "text", Title: "How the model is split", W: 8, H: 7, Content: parallelismNote},
				ts("mlx_lm.server CPU per node", "percent", 8, q(`sum by (node) (mlx_worker_cpu_percent{{HW}})`, "{{node}}")).min0(),
				stat("Ranks (nodes reporting)", "none", 8, q(`count(max by (node) (mlx_hw_up{{HW}}))`, "nodes")),
			}},
		},
	}
}

const parallelismNote = `mlx_lm.server runs alone on one Mac, or under ` + "`mlx.launch --backend ring`" + ` across the ring's ranks: each rank holds a shard of the layers (pipeline) or of every layer (tensor parallel), and activations cross the ring between them.

The ring counters are the Thunderbolt or Ethernet interfaces of each node (` + "`mlx_net_*`" + `, the hardware receiver); the shards are the mlx_lm.server processes (` + "`mlx_worker_*`" + `).`
