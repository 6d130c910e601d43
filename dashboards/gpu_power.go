package dashboards

func gpuPower() Dashboard {
	return Dashboard{
		UID: "mlx-gpu-power", Title: "MLX GPU & Power", Tags: []string{"mlx", "gpu", "power"},
		Description: "Apple GPU activity, unified memory, power and thermal pressure (powermetrics, IOKit), and NVIDIA GPUs on Linux nodes.",
		Vars:        []Var{nodeVar},
		Rows: []Row{
			{"GPU", []Panel{
				ts("GPU active residency", "percent", 12, qe(`mlx_hw_gpu_utilization_percent{{HW}}`, "{{node}}", macOS)).min0().
					steps(Step{"green", 0}, Step{"red", 95}),
				ts("GPU device utilization (IOKit)", "percent", 12, qe(`mlx_hw_gpu_iokit_util_percent{{HW}}`, "{{node}}", macOS)).min0(),
				ts("GPU frequency", "rotmhz", 12, qe(`mlx_hw_gpu_frequency_mhz{{HW}}`, "{{node}}", macOS)).min0(),
				ts("GPU memory", "bytes", 12,
					qe(`mlx_hw_gpu_mem_used_bytes{{HW}}`, "in use {{node}}", macOS),
					qe(`mlx_hw_gpu_mem_alloc_bytes{{HW}}`, "allocated {{node}}", macOS),
					qe(`mlx_hw_gpu_mem_total_bytes{{HW}}`, "unified pool {{node}}", macOS)).min0(),
				ts("GPU allocation of the unified pool", "percentunit", 12, qe(`mlx_hw_gpu_mem_alloc_bytes{{HW}} / mlx_hw_gpu_mem_total_bytes{{HW}}`, "{{node}}", macOS)).ratio().
					steps(Step{"green", 0}, Step{"red", 0.9}),
				ts("GPU temperature", "celsius", 12, qe(`mlx_hw_gpu_temp_celsius{{HW}}`, "{{node}}", macOS)),
			}},
			{"Power and thermal", []Panel{
				ts("Power by unit", "watt", 12,
					qe(`mlx_hw_gpu_power_milliwatts{{HW}} / 1000`, "GPU {{node}}", macOS),
					qe(`mlx_hw_cpu_power_milliwatts{{HW}} / 1000`, "CPU {{node}}", macOS),
					qe(`mlx_hw_ane_power_milliwatts{{HW}} / 1000`, "ANE {{node}}", macOS)).min0().stacked(),
				ts("Package power", "watt", 12, qe(`mlx_hw_package_power_milliwatts{{HW}} / 1000`, "{{node}}", macOS)).min0().
					steps(Step{"green", 0}, Step{"red", 30}),
				ts("Thermal pressure", "none", 12, qe(`mlx_hw_thermal_pressure{{HW}}`, "{{node}}", macOS)).ratio().
					steps(Step{"green", 0}, Step{"orange", 0.25}, Step{"red", 0.6}).
					desc("macOS thermal pressure level / 4: 0.25 moderate, 0.5 heavy, 0.75 trapping."),
				ts("Energy per completion token", "joule", 12,
					qe(`sum(mlx_hw_package_power_milliwatts{job="mlx-hw"}) / 1000 / sum(rate(mlx_tokens_completion_total{job="mlx-proxy"}[{R}]))`, "J / token", macOS)).min0().
					desc("Package power of every node over the cluster's completion tokens per second."),
				ts("Thermal pressure level", "none", 12, qe(`mlx_hw_thermal_pressure_level{{HW}}`, "{{node}}", macOS)).min0().
					maps(map[string]string{"0": "nominal", "1": "moderate", "2": "heavy", "3": "trapping", "4": "sleeping"}),
			}},
			{"NVIDIA GPUs (Linux nodes)", []Panel{
				ts("NVIDIA utilization", "percentunit", 12, qe(`mlx_hw_nvidia_gpu_utilization_ratio{{HW}}`, "gpu {{gpu}} {{node}}", nvidiaOnly)).ratio(),
				ts("NVIDIA memory", "bytes", 12,
					qe(`mlx_hw_nvidia_gpu_memory_used_bytes{{HW}}`, "used gpu {{gpu}} {{node}}", nvidiaOnly),
					qe(`mlx_hw_nvidia_gpu_memory_total_bytes{{HW}}`, "total gpu {{gpu}} {{node}}", nvidiaOnly)).min0(),
				ts("NVIDIA power", "watt", 12, qe(`mlx_hw_nvidia_gpu_power_watts{{HW}}`, "gpu {{gpu}} {{node}}", nvidiaOnly)).min0(),
				ts("NVIDIA temperature", "celsius", 12, qe(`mlx_hw_nvidia_gpu_temp_celsius{{HW}}`, "gpu {{gpu}} {{node}}", nvidiaOnly)),
			}},
			{"Fleet", []Panel{
				Panel{Type: "heatmap", Title: "GPU utilization heatmap", Unit: "percent", W: 24, H: 8, Targets: []Target{
					qe(`mlx_hw_gpu_utilization_percent{{HW}}`, "{{node}}", macOS)}},
				stat("Nodes online", "none", 8, q(`count(up{job="mlx-hw"} == 1) or vector(0)`, "nodes")).steps(redGreen...),
				stat("Total GPU memory", "bytes", 8, qe(`sum(mlx_hw_gpu_mem_total_bytes{{HW}})`, "total", macOS)),
				stat("Active GPU, power and thermal alerts", "none", 8,
					q(`count(ALERTS{alertstate="firing", category=~"gpu|power|thermal"}) or vector(0)`, "firing")).steps(Step{"green", 0}, Step{"red", 1}),
			}},
		},
	}
}
