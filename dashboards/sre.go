package dashboards

const sloContract = `### SLO contract

| SLI | Good event | SLO | Budget | Window |
|---|---|---|---|---|
| **Availability** | a chat completion that is **not 5xx** (4xx are client errors) | **99.5 %** | 0.5 % | 30 d |
| **Latency** | a first token within **10 s** (streamed completions) | **p95 <= 10 s** | 5 % slower | 30 d |

Burn rate = observed bad share / budget; 1x spends the budget exactly in 30 days.
Alerts (rules/mlx-slo.yml): **14.4x over 1 h and 5 m** pages (2 % of the budget in an hour),
**3x over 6 h and 30 m** warns (10 % in 6 hours), and **MLXErrorBudgetExhausted** once the
30-day bad share exceeds the budget. The ratios are vmalert recording rules (mlx:slo_*).`

func sre() Dashboard {
	return Dashboard{
		UID: "mlx-sre", Title: "MLX SRE - SLOs & Error Budget", Tags: []string{"mlx", "sre", "slo"},
		Description: "Availability and TTFT SLOs over 30 days, their error budgets and burn rates.",
		From:        "now-24h",
		Rows: []Row{
			{"Contract", []Panel{
				{Type: "text", Title: "SLO contract", W: 24, H: 7, Content: sloContract},
			}},
			{"Status (30 d)", []Panel{
				Panel{Type: "gauge", Title: "Availability SLI", Unit: "percentunit", W: 6, H: 6, Min: fp(0.99), Max: fp(1), Decimals: ip(2),
					Steps:   []Step{{"red", 0}, {"orange", 0.99}, {"green", 0.995}},
					Targets: []Target{q(`1 - mlx:slo_availability_error_ratio:rate30d`, "availability")}},
				Panel{Type: "gauge", Title: "Availability budget left", Unit: "percentunit", W: 6, H: 6, Min: fp(0), Max: fp(1),
					Steps:   []Step{{"red", 0}, {"orange", 0.25}, {"green", 0.5}},
					Targets: []Target{q(`1 - mlx:slo_availability_error_ratio:rate30d / 0.005`, "budget left")}},
				Panel{Type: "gauge", Title: "Latency SLI (TTFT <= 10 s)", Unit: "percentunit", W: 6, H: 6, Min: fp(0.9), Max: fp(1), Decimals: ip(2),
					Steps:   []Step{{"red", 0}, {"orange", 0.9}, {"green", 0.95}},
					Targets: []Target{q(`1 - mlx:slo_ttft_slow_ratio:rate30d`, "latency")}},
				Panel{Type: "gauge", Title: "Latency budget left", Unit: "percentunit", W: 6, H: 6, Min: fp(0), Max: fp(1),
					Steps:   []Step{{"red", 0}, {"orange", 0.25}, {"green", 0.5}},
					Targets: []Target{q(`1 - mlx:slo_ttft_slow_ratio:rate30d / 0.05`, "budget left")}},
			}},
			{"Burn rates (1x = the budget lasts 30 days)", []Panel{
				ts("Availability burn rate", "none", 12,
					q(`mlx:slo_availability_error_ratio:rate5m / 0.005`, "5m"),
					q(`mlx:slo_availability_error_ratio:rate30m / 0.005`, "30m"),
					q(`mlx:slo_availability_error_ratio:rate1h / 0.005`, "1h"),
					q(`mlx:slo_availability_error_ratio:rate6h / 0.005`, "6h")).min0().
					steps(Step{"green", 0}, Step{"orange", 3}, Step{"red", 14.4}),
				ts("Latency burn rate", "none", 12,
					q(`mlx:slo_ttft_slow_ratio:rate5m / 0.05`, "5m"),
					q(`mlx:slo_ttft_slow_ratio:rate30m / 0.05`, "30m"),
					q(`mlx:slo_ttft_slow_ratio:rate1h / 0.05`, "1h"),
					q(`mlx:slo_ttft_slow_ratio:rate6h / 0.05`, "6h")).min0().
					steps(Step{"green", 0}, Step{"orange", 3}, Step{"red", 14.4}),
			}},
			{"Volume (30 d)", []Panel{
				stat("Requests", "none", 6, q(`sum(increase(mlx_requests_total{job="mlx-proxy"}[30d]))`, "requests")).dec(0),
				stat("5xx", "none", 6, q(`sum(increase(mlx_error_total{job="mlx-proxy", status="5xx"}[30d]))`, "5xx")).dec(0),
				stat("4xx", "none", 6, q(`sum(increase(mlx_error_total{job="mlx-proxy", status="4xx"}[30d]))`, "4xx")).dec(0),
				stat("SLO alerts firing", "none", 6, q(`count(ALERTS{alertstate="firing", category="slo"}) or vector(0)`, "firing")).
					steps(Step{"green", 0}, Step{"red", 1}),
			}},
			{"Trends", []Panel{
				ts("5xx ratio", "percentunit", 12,
					q(`(sum(rate(mlx_error_total{job="mlx-proxy", status="5xx"}[5m])) or vector(0)) / sum(rate(mlx_requests_total{job="mlx-proxy"}[5m]))`, "5m")).min0().
					steps(Step{"green", 0}, Step{"red", 0.005}),
				ts("TTFT p95 against the SLO", "s", 12,
					q(`histogram_quantile(0.95, sum by (le) (rate(mlx_ttft_seconds_bucket{job="mlx-proxy"}[30m])))`, "p95 (30m)")).min0().
					steps(Step{"green", 0}, Step{"red", 10}),
			}},
		},
	}
}
