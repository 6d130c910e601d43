package hwreceiver

import (
	"sort"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/mlx-otelcol/mlx-otelcol/internal/metricbuild"
)

// scopeName is the instrumentation scope of the metrics emitted.
const scopeName = "github.com/mlx-otelcol/mlx-otelcol/receiver/hwreceiver"

// emitOptions are the parts of the configuration that shape the series.
type emitOptions struct {
	node string
	// ring is ring_interfaces; empty means the sample's ringDefault.
	ring []string
	// components are the component label values, in emission order.
	components []string
	worker     string
}

// emitter adds the node label to every point and skips absent values.
type emitter struct {
	b    *metricbuild.Builder
	node string
}

func (e emitter) gauge(name, help string, v *float64, attrs ...string) {
	if v != nil {
		e.b.Gauge(name, help, *v, append([]string{"node", e.node}, attrs...)...)
	}
}

func (e emitter) counter(name, help string, v *float64, attrs ...string) {
	if v != nil {
		e.b.Counter(name, help, *v, append([]string{"node", e.node}, attrs...)...)
	}
}

// buildMetrics turns a sample into series. Names, types and labels of the
// original mlx_hw_telemetry.py are kept; documentation.md lists them all
// with the new ones.
func buildMetrics(s *sample, o emitOptions, start, now time.Time) pmetric.Metrics {
	e := emitter{b: metricbuild.New(scopeName, start, now), node: o.node}

	e.gauge("mlx_hw_up", "1 while the hardware receiver runs.", fp(1))
	for _, src := range sortedKeys(s.sources) {
		e.gauge("mlx_hw_source_up", "1 if the source worked at the last scrape, 0 if it was tried and failed.", fp(metricbuild.Bool(s.sources[src])), "source", src)
	}

	e.gauge("mlx_hw_uptime_seconds", "Seconds since the host booted.", s.uptimeSeconds)
	e.gauge("mlx_hw_load1", "1-minute load average.", s.load1)
	e.gauge("mlx_hw_load5", "5-minute load average.", s.load5)
	e.gauge("mlx_hw_load15", "15-minute load average.", s.load15)
	e.gauge("mlx_hw_cpu_count", "Logical CPUs of the host.", s.cpuCount)
	e.gauge("mlx_hw_disk_total_bytes", "Size of the file system of disk_path.", s.diskTotal)
	e.gauge("mlx_hw_disk_used_bytes", "Bytes used on the file system of disk_path.", s.diskUsed)

	e.gauge("mlx_hw_mem_total_bytes", "Physical memory.", s.memTotal)
	e.gauge("mlx_hw_mem_used_bytes", "Memory in use, caches the kernel can drop at once excluded.", s.memUsed)
	e.gauge("mlx_hw_mem_pressure", "Original unit trap, kept: a page count, free+inactive+speculative pages (macOS) or MemAvailable in pages (Linux).", s.memPressurePages)
	e.gauge("mlx_hw_mem_free_bytes", "Memory on the free list.", s.memFree)
	e.gauge("mlx_hw_mem_available_bytes", "Memory available without swapping: mlx_hw_mem_pressure in bytes.", s.memAvailable)
	e.gauge("mlx_hw_mem_pressure_level", "Kernel memory pressure level: 1 normal, 2 warn, 4 critical.", s.memPressureLevel)
	e.gauge("mlx_hw_swap_total_bytes", "Swap space.", s.swapTotal)
	e.gauge("mlx_hw_swap_used_bytes", "Swap space in use.", s.swapUsed)

	e.gauge("mlx_hw_cpu_temp_celsius", "CPU temperature: mean of the CPU die sensors (Apple Silicon) or the hottest CPU package sensor (Linux).", s.cpuTemp)
	e.gauge("mlx_hw_gpu_temp_celsius", "Apple GPU temperature: mean of the GPU die sensors.", s.gpuTemp)
	for _, r := range s.sensors {
		e.gauge("mlx_hw_sensor_temp_celsius", "Temperature of each sensor the host exposes.", fp(r.celsius), "sensor", r.name)
	}
	level := s.thermalLevel
	if level == nil {
		level = s.thermalLevelPM
	}
	if level != nil {
		e.gauge("mlx_hw_thermal_pressure", "Thermal pressure 0..1: the macOS thermal pressure level divided by 4.", fp(*level/4))
	}
	e.gauge("mlx_hw_thermal_pressure_level", "macOS thermal pressure level: 0 nominal, 1 moderate, 2 heavy, 3 trapping, 4 sleeping.", level)

	e.gauge("mlx_hw_gpu_utilization_percent", "Apple GPU active residency from powermetrics, percent.", s.gpuActivePercent)
	e.gauge("mlx_hw_gpu_frequency_mhz", "Apple GPU active frequency from powermetrics.", s.gpuFreqMHz)
	e.gauge("mlx_hw_gpu_power_milliwatts", "Apple GPU power from powermetrics.", s.gpuPowerMW)
	e.gauge("mlx_hw_package_power_milliwatts", "CPU+GPU+ANE power from powermetrics (its Combined Power).", s.packagePowerMW)
	e.gauge("mlx_hw_cpu_power_milliwatts", "CPU power from powermetrics.", s.cpuPowerMW)
	e.gauge("mlx_hw_ane_power_milliwatts", "Neural Engine power from powermetrics.", s.anePowerMW)
	e.gauge("mlx_hw_gpu_iokit_util_percent", "Apple GPU Device Utilization % from IOKit (ioreg).", s.gpuIOKitUtil)
	e.gauge("mlx_hw_gpu_mem_used_bytes", "GPU memory in use from IOKit (In use system memory).", s.gpuMemUsed)
	e.gauge("mlx_hw_gpu_mem_alloc_bytes", "GPU memory allocated from IOKit (Alloc system memory).", s.gpuMemAlloc)
	if s.gpuIOKitUtil != nil || s.gpuMemUsed != nil || s.gpuMemAlloc != nil {
		e.gauge("mlx_hw_gpu_mem_total_bytes", "Unified memory the GPU shares: hw.memsize.", s.memTotal)
	}
	e.gauge("mlx_hw_gpu_wired_limit_bytes", "GPU wired memory limit set by iogpu.wired_limit_mb.", s.gpuWiredLimit)

	for _, g := range s.nvidia {
		id := []string{"gpu", g.index}
		e.gauge("mlx_hw_nvidia_gpu_info", "1 for each NVIDIA GPU, with its model and UUID.", fp(1), "gpu", g.index, "name", g.name, "uuid", g.uuid)
		e.gauge("mlx_hw_nvidia_gpu_utilization_ratio", "NVIDIA GPU utilisation, 0..1.", g.utilizationRatio, id...)
		e.gauge("mlx_hw_nvidia_gpu_memory_used_bytes", "NVIDIA GPU memory in use.", g.memUsedBytes, id...)
		e.gauge("mlx_hw_nvidia_gpu_memory_total_bytes", "NVIDIA GPU memory.", g.memTotalBytes, id...)
		e.gauge("mlx_hw_nvidia_gpu_power_watts", "NVIDIA GPU power draw.", g.powerWatts, id...)
		e.gauge("mlx_hw_nvidia_gpu_temp_celsius", "NVIDIA GPU core temperature.", g.tempCelsius, id...)
		e.gauge("mlx_hw_nvidia_gpu_sm_clock_hertz", "NVIDIA GPU SM clock.", g.smClockHz, id...)
		e.gauge("mlx_hw_nvidia_gpu_memory_clock_hertz", "NVIDIA GPU memory clock.", g.memClockHz, id...)
	}

	if s.procs != nil {
		if w, ok := s.procs[o.worker]; ok && o.worker != "" {
			e.gauge("mlx_worker_cpu_percent", "CPU of the worker component's processes, percent of one core.", fp(w.cpuPercent))
			e.gauge("mlx_worker_rss_bytes", "Resident memory of the worker component's processes.", fp(w.rssBytes))
		}
		for _, c := range o.components {
			p := s.procs[c]
			e.gauge("mlx_proc_cpu_percent", "CPU of the component's processes, percent of one core.", fp(p.cpuPercent), "component", c)
			e.gauge("mlx_proc_rss_bytes", "Resident memory of the component's processes.", fp(p.rssBytes), "component", c)
			e.gauge("mlx_proc_count", "Processes matched by the component.", fp(float64(p.count)), "component", c)
		}
	}

	for _, n := range ringCounters(s, o.ring) {
		e.counter("mlx_net_rx_bytes_total", "Bytes received on a ring interface.", n.rxBytes, "iface", n.iface)
		e.counter("mlx_net_tx_bytes_total", "Bytes sent on a ring interface.", n.txBytes, "iface", n.iface)
		e.counter("mlx_net_rx_errors_total", "Receive errors on a ring interface.", n.rxErrors, "iface", n.iface)
		e.counter("mlx_net_tx_errors_total", "Send errors on a ring interface.", n.txErrors, "iface", n.iface)
	}
	return e.b.Emit()
}

// ringCounters picks the ring interfaces out of every interface read: the
// configured ones, else the platform's default set, sorted by name.
func ringCounters(s *sample, configured []string) []netCounters {
	want := configured
	if len(want) == 0 {
		want = s.ringDefault
	}
	set := map[string]bool{}
	for _, n := range want {
		set[n] = true
	}
	var out []netCounters
	for _, n := range s.net {
		if set[n.iface] {
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].iface < out[j].iface })
	return out
}
