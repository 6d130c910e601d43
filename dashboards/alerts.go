package dashboards

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

func alerts() *dashboard.DashboardBuilder {
	return newDashboard("mlx-alerts", "MLX Alerts & Serving Health").
		Description("What is firing, the engine as the supervisor sees it, crashes, probes, and every scrape target.").
		Tags([]string{"mlx", "alerts", "serving"}).
		WithRow(dashboard.NewRowBuilder("Alerts")).
		WithPanel(stat("Firing").Span(4).Unit("none").
			Thresholds(thresholds("green", at(1, "orange"), at(3, "red"))).
			WithTarget(q(`count(ALERTS{alertstate="firing"}) or vector(0)`, "firing"))).
		WithPanel(stat("Pending").Span(4).Unit("none").
			Thresholds(thresholds("green", at(1, "orange"))).
			WithTarget(q(`count(ALERTS{alertstate="pending"}) or vector(0)`, "pending"))).
		WithPanel(barGauge("Firing by severity").Span(16).Height(4).
			WithTarget(qe(`sum by (severity) (ALERTS{alertstate="firing"})`, "{{severity}}", faultAlerts))).
		WithPanel(table("Firing alerts").Span(24).Height(7).
			WithTarget(instant(qe(`ALERTS{alertstate="firing"}`, "", faultAlerts)))).
		WithRow(dashboard.NewRowBuilder("Engine")).
		WithPanel(stat("Process / ready / model").Span(6).Unit("none").
			Mappings(upDown()).Thresholds(upIsGreen()).
			WithTarget(q(`max(mlx_server_up{{SUP}})`, "process")).
			WithTarget(q(`max(mlx_server_ready{{SUP}})`, "ready")).
			WithTarget(q(`max(mlx_model_loaded{{SUP}})`, "model"))).
		WithPanel(stat("Engine uptime").Span(6).Unit("s").
			WithTarget(q(`max(mlx_server_uptime_seconds{{SUP}})`, "uptime"))).
		WithPanel(stat("Restarts (1 h)").Span(6).Unit("none").
			Thresholds(thresholds("green", at(1, "orange"), at(4, "red"))).
			WithTarget(q(`sum(increase(mlx_server_restarts_total{{SUP}}[1h]))`, "restarts"))).
		WithPanel(stat("Last exit code").Span(6).Unit("none").
			Description("Minus the signal number when a signal ended the engine; -1 when it could not be started.").
			WithTarget(q(`max(mlx_server_last_exit_code{{SUP}})`, "exit code"))).
		WithPanel(ts("Engine state").Span(12).Unit("none").Min(0).
			Description("State: 0 idle, 1 running, 2 starting, 3 backoff.").
			WithTarget(q(`max(mlx_server_state{{SUP}})`, "state")).
			WithTarget(q(`max(mlx_server_backoff_seconds{{SUP}})`, "backoff (s)"))).
		WithPanel(ts("Readiness probes / min").Span(12).Unit("none").Min(0).Stacking(stacked()).
			WithTarget(q(`sum by (result) (rate(mlx_server_health_checks_total{{SUP}}[{R}])) * 60`, "{{result}}"))).
		WithRow(dashboard.NewRowBuilder("Crashes")).
		WithPanel(barGauge("Crashes by reason (24 h)").Span(12).
			WithTarget(q(`sum by (reason) (increase(mlx_server_crashes_total{{SUP}}[24h]))`, "{{reason}}"))).
		WithPanel(table("Last crash reason").Span(12).
			WithTarget(instant(qe(`mlx_server_last_crash_reason{{SUP}} == 1`, "", faultCrash)))).
		// Every failure signal the collector counts, beside its alert in
		// rules/mlx-failures.yml.
		WithRow(dashboard.NewRowBuilder("Failure signals")).
		WithPanel(ts("Refused by the proxy / min").Span(8).Unit("none").Min(0).Stacking(stacked()).
			Description("mlx_http_refusals_total by status: 429 at capacity (MLXProxyAtCapacity), 401/403 callers not let in (MLXProxyRefusingCallers), 400/404/405/415 requests the engine must not see.").
			WithTarget(q(`sum by (status) (rate(mlx_http_refusals_total{job="mlx-proxy"}[{R}])) * 60`, "{{status}}"))).
		WithPanel(ts("Connections refused / min").Span(8).Unit("none").Min(0).
			Description("mlx_proxy_connections_refused_total: connections closed on arrival past max_connections or max_connections_per_client (MLXProxyConnectionsRefused).").
			WithTarget(q(`sum by (reason) (rate(mlx_proxy_connections_refused_total{job="mlx-proxy"}[{R}])) * 60`, "{{reason}}"))).
		WithPanel(ts("Requests by caller / min").Span(8).Unit("none").Min(0).Stacking(stacked()).
			Description("mlx_client_requests_total: each API key's name, local (this machine without a key) or anonymous, by status class.").
			WithTarget(q(`sum by (client, status) (rate(mlx_client_requests_total{job="mlx-proxy"}[{R}])) * 60`, "{{client}} {{status}}"))).
		WithPanel(ts("Stream stalls (1 h)").Span(6).Unit("none").Min(0).
			Description("mlx_stream_stalls_total: streams the proxy ended because the engine or the client went silent (MLXStreamsStalling).").
			WithTarget(q(`sum by (side) (increase(mlx_stream_stalls_total{job="mlx-proxy"}[1h]))`, "{{side}}"))).
		WithPanel(ts("Panics recovered (1 h)").Span(6).Unit("none").Min(0).
			Description("mlx_proxy_panics_total and mlx_supervisor_panics_total by where (MLXProxyPanics, MLXSupervisorPanics).").
			WithTarget(q(`sum by (where) (increase(mlx_proxy_panics_total{job="mlx-proxy"}[1h]))`, "proxy {{where}}")).
			WithTarget(q(`sum by (where) (increase(mlx_supervisor_panics_total{{SUP}}[1h]))`, "supervisor {{where}}"))).
		WithPanel(ts("Buffer cuts (1 h)").Span(6).Unit("none").Min(0).
			Description("mlx_proxy_buffer_cuts_total: answers relayed unread past a bound (MLXProxyBufferCuts).").
			WithTarget(q(`sum by (buffer) (increase(mlx_proxy_buffer_cuts_total{job="mlx-proxy"}[1h]))`, "{{buffer}}"))).
		WithPanel(stat("Engine log write errors (1 h)").Span(6).Unit("none").
			Description("mlx_server_log_write_errors_total: engine output lost to a full disk (MLXServerLogWriteErrors).").
			Thresholds(thresholds("green", at(1, "red"))).
			WithTarget(q(`sum(increase(mlx_server_log_write_errors_total{{SUP}}[1h])) or vector(0)`, "errors"))).
		WithPanel(ts("Caller tokens / min").Span(8).Unit("none").Min(0).
			Description("mlx_client_tokens_total: prompt and completion tokens by caller.").
			WithTarget(q(`sum by (client, type) (rate(mlx_client_tokens_total{job="mlx-proxy"}[{R}])) * 60`, "{{client}} {{type}}"))).
		WithPanel(ts("Telemetry not scored, kept or streamed (1 h)").Span(8).Unit("none").Min(0).
			Description("Answers the scorer dropped (mlx_scoring_dropped_total: its queue was full), spans the proxy dropped (mlx_spans_dropped_total, MLXProxyTelemetryDropped), answers with no logprobs to score (mlx_confidence_unscored_total) live stream records dropped (mlx_live_records_dropped_total) and people's feedback that did not reach its pipeline (mlx_user_feedback_dropped_total).").
			WithTarget(q(`sum(increase(mlx_scoring_dropped_total{job="mlx-proxy"}[1h]))`, "scoring dropped")).
			WithTarget(q(`sum(increase(mlx_spans_dropped_total{job="mlx-proxy"}[1h]))`, "spans dropped")).
			WithTarget(qe(`sum by (source) (increase(mlx_confidence_unscored_total{job="mlx-proxy"}[1h]))`, "unscored {{source}}", faultUnscored)).
			WithTarget(q(`sum by (reason) (increase(mlx_live_records_dropped_total{job="mlx-proxy"}[1h]))`, "live {{reason}}")).
			WithTarget(q(`sum(increase(mlx_user_feedback_dropped_total{job="mlx-proxy"}[1h]))`, "feedback dropped"))).
		WithPanel(ts("Judge and Opik checks (1 h)").Span(8).Unit("none").Min(0).
			Description("Judged traces whose text names a score or a chat special token (mlx_judge_injections_suspected_total: judged all the same), and the Opik exporter's read-backs of scored traces by result (mlx_opik_readbacks_total, on the collector's own :8888; MLXOpikScoresUnseen alerts on the scores missing).").
			WithTarget(q(`sum(increase(mlx_judge_injections_suspected_total{{SUP}}[1h]))`, "injections suspected")).
			WithTarget(qe(`sum by (result) (increase(mlx_opik_readbacks_total{job="mlx-otelcol"}[1h]))`, "Opik read-back {{result}}", cfgOpik)).
			WithTarget(qe(`sum(increase(mlx_opik_scores_unseen_total{job="mlx-otelcol"}[1h]))`, "Opik scores unseen", cfgOpik))).
		WithPanel(stat("Hardware sources").Span(24).Height(4).Unit("none").
			Description("mlx_hw_source_up by node and source: a source down leaves its alerts blind (MLXHardwareSourceDown).").
			Mappings(upDown()).Thresholds(upIsGreen()).
			WithTarget(q(`min by (node, source) (mlx_hw_source_up{{HW}})`, "{{node}} {{source}}"))).
		WithRow(dashboard.NewRowBuilder("Scrape targets")).
		WithPanel(stat("Targets down").Span(4).Unit("none").
			Thresholds(thresholds("green", at(1, "red"))).
			WithTarget(q(`count(up == 0) or vector(0)`, "down"))).
		WithPanel(table("Targets").Span(20).Height(8).
			WithTarget(instant(q(`up`, "")))).
		WithPanel(ts("Scrape duration by job").Span(24).Unit("s").Min(0).
			WithTarget(q(`max by (job) (scrape_duration_seconds)`, "{{job}}"))).
		WithRow(dashboard.NewRowBuilder("Alert history")).
		WithPanel(ts("Alert starts / h").Span(6).Unit("none").Min(0).
			Description("The original's alert event rate: ALERTS_FOR_STATE holds the time an alert became active, so each distinct value in the hour is one start.").
			WithTarget(qe(`sum by (alertname) (changes(ALERTS_FOR_STATE[1h]) + 1)`, "{{alertname}}", faultAlerts))).
		WithPanel(ts("Alerts firing in the last hour").Span(6).Unit("none").Min(0).
			WithTarget(qe(`count by (alertname) (count_over_time(ALERTS{alertstate="firing"}[1h]))`, "{{alertname}}", faultAlerts))).
		WithPanel(ts("Flapping alerts (3+ starts in 1 h)").Span(6).Unit("none").Min(0).
			Description("ALERTS_FOR_STATE holds the time an alert became active: each change is a new start.").
			WithTarget(qe(`count by (alertname) (changes(ALERTS_FOR_STATE[1h]) >= 3)`, "{{alertname}}", faultAlerts))).
		WithPanel(ts("Restarts and crashes / h").Span(6).Unit("none").Min(0).
			WithTarget(q(`sum(increase(mlx_server_restarts_total{{SUP}}[1h])) or vector(0)`, "restarts")).
			WithTarget(q(`sum(increase(mlx_server_crashes_total{{SUP}}[1h])) or vector(0)`, "crashes")))
}
