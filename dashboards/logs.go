package dashboards

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

func logs() *dashboard.DashboardBuilder {
	return newDashboard("mlx-logs", "MLX Log Pipeline").
		Description("server.log through the file_log pipeline (:9106 health series) and the collector's own pipeline telemetry (:8888).").
		Tags([]string{"mlx", "logs"}).
		WithVariable(nodeVar()).
		WithRow(dashboard.NewRowBuilder("Lines")).
		WithPanel(ts("Lines / min by severity").Span(8).Unit("none").Min(0).Stacking(stacked()).
			WithTarget(q(`sum by (severity) (rate(mlx_log_tailer_lines_total{{LOG}}[{R}])) * 60`, "{{severity}}"))).
		WithPanel(ts("Lines / min by category").Span(8).Unit("none").Min(0).Stacking(stacked()).
			WithTarget(q(`sum by (category) (rate(mlx_log_tailer_lines_total{{LOG}}[{R}])) * 60`, "{{category}}"))).
		WithPanel(ts("Shipped / min by sink").Span(8).Unit("none").Min(0).
			Description("Records each destination accepted (the JSONL file, OTLP/HTTP); every record goes to each sink.").
			WithTarget(q(`sum by (sink) (rate(mlx_log_tailer_shipped_total{{LOG}}[{R}])) * 60`, "{{sink}}"))).
		WithRow(dashboard.NewRowBuilder("Pipeline health")).
		WithPanel(stat("Pipeline").Span(4).Unit("none").Mappings(upDown()).Thresholds(upIsGreen()).
			WithTarget(q(`max(mlx_log_tailer_up{{LOG}})`, "up"))).
		WithPanel(stat("Queued in sinks").Span(4).Unit("none").
			WithTarget(q(`sum by (sink) (mlx_log_tailer_queue_depth{{LOG}})`, "{{sink}}"))).
		WithPanel(stat("server.log size").Span(4).Unit("bytes").
			WithTarget(q(`max(mlx_log_tailer_file_bytes{{LOG}})`, "bytes"))).
		WithPanel(stat("Failed exports (1 h)").Span(4).Unit("none").
			Thresholds(thresholds("green", at(1, "red"))).
			WithTarget(q(`sum(increase(mlx_log_tailer_errors_total{{LOG}}[1h]))`, "attempts"))).
		WithPanel(ts("Dropped / min by reason").Span(8).Unit("none").Min(0).Stacking(stacked()).
			Description("http_filter is by design (the access log); queue_full and export_failed are data lost.").
			WithTarget(q(`sum by (reason, sink) (rate(mlx_log_tailer_dropped_total{{LOG}}[{R}])) * 60`, "{{reason}} {{sink}}"))).
		WithRow(dashboard.NewRowBuilder("Collector")).
		WithPanel(ts("Log records received / s").Span(8).Unit("none").Min(0).
			WithTarget(q(`sum by (receiver) (rate(otelcol_receiver_accepted_log_records{{COL}}[{R}]))`, "accepted {{receiver}}")).
			WithTarget(q(`sum by (receiver) (rate(otelcol_receiver_refused_log_records{{COL}}[{R}]))`, "refused {{receiver}}"))).
		WithPanel(ts("Log records exported / s").Span(8).Unit("none").Min(0).
			WithTarget(q(`sum by (exporter) (rate(otelcol_exporter_sent_log_records{{COL}}[{R}]))`, "sent {{exporter}}")).
			WithTarget(qe(`sum by (exporter) (rate(otelcol_exporter_send_failed_log_records{{COL}}[{R}]))`, "failed {{exporter}}", faultSends))).
		WithPanel(ts("Exporter queue fill").Span(8).Unit("percentunit").Min(0).Max(1).
			Thresholds(thresholds("green", at(0.8, "red"))).ThresholdsStyle(thresholdLines()).
			WithTarget(qe(`max by (exporter, data_type) (otelcol_exporter_queue_size{{COL}} / (otelcol_exporter_queue_capacity{{COL}} > 0))`, "{{exporter}} {{data_type}}", cfgQueue))).
		WithPanel(ts("Spans exported / s").Span(8).Unit("none").Min(0).
			WithTarget(q(`sum by (exporter) (rate(otelcol_exporter_sent_spans{{COL}}[{R}]))`, "sent {{exporter}}")).
			WithTarget(qe(`sum by (exporter) (rate(otelcol_exporter_send_failed_spans{{COL}}[{R}]))`, "failed {{exporter}}", faultSpans))).
		WithPanel(ts("Proxy telemetry dropped / s").Span(8).Unit("none").Min(0).
			WithTarget(q(`sum by (node) (rate(mlx_spans_dropped_total{job="mlx-proxy"}[{R}]))`, "spans {{node}}")).
			WithTarget(q(`sum by (node) (rate(mlx_access_log_dropped_total{job="mlx-proxy"}[{R}]))`, "access log {{node}}"))).
		WithPanel(ts("Collector memory").Span(8).Unit("bytes").Min(0).
			WithTarget(q(`otelcol_process_memory_rss{{COL}}`, "rss {{node}}")).
			WithTarget(q(`otelcol_process_runtime_heap_alloc_bytes{{COL}}`, "heap {{node}}"))).
		WithPanel(ts("Collector CPU").Span(8).Unit("percentunit").Min(0).
			Description("Cores used by mlx-otelcol.").
			WithTarget(q(`rate(otelcol_process_cpu_seconds{{COL}}[{R}])`, "{{node}}"))).
		WithRow(dashboard.NewRowBuilder("The engine")).
		WithPanel(ts("mlx_lm.server CPU").Span(8).Unit("percent").Min(0).
			WithTarget(q(`mlx_worker_cpu_percent{job="mlx-hw"}`, "{{node}}"))).
		WithPanel(ts("mlx_lm.server memory").Span(8).Unit("bytes").Min(0).
			WithTarget(q(`mlx_worker_rss_bytes{job="mlx-hw"}`, "{{node}}"))).
		WithPanel(ts("Engine state").Span(8).Unit("none").Mappings(engineState()).
			WithTarget(q(`max(mlx_server_state{{SUP}})`, "state")))
}
