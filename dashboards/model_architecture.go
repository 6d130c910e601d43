package dashboards

func model() Dashboard {
	return Dashboard{
		UID: "mlx-model", Title: "MLX Model Architecture", Tags: []string{"mlx", "model"},
		Description: "The served model's configuration (config.json), its context and KV-cache budget, and the engine's prompt cache.",
		Vars:        []Var{modelVar},
		From:        "now-6h",
		Rows: []Row{
			{"Model", []Panel{
				table("Architecture", 12, q(`mlx_model_arch{{P}}`, "")).h(5),
				table("Configuration", 12, q(`mlx_model_info{{P}}`, "")).h(10),
				stat("Layers", "none", 4, q(`max by (model) (mlx_model_info{{P}, attr="layer_count"})`, "{{model}}")),
				stat("KV heads", "none", 4, q(`max by (model) (mlx_model_info{{P}, attr="kv_heads"})`, "{{model}}")),
				stat("Head dim", "none", 4, q(`max by (model) (mlx_model_info{{P}, attr="head_dim"})`, "{{model}}")),
				stat("Hidden size", "none", 4, q(`max by (model) (mlx_model_info{{P}, attr="hidden_size"})`, "{{model}}")),
				stat("Quantization bits", "none", 4, q(`max by (model) (mlx_model_info{{P}, attr="quant_bits"})`, "{{model}}")),
				stat("Vocabulary", "none", 4, q(`max by (model) (mlx_model_info{{P}, attr="vocab_size"})`, "{{model}}")),
			}},
			{"Context and KV budget", []Panel{
				stat("Max context", "none", 6, q(`max by (model) (mlx_context_length_max_tokens{{P}})`, "{{model}}")),
				stat("KV bytes / token", "bytes", 6, q(`max by (model) (mlx_kv_bytes_per_token{{P}})`, "{{model}}")),
				stat("KV bytes of a full context", "bytes", 6, q(`max(mlx_kv_est_bytes_max_context{{KV}})`, "full context")),
				stat("Model loaded", "none", 6, q(`max by (model) (mlx_model_loaded{{SUP}})`, "{{model}}")).maps(map[string]string{"0": "no", "1": "yes"}).steps(redGreen...),
			}},
			{"Prompt cache", []Panel{
				ts("Cache bytes by type", "bytes", 12,
					q(`mlx_kv_cache_bytes{{KV}}`, "{{type}}"),
					qe(`mlx_kv_cache_max_bytes{{KV}}`, "limit", cfgKVBytes)).min0(),
				ts("Cache sequences and limit", "none", 12,
					q(`mlx_kv_cache_sequences{{KV}, type="total"}`, "sequences"),
					q(`mlx_kv_cache_max_sequences{{KV}}`, "limit (--prompt-cache-size)")).min0(),
				ts("Cache fill", "percentunit", 12, q(`mlx_kv_cache_utilization{{KV}}`, "fill")).min0().
					steps(Step{"green", 0}, Step{"orange", 0.9}, Step{"red", 1}),
				ts("Time since the engine last logged its cache", "s", 12,
					q(`mlx_kv_cache_state_age_seconds{{KV}}`, "age"),
					q(`mlx_kv_agent_up{{KV}}`, "log readable")).min0().
					desc("The engine logs its cache at every admitted request: this is also the time since the last request."),
			}},
			{"Serving", []Panel{
				stat("Engine uptime", "s", 6, q(`max(mlx_server_uptime_seconds{{SUP}})`, "uptime")),
				stat("Restarts (24 h)", "none", 6, q(`sum(increase(mlx_server_restarts_total{{SUP}}[24h])) or vector(0)`, "restarts")),
				table("Last crash reason", 6, qe(`mlx_server_last_crash_reason{{SUP}} == 1`, "", faultCrash)),
				stat("Scoring coverage", "percentunit", 6,
					q(`sum(rate(mlx_confidence_scored_total{{P}}[{R}])) / clamp_min(sum(rate(mlx_requests_total{{P}}[{R}])), 0.0001)`, "scored")).ratio(),
			}},
		},
	}
}
