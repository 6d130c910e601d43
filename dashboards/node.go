package dashboards

func node() Dashboard {
	return Dashboard{
		UID: "mlx-node", Title: "MLX Node Hardware", Tags: []string{"mlx", "hardware"},
		Description: "Each Mac of the ring: CPU, memory, disk, processes and the ring's network.",
		Vars:        []Var{nodeVar},
		Rows: []Row{
			{"Status", []Panel{
				stat("Exporter", "none", 4, q(`up{job="mlx-hw", node=~"$node"}`, "{{node}}")).maps(upDown).steps(redGreen...),
				stat("Uptime", "s", 4, q(`mlx_hw_uptime_seconds{{HW}}`, "{{node}}")),
				stat("Logical CPUs", "none", 4, q(`mlx_hw_cpu_count{{HW}}`, "{{node}}")),
				stat("Physical memory", "bytes", 4, q(`mlx_hw_mem_total_bytes{{HW}}`, "{{node}}")),
				table("Telemetry sources", 8, q(`mlx_hw_source_up{{HW}}`, "")).h(4).
					desc("1 if the source (powermetrics, vm_stat, ioreg, ...) worked at the last scrape."),
			}},
			{"CPU and memory", []Panel{
				ts("Load", "none", 12,
					q(`mlx_hw_load1{{HW}}`, "load1 {{node}}"),
					q(`mlx_hw_load5{{HW}}`, "load5 {{node}}"),
					q(`mlx_hw_load15{{HW}}`, "load15 {{node}}"),
					q(`mlx_hw_cpu_count{{HW}}`, "CPUs {{node}}")).min0(),
				ts("Memory", "bytes", 12,
					q(`mlx_hw_mem_used_bytes{{HW}}`, "used {{node}}"),
					q(`mlx_hw_mem_total_bytes{{HW}}`, "total {{node}}"),
					q(`mlx_hw_mem_available_bytes{{HW}}`, "available {{node}}"),
					q(`mlx_hw_swap_used_bytes{{HW}}`, "swap used {{node}}")).min0(),
				ts("Free pages (mlx_hw_mem_pressure)", "none", 12, q(`mlx_hw_mem_pressure{{HW}}`, "{{node}}")).min0().
					steps(Step{"red", 0}, Step{"green", 20000}).
					desc("The original's unit: a page count (16 KiB pages on Apple Silicon). MLXMemoryPressureHigh fires under 20000."),
				ts("Kernel memory pressure level", "none", 12, qe(`mlx_hw_mem_pressure_level{{HW}}`, "{{node}}", macOSSysctl)).min0().
					maps(map[string]string{"1": "normal", "2": "warn", "4": "critical"}).
					steps(Step{"green", 0}, Step{"orange", 2}, Step{"red", 4}),
				ts("Disk used", "percentunit", 12, q(`mlx_hw_disk_used_bytes{{HW}} / mlx_hw_disk_total_bytes{{HW}}`, "{{node}}")).ratio().
					steps(Step{"green", 0}, Step{"red", 0.9}),
				ts("CPU temperature", "celsius", 12, qe(`mlx_hw_cpu_temp_celsius{{HW}}`, "{{node}}", sensorOnly)),
			}},
			{"Processes", []Panel{
				ts("mlx_lm.server CPU", "percent", 12, q(`mlx_worker_cpu_percent{{HW}}`, "{{node}}")).min0().
					desc("Percent of one core."),
				ts("mlx_lm.server memory", "bytes", 12, q(`mlx_worker_rss_bytes{{HW}}`, "{{node}}")).min0(),
				ts("Component CPU", "percent", 12, q(`mlx_proc_cpu_percent{{HW}}`, "{{component}} {{node}}")).min0(),
				ts("Component memory", "bytes", 12, q(`mlx_proc_rss_bytes{{HW}}`, "{{component}} {{node}}")).min0(),
			}},
			{"Network (ring interfaces)", []Panel{
				ts("Ring traffic", "Bps", 12,
					q(`rate(mlx_net_rx_bytes_total{{HW}}[{R}])`, "rx {{iface}} {{node}}"),
					q(`rate(mlx_net_tx_bytes_total{{HW}}[{R}])`, "tx {{iface}} {{node}}")).min0().
					desc("macOS: the Thunderbolt bridge members and ports (or ring_interfaces); Linux: every interface but lo."),
				ts("Ring errors", "none", 12,
					q(`rate(mlx_net_rx_errors_total{{HW}}[{R}])`, "rx {{iface}} {{node}}"),
					q(`rate(mlx_net_tx_errors_total{{HW}}[{R}])`, "tx {{iface}} {{node}}")).min0(),
			}},
			{"LLM on this node", []Panel{
				ts("Requests / min", "none", 8, q(`sum by (node) (rate(mlx_requests_total{job="mlx-proxy", node=~"$node"}[{R}])) * 60`, "{{node}}")).min0().
					desc("The proxy runs on rank 0: other nodes serve through the ring and show nothing here."),
				ts("Engine state", "none", 8, q(`max by (node) (mlx_server_state{job="mlx-supervisor", node=~"$node"})`, "{{node}}")).
					maps(map[string]string{"0": "idle", "1": "running", "2": "starting", "3": "backoff"}),
				ts("Engine restarts / h", "none", 8, q(`(sum by (node) (increase(mlx_server_restarts_total{job="mlx-supervisor", node=~"$node"}[1h]))) or vector(0)`, "{{node}}")).min0(),
				table("Node info", 12,
					q(`mlx_hw_cpu_count{{HW}}`, ""),
					q(`mlx_hw_mem_total_bytes{{HW}}`, "")).h(6),
				stat("Active alerts on this node", "none", 12, q(`count(ALERTS{alertstate="firing", node=~"$node"}) or vector(0)`, "firing")).
					steps(Step{"green", 0}, Step{"orange", 1}, Step{"red", 3}),
			}},
			{"GPU and power", []Panel{
				ts("GPU utilization", "percent", 8, qe(`mlx_hw_gpu_utilization_percent{{HW}}`, "{{node}}", macOS)).min0(),
				ts("GPU memory used", "bytes", 8, qe(`mlx_hw_gpu_mem_used_bytes{{HW}}`, "{{node}}", macOS)).min0(),
				ts("Package power", "watt", 8, qe(`mlx_hw_package_power_milliwatts{{HW}} / 1000`, "{{node}}", macOS)).min0(),
			}},
		},
	}
}
