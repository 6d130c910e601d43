package dashboards

func logs() Dashboard {
	return Dashboard{
		UID: "mlx-logs", Title: "MLX Log Pipeline", Tags: []string{"mlx", "logs"},
		Description: "server.log through the file_log pipeline (:9106 health series) and the collector's own pipeline telemetry (:8888).",
		Vars:        []Var{nodeVar},
		Rows: []Row{
			{"Lines", []Panel{
				ts("Lines / min by severity", "none", 8, q(`sum by (severity) (rate(mlx_log_tailer_lines_total{{LOG}}[{R}])) * 60`, "{{severity}}")).min0().stacked(),
				ts("Lines / min by category", "none", 8, q(`sum by (category) (rate(mlx_log_tailer_lines_total{{LOG}}[{R}])) * 60`, "{{category}}")).min0().stacked(),
				ts("Shipped / min by sink", "none", 8, q(`sum by (sink) (rate(mlx_log_tailer_shipped_total{{LOG}}[{R}])) * 60`, "{{sink}}")).min0().
					desc("Records each destination accepted (the JSONL file, OTLP/HTTP); every record goes to each sink."),
			}},
			{"Pipeline health", []Panel{
				stat("Pipeline", "none", 4, q(`max(mlx_log_tailer_up{{LOG}})`, "up")).maps(upDown).steps(redGreen...),
				stat("Queued in sinks", "none", 4, q(`sum by (sink) (mlx_log_tailer_queue_depth{{LOG}})`, "{{sink}}")),
				stat("server.log size", "bytes", 4, q(`max(mlx_log_tailer_file_bytes{{LOG}})`, "bytes")),
				stat("Failed exports (1 h)", "none", 4, q(`sum(increase(mlx_log_tailer_errors_total{{LOG}}[1h]))`, "attempts")).
					steps(Step{"green", 0}, Step{"red", 1}),
				ts("Dropped / min by reason", "none", 8, q(`sum by (reason, sink) (rate(mlx_log_tailer_dropped_total{{LOG}}[{R}])) * 60`, "{{reason}} {{sink}}")).min0().stacked().
					desc("http_filter is by design (the access log); queue_full and export_failed are data lost."),
			}},
			{"Collector", []Panel{
				ts("Log records received / s", "none", 8,
					q(`sum by (receiver) (rate(otelcol_receiver_accepted_log_records{{COL}}[{R}]))`, "accepted {{receiver}}"),
					q(`sum by (receiver) (rate(otelcol_receiver_refused_log_records{{COL}}[{R}]))`, "refused {{receiver}}")).min0(),
				ts("Log records exported / s", "none", 8,
					q(`sum by (exporter) (rate(otelcol_exporter_sent_log_records{{COL}}[{R}]))`, "sent {{exporter}}"),
					qe(`sum by (exporter) (rate(otelcol_exporter_send_failed_log_records{{COL}}[{R}]))`, "failed {{exporter}}", faultSends)).min0(),
				ts("Exporter queue fill", "percentunit", 8,
					qe(`max by (exporter, data_type) (otelcol_exporter_queue_size{{COL}} / (otelcol_exporter_queue_capacity{{COL}} > 0))`, "{{exporter}} {{data_type}}", cfgQueue)).ratio().
					steps(Step{"green", 0}, Step{"red", 0.8}),
				ts("Spans exported / s", "none", 8,
					q(`sum by (exporter) (rate(otelcol_exporter_sent_spans{{COL}}[{R}]))`, "sent {{exporter}}"),
					qe(`sum by (exporter) (rate(otelcol_exporter_send_failed_spans{{COL}}[{R}]))`, "failed {{exporter}}", faultSpans)).min0(),
				ts("Proxy telemetry dropped / s", "none", 8,
					q(`sum by (node) (rate(mlx_spans_dropped_total{job="mlx-proxy"}[{R}]))`, "spans {{node}}"),
					q(`sum by (node) (rate(mlx_access_log_dropped_total{job="mlx-proxy"}[{R}]))`, "access log {{node}}")).min0(),
				ts("Collector memory", "bytes", 8,
					q(`otelcol_process_memory_rss{{COL}}`, "rss {{node}}"),
					q(`otelcol_process_runtime_heap_alloc_bytes{{COL}}`, "heap {{node}}")).min0(),
				ts("Collector CPU", "percentunit", 8, q(`rate(otelcol_process_cpu_seconds{{COL}}[{R}])`, "{{node}}")).min0().
					desc("Cores used by mlx-otelcol."),
			}},
			{"The engine", []Panel{
				ts("mlx_lm.server CPU", "percent", 8, q(`mlx_worker_cpu_percent{job="mlx-hw"}`, "{{node}}")).min0(),
				ts("mlx_lm.server memory", "bytes", 8, q(`mlx_worker_rss_bytes{job="mlx-hw"}`, "{{node}}")).min0(),
				ts("Engine state", "none", 8, q(`max(mlx_server_state{{SUP}})`, "state")).
					maps(map[string]string{"0": "idle", "1": "running", "2": "starting", "3": "backoff"}),
			}},
		},
	}
}
