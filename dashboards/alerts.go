package dashboards

func alerts() Dashboard {
	return Dashboard{
		UID: "mlx-alerts", Title: "MLX Alerts & Serving Health", Tags: []string{"mlx", "alerts", "serving"},
		Description: "What is firing, the engine as the supervisor sees it, crashes, probes, and every scrape target.",
		Rows: []Row{
			{"Alerts", []Panel{
				stat("Firing", "none", 4, q(`count(ALERTS{alertstate="firing"}) or vector(0)`, "firing")).
					steps(Step{"green", 0}, Step{"orange", 1}, Step{"red", 3}),
				stat("Pending", "none", 4, q(`count(ALERTS{alertstate="pending"}) or vector(0)`, "pending")).
					steps(Step{"green", 0}, Step{"orange", 1}),
				Panel{Type: "bargauge", Title: "Firing by severity", W: 16, H: 4,
					Targets: []Target{qe(`sum by (severity) (ALERTS{alertstate="firing"})`, "{{severity}}", faultAlerts)}},
				table("Firing alerts", 24, qe(`ALERTS{alertstate="firing"}`, "", faultAlerts)).h(7),
			}},
			{"Engine", []Panel{
				stat("Process / ready / model", "none", 6,
					q(`max(mlx_server_up{{SUP}})`, "process"),
					q(`max(mlx_server_ready{{SUP}})`, "ready"),
					q(`max(mlx_model_loaded{{SUP}})`, "model")).maps(upDown).steps(redGreen...),
				stat("Engine uptime", "s", 6, q(`max(mlx_server_uptime_seconds{{SUP}})`, "uptime")),
				stat("Restarts (1 h)", "none", 6, q(`sum(increase(mlx_server_restarts_total{{SUP}}[1h]))`, "restarts")).
					steps(Step{"green", 0}, Step{"orange", 1}, Step{"red", 4}),
				stat("Last exit code", "none", 6, q(`max(mlx_server_last_exit_code{{SUP}})`, "exit code")).
					desc("Minus the signal number when a signal ended the engine; -1 when it could not be started."),
				ts("Engine state", "none", 12,
					q(`max(mlx_server_state{{SUP}})`, "state"),
					q(`max(mlx_server_backoff_seconds{{SUP}})`, "backoff (s)")).min0().
					desc("State: 0 idle, 1 running, 2 starting, 3 backoff."),
				ts("Readiness probes / min", "none", 12, q(`sum by (result) (rate(mlx_server_health_checks_total{{SUP}}[{R}])) * 60`, "{{result}}")).min0().stacked(),
			}},
			{"Crashes", []Panel{
				Panel{Type: "bargauge", Title: "Crashes by reason (24 h)", W: 12,
					Targets: []Target{q(`sum by (reason) (increase(mlx_server_crashes_total{{SUP}}[24h]))`, "{{reason}}")}},
				table("Last crash reason", 12, qe(`mlx_server_last_crash_reason{{SUP}} == 1`, "", faultCrash)),
			}},
			{"Scrape targets", []Panel{
				stat("Targets down", "none", 4, q(`count(up == 0) or vector(0)`, "down")).
					steps(Step{"green", 0}, Step{"red", 1}),
				table("Targets", 20, q(`up`, "")).h(8),
				ts("Scrape duration by job", "s", 24, q(`max by (job) (scrape_duration_seconds)`, "{{job}}")).min0(),
			}},
			{"Alert history", []Panel{
				ts("Alerts firing in the last hour", "none", 8, qe(`count by (alertname) (count_over_time(ALERTS{alertstate="firing"}[1h]))`, "{{alertname}}", faultAlerts)).min0(),
				ts("Flapping alerts (3+ starts in 1 h)", "none", 8, qe(`count by (alertname) (changes(ALERTS_FOR_STATE[1h]) >= 3)`, "{{alertname}}", faultAlerts)).min0().
					desc("ALERTS_FOR_STATE holds the time an alert became active: each change is a new start."),
				ts("Restarts and crashes / h", "none", 8,
					q(`sum(increase(mlx_server_restarts_total{{SUP}}[1h])) or vector(0)`, "restarts"),
					q(`sum(increase(mlx_server_crashes_total{{SUP}}[1h])) or vector(0)`, "crashes")).min0(),
			}},
		},
	}
}
