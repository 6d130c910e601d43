package dashboards

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

func node() *dashboard.DashboardBuilder {
	return newDashboard("mlx-node", "MLX Node Hardware").
		Description("Each Mac of the ring: CPU, memory, disk, processes and the ring's network.").
		Tags([]string{"mlx", "hardware"}).
		WithVariable(nodeVar()).
		WithRow(dashboard.NewRowBuilder("Status")).
		WithPanel(stat("Exporter").Span(4).Unit("none").Mappings(upDown()).Thresholds(upIsGreen()).
			WithTarget(q(`up{job="mlx-hw", node=~"$node"}`, "{{node}}"))).
		WithPanel(stat("Uptime").Span(4).Unit("s").
			WithTarget(q(`mlx_hw_uptime_seconds{{HW}}`, "{{node}}"))).
		WithPanel(stat("Logical CPUs").Span(4).Unit("none").
			WithTarget(q(`mlx_hw_cpu_count{{HW}}`, "{{node}}"))).
		WithPanel(stat("Physical memory").Span(4).Unit("bytes").
			WithTarget(q(`mlx_hw_mem_total_bytes{{HW}}`, "{{node}}"))).
		WithPanel(table("Telemetry sources").Span(8).Height(4).
			Description("1 if the source (powermetrics, vm_stat, ioreg, ...) worked at the last scrape.").
			WithTarget(instant(q(`mlx_hw_source_up{{HW}}`, "")))).
		WithRow(dashboard.NewRowBuilder("CPU and memory")).
		WithPanel(ts("Load").Span(12).Unit("none").Min(0).
			WithTarget(q(`mlx_hw_load1{{HW}}`, "load1 {{node}}")).
			WithTarget(q(`mlx_hw_load5{{HW}}`, "load5 {{node}}")).
			WithTarget(q(`mlx_hw_load15{{HW}}`, "load15 {{node}}")).
			WithTarget(q(`mlx_hw_cpu_count{{HW}}`, "CPUs {{node}}"))).
		WithPanel(ts("Memory").Span(12).Unit("bytes").Min(0).
			WithTarget(q(`mlx_hw_mem_used_bytes{{HW}}`, "used {{node}}")).
			WithTarget(q(`mlx_hw_mem_total_bytes{{HW}}`, "total {{node}}")).
			WithTarget(q(`mlx_hw_mem_available_bytes{{HW}}`, "available {{node}}")).
			WithTarget(q(`mlx_hw_swap_used_bytes{{HW}}`, "swap used {{node}}"))).
		WithPanel(ts("Free pages (mlx_hw_mem_pressure)").Span(12).Unit("none").Min(0).
			Description("The original's unit: a page count (16 KiB pages on Apple Silicon). MLXMemoryPressureHigh fires under 20000.").
			Thresholds(thresholds("red", at(20000, "green"))).ThresholdsStyle(thresholdLines()).
			WithTarget(q(`mlx_hw_mem_pressure{{HW}}`, "{{node}}"))).
		WithPanel(ts("Kernel memory pressure level").Span(12).Unit("none").Min(0).
			Mappings(valueText(map[string]string{"1": "normal", "2": "warn", "4": "critical"})).
			Thresholds(thresholds("green", at(2, "orange"), at(4, "red"))).ThresholdsStyle(thresholdLines()).
			WithTarget(qe(`mlx_hw_mem_pressure_level{{HW}}`, "{{node}}", macOSSysctl))).
		WithPanel(ts("Disk used").Span(12).Unit("percentunit").Min(0).Max(1).
			Thresholds(thresholds("green", at(0.9, "red"))).ThresholdsStyle(thresholdLines()).
			WithTarget(q(`mlx_hw_disk_used_bytes{{HW}} / mlx_hw_disk_total_bytes{{HW}}`, "{{node}}"))).
		WithPanel(ts("CPU temperature").Span(12).Unit("celsius").
			WithTarget(qe(`mlx_hw_cpu_temp_celsius{{HW}}`, "{{node}}", sensorOnly))).
		WithRow(dashboard.NewRowBuilder("Processes")).
		WithPanel(ts("mlx_lm.server CPU").Span(12).Unit("percent").Min(0).
			Description("Percent of one core.").
			WithTarget(q(`mlx_worker_cpu_percent{{HW}}`, "{{node}}"))).
		WithPanel(ts("mlx_lm.server memory").Span(12).Unit("bytes").Min(0).
			WithTarget(q(`mlx_worker_rss_bytes{{HW}}`, "{{node}}"))).
		WithPanel(ts("Component CPU").Span(12).Unit("percent").Min(0).
			WithTarget(q(`mlx_proc_cpu_percent{{HW}}`, "{{component}} {{node}}"))).
		WithPanel(ts("Component memory").Span(12).Unit("bytes").Min(0).
			WithTarget(q(`mlx_proc_rss_bytes{{HW}}`, "{{component}} {{node}}"))).
		WithRow(dashboard.NewRowBuilder("Network (ring interfaces)")).
		WithPanel(ts("Ring traffic").Span(12).Unit("Bps").Min(0).
			Description("macOS: the Thunderbolt bridge members and ports (or ring_interfaces); Linux: every interface but lo.").
			WithTarget(q(`rate(mlx_net_rx_bytes_total{{HW}}[{R}])`, "rx {{iface}} {{node}}")).
			WithTarget(q(`rate(mlx_net_tx_bytes_total{{HW}}[{R}])`, "tx {{iface}} {{node}}"))).
		WithPanel(ts("Ring errors").Span(12).Unit("none").Min(0).
			WithTarget(q(`rate(mlx_net_rx_errors_total{{HW}}[{R}])`, "rx {{iface}} {{node}}")).
			WithTarget(q(`rate(mlx_net_tx_errors_total{{HW}}[{R}])`, "tx {{iface}} {{node}}"))).
		WithRow(dashboard.NewRowBuilder("LLM on this node")).
		WithPanel(ts("Requests / min").Span(8).Unit("none").Min(0).
			Description("The proxy runs on rank 0: other nodes serve through the ring and show nothing here.").
			WithTarget(q(`sum by (node) (rate(mlx_requests_total{job="mlx-proxy", node=~"$node"}[{R}])) * 60`, "{{node}}"))).
		WithPanel(ts("Engine state").Span(8).Unit("none").Mappings(engineState()).
			WithTarget(q(`max by (node) (mlx_server_state{job="mlx-supervisor", node=~"$node"})`, "{{node}}"))).
		WithPanel(ts("Engine restarts / h").Span(8).Unit("none").Min(0).
			WithTarget(q(`(sum by (node) (increase(mlx_server_restarts_total{job="mlx-supervisor", node=~"$node"}[1h]))) or vector(0)`, "{{node}}"))).
		WithPanel(table("Node info").Span(12).Height(6).
			WithTarget(instant(q(`mlx_hw_cpu_count{{HW}}`, ""))).
			WithTarget(instant(q(`mlx_hw_mem_total_bytes{{HW}}`, "")))).
		WithPanel(stat("Active alerts on this node").Span(12).Unit("none").
			Thresholds(thresholds("green", at(1, "orange"), at(3, "red"))).
			WithTarget(q(`count(ALERTS{alertstate="firing", node=~"$node"}) or vector(0)`, "firing"))).
		WithRow(dashboard.NewRowBuilder("GPU and power")).
		WithPanel(ts("GPU utilization").Span(8).Unit("percent").Min(0).
			WithTarget(qe(`mlx_hw_gpu_utilization_percent{{HW}}`, "{{node}}", macOS))).
		WithPanel(ts("GPU memory used").Span(8).Unit("bytes").Min(0).
			WithTarget(qe(`mlx_hw_gpu_mem_used_bytes{{HW}}`, "{{node}}", macOS))).
		WithPanel(ts("Package power").Span(8).Unit("watt").Min(0).
			WithTarget(qe(`mlx_hw_package_power_milliwatts{{HW}} / 1000`, "{{node}}", macOS)))
}
