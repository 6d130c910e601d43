package dashboards

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

const sloContract = `### SLO contract

| SLI | Good event | SLO | Budget | Window |
|---|---|---|---|---|
| **Availability** | a chat completion that is **not 5xx** (4xx are client errors) | **99.5 %** | 0.5 % | 30 d |
| **Latency** | a first token within **10 s** (streamed completions) | **p95 <= 10 s** | 5 % slower | 30 d |

Burn rate = observed bad share / budget; 1x spends the budget exactly in 30 days.
Alerts (rules/mlx-slo.yml): **14.4x over 1 h and 5 m** pages (2 % of the budget in an hour),
**3x over 6 h and 30 m** warns (10 % in 6 hours), and **MLXErrorBudgetExhausted** once the
30-day bad share exceeds the budget. The ratios are vmalert recording rules (mlx:slo_*).`

func sre() *dashboard.DashboardBuilder {
	return newDashboard("mlx-sre", "MLX SRE - SLOs & Error Budget").
		Description("Availability and TTFT SLOs over 30 days, their error budgets and burn rates.").
		Tags([]string{"mlx", "sre", "slo"}).
		Time("now-24h", "now").
		WithRow(dashboard.NewRowBuilder("Contract")).
		WithPanel(text("SLO contract", sloContract).Span(24).Height(7)).
		// The SLI gauges are zoomed to their objective: on 0 to 1, 99 % and
		// 99.5 % would look the same.
		WithRow(dashboard.NewRowBuilder("Status (30 d)")).
		WithPanel(gauge("Availability SLI").Span(6).Height(6).Unit("percentunit").Min(0.99).Max(1).Decimals(2).
			Thresholds(thresholds("red", at(0.99, "orange"), at(0.995, "green"))).
			WithTarget(q(`1 - mlx:slo_availability_error_ratio:rate30d`, "availability"))).
		WithPanel(gauge("Availability budget left").Span(6).Height(6).Unit("percentunit").Min(0).Max(1).
			Thresholds(thresholds("red", at(0.25, "orange"), at(0.5, "green"))).
			WithTarget(q(`1 - mlx:slo_availability_error_ratio:rate30d / 0.005`, "budget left"))).
		WithPanel(gauge("Latency SLI (TTFT <= 10 s)").Span(6).Height(6).Unit("percentunit").Min(0.9).Max(1).Decimals(2).
			Thresholds(thresholds("red", at(0.9, "orange"), at(0.95, "green"))).
			WithTarget(q(`1 - mlx:slo_ttft_slow_ratio:rate30d`, "latency"))).
		WithPanel(gauge("Latency budget left").Span(6).Height(6).Unit("percentunit").Min(0).Max(1).
			Thresholds(thresholds("red", at(0.25, "orange"), at(0.5, "green"))).
			WithTarget(q(`1 - mlx:slo_ttft_slow_ratio:rate30d / 0.05`, "budget left"))).
		// 3x and 14.4x are the warning and paging burn rates of
		// rules/mlx-slo.yml.
		WithRow(dashboard.NewRowBuilder("Burn rates (1x = the budget lasts 30 days)")).
		WithPanel(ts("Availability burn rate").Span(12).Unit("none").Min(0).
			Thresholds(thresholds("green", at(3, "orange"), at(14.4, "red"))).ThresholdsStyle(thresholdLines()).
			WithTarget(q(`mlx:slo_availability_error_ratio:rate5m / 0.005`, "5m")).
			WithTarget(q(`mlx:slo_availability_error_ratio:rate30m / 0.005`, "30m")).
			WithTarget(q(`mlx:slo_availability_error_ratio:rate1h / 0.005`, "1h")).
			WithTarget(q(`mlx:slo_availability_error_ratio:rate6h / 0.005`, "6h"))).
		WithPanel(ts("Latency burn rate").Span(12).Unit("none").Min(0).
			Thresholds(thresholds("green", at(3, "orange"), at(14.4, "red"))).ThresholdsStyle(thresholdLines()).
			WithTarget(q(`mlx:slo_ttft_slow_ratio:rate5m / 0.05`, "5m")).
			WithTarget(q(`mlx:slo_ttft_slow_ratio:rate30m / 0.05`, "30m")).
			WithTarget(q(`mlx:slo_ttft_slow_ratio:rate1h / 0.05`, "1h")).
			WithTarget(q(`mlx:slo_ttft_slow_ratio:rate6h / 0.05`, "6h"))).
		WithRow(dashboard.NewRowBuilder("Volume (30 d)")).
		WithPanel(stat("Requests").Span(6).Unit("none").Decimals(0).
			WithTarget(q(`sum(increase(mlx_requests_total{job="mlx-proxy"}[30d]))`, "requests"))).
		WithPanel(stat("5xx").Span(6).Unit("none").Decimals(0).
			WithTarget(q(`sum(increase(mlx_error_total{job="mlx-proxy", status="5xx"}[30d]))`, "5xx"))).
		WithPanel(stat("4xx").Span(6).Unit("none").Decimals(0).
			WithTarget(q(`sum(increase(mlx_error_total{job="mlx-proxy", status="4xx"}[30d]))`, "4xx"))).
		WithPanel(stat("SLO alerts firing").Span(6).Unit("none").
			Thresholds(thresholds("green", at(1, "red"))).
			WithTarget(q(`count(ALERTS{alertstate="firing", category="slo"}) or vector(0)`, "firing"))).
		WithRow(dashboard.NewRowBuilder("Trends")).
		WithPanel(ts("5xx ratio").Span(12).Unit("percentunit").Min(0).
			Thresholds(thresholds("green", at(0.005, "red"))).ThresholdsStyle(thresholdLines()).
			WithTarget(q(`(sum(rate(mlx_error_total{job="mlx-proxy", status="5xx"}[5m])) or vector(0)) / sum(rate(mlx_requests_total{job="mlx-proxy"}[5m]))`, "5m"))).
		WithPanel(ts("TTFT p95 against the SLO").Span(12).Unit("s").Min(0).
			Thresholds(thresholds("green", at(10, "red"))).ThresholdsStyle(thresholdLines()).
			WithTarget(q(`histogram_quantile(0.95, sum by (le) (rate(mlx_ttft_seconds_bucket{job="mlx-proxy"}[30m])))`, "p95 (30m)")))
}
