package dashboards

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

func gpuPower() *dashboard.DashboardBuilder {
	return newDashboard("mlx-gpu-power", "MLX GPU & Power").
		Description("Apple GPU activity, unified memory, power and thermal pressure (powermetrics, IOKit), and NVIDIA GPUs on Linux nodes.").
		Tags([]string{"mlx", "gpu", "power"}).
		WithVariable(nodeVar()).
		WithRow(dashboard.NewRowBuilder("GPU")).
		WithPanel(ts("GPU active residency").Span(12).Unit("percent").Min(0).
			Thresholds(thresholds("green", at(95, "red"))).ThresholdsStyle(thresholdLines()).
			WithTarget(qe(`mlx_hw_gpu_utilization_percent{{HW}}`, "{{node}}", macOS))).
		WithPanel(ts("GPU device utilization (IOKit)").Span(12).Unit("percent").Min(0).
			WithTarget(qe(`mlx_hw_gpu_iokit_util_percent{{HW}}`, "{{node}}", macOS))).
		WithPanel(ts("GPU frequency").Span(12).Unit("rotmhz").Min(0).
			WithTarget(qe(`mlx_hw_gpu_frequency_mhz{{HW}}`, "{{node}}", macOS))).
		WithPanel(ts("GPU memory").Span(12).Unit("bytes").Min(0).
			WithTarget(qe(`mlx_hw_gpu_mem_used_bytes{{HW}}`, "in use {{node}}", macOS)).
			WithTarget(qe(`mlx_hw_gpu_mem_alloc_bytes{{HW}}`, "allocated {{node}}", macOS)).
			WithTarget(qe(`mlx_hw_gpu_mem_total_bytes{{HW}}`, "unified pool {{node}}", macOS))).
		WithPanel(ts("GPU allocation of the unified pool").Span(12).Unit("percentunit").Min(0).Max(1).
			Thresholds(thresholds("green", at(0.9, "red"))).ThresholdsStyle(thresholdLines()).
			WithTarget(qe(`mlx_hw_gpu_mem_alloc_bytes{{HW}} / mlx_hw_gpu_mem_total_bytes{{HW}}`, "{{node}}", macOS))).
		WithPanel(ts("GPU temperature").Span(12).Unit("celsius").
			WithTarget(qe(`mlx_hw_gpu_temp_celsius{{HW}}`, "{{node}}", macOS))).
		WithRow(dashboard.NewRowBuilder("Power and thermal")).
		WithPanel(ts("Power by unit").Span(12).Unit("watt").Min(0).Stacking(stacked()).
			WithTarget(qe(`mlx_hw_gpu_power_milliwatts{{HW}} / 1000`, "GPU {{node}}", macOS)).
			WithTarget(qe(`mlx_hw_cpu_power_milliwatts{{HW}} / 1000`, "CPU {{node}}", macOS)).
			WithTarget(qe(`mlx_hw_ane_power_milliwatts{{HW}} / 1000`, "ANE {{node}}", macOS))).
		WithPanel(ts("Package power").Span(12).Unit("watt").Min(0).
			Thresholds(thresholds("green", at(30, "red"))).ThresholdsStyle(thresholdLines()).
			WithTarget(qe(`mlx_hw_package_power_milliwatts{{HW}} / 1000`, "{{node}}", macOS))).
		WithPanel(ts("Thermal pressure").Span(12).Unit("none").Min(0).Max(1).
			Description("macOS thermal pressure level / 4: 0.25 moderate, 0.5 heavy, 0.75 trapping.").
			Thresholds(thresholds("green", at(0.25, "orange"), at(0.6, "red"))).ThresholdsStyle(thresholdLines()).
			WithTarget(qe(`mlx_hw_thermal_pressure{{HW}}`, "{{node}}", macOS))).
		WithPanel(ts("Energy per completion token").Span(12).Unit("joule").Min(0).
			Description("Package power of every node over the cluster's completion tokens per second.").
			WithTarget(qe(`sum(mlx_hw_package_power_milliwatts{job="mlx-hw"}) / 1000 / sum(rate(mlx_tokens_completion_total{job="mlx-proxy"}[{R}]))`, "J / token", macOS))).
		WithPanel(ts("Thermal pressure level").Span(12).Unit("none").Min(0).
			Mappings(valueText(map[string]string{"0": "nominal", "1": "moderate", "2": "heavy", "3": "trapping", "4": "sleeping"})).
			WithTarget(qe(`mlx_hw_thermal_pressure_level{{HW}}`, "{{node}}", macOS))).
		WithRow(dashboard.NewRowBuilder("NVIDIA GPUs (Linux nodes)")).
		WithPanel(ts("NVIDIA utilization").Span(12).Unit("percentunit").Min(0).Max(1).
			WithTarget(qe(`mlx_hw_nvidia_gpu_utilization_ratio{{HW}}`, "gpu {{gpu}} {{node}}", nvidiaOnly))).
		WithPanel(ts("NVIDIA memory").Span(12).Unit("bytes").Min(0).
			WithTarget(qe(`mlx_hw_nvidia_gpu_memory_used_bytes{{HW}}`, "used gpu {{gpu}} {{node}}", nvidiaOnly)).
			WithTarget(qe(`mlx_hw_nvidia_gpu_memory_total_bytes{{HW}}`, "total gpu {{gpu}} {{node}}", nvidiaOnly))).
		WithPanel(ts("NVIDIA power").Span(12).Unit("watt").Min(0).
			WithTarget(qe(`mlx_hw_nvidia_gpu_power_watts{{HW}}`, "gpu {{gpu}} {{node}}", nvidiaOnly))).
		WithPanel(ts("NVIDIA temperature").Span(12).Unit("celsius").
			WithTarget(qe(`mlx_hw_nvidia_gpu_temp_celsius{{HW}}`, "gpu {{gpu}} {{node}}", nvidiaOnly))).
		WithRow(dashboard.NewRowBuilder("Fleet")).
		WithPanel(heatmap("GPU utilization heatmap").Span(24).Height(8).Unit("percent").
			WithTarget(qe(`mlx_hw_gpu_utilization_percent{{HW}}`, "{{node}}", macOS))).
		WithPanel(stat("Nodes online").Span(8).Unit("none").Thresholds(upIsGreen()).
			WithTarget(q(`count(up{job="mlx-hw"} == 1) or vector(0)`, "nodes"))).
		WithPanel(stat("Total GPU memory").Span(8).Unit("bytes").
			WithTarget(qe(`sum(mlx_hw_gpu_mem_total_bytes{{HW}})`, "total", macOS))).
		WithPanel(stat("Active GPU, power and thermal alerts").Span(8).Unit("none").
			Thresholds(thresholds("green", at(1, "red"))).
			WithTarget(q(`count(ALERTS{alertstate="firing", category=~"gpu|power|thermal"}) or vector(0)`, "firing")))
}
