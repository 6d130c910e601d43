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
	e := emitter{b: metricbuild.New(scopeName, metricUnits, start, now), node: o.node}

	e.gauge(metricMlxHwUp, metricMlxHwUpHelp, fp(1))
	for _, src := range sortedKeys(s.sources) {
		e.gauge(metricMlxHwSourceUp, metricMlxHwSourceUpHelp, fp(metricbuild.Bool(s.sources[src])), "source", src)
	}

	e.gauge(metricMlxHwUptimeSeconds, metricMlxHwUptimeSecondsHelp, s.uptimeSeconds)
	e.gauge(metricMlxHwLoad1, metricMlxHwLoad1Help, s.load1)
	e.gauge(metricMlxHwLoad5, metricMlxHwLoad5Help, s.load5)
	e.gauge(metricMlxHwLoad15, metricMlxHwLoad15Help, s.load15)
	e.gauge(metricMlxHwCpuCount, metricMlxHwCpuCountHelp, s.cpuCount)
	e.gauge(metricMlxHwDiskTotalBytes, metricMlxHwDiskTotalBytesHelp, s.diskTotal)
	e.gauge(metricMlxHwDiskUsedBytes, metricMlxHwDiskUsedBytesHelp, s.diskUsed)

	e.gauge(metricMlxHwMemTotalBytes, metricMlxHwMemTotalBytesHelp, s.memTotal)
	e.gauge(metricMlxHwMemUsedBytes, metricMlxHwMemUsedBytesHelp, s.memUsed)
	e.gauge(metricMlxHwMemPressure, metricMlxHwMemPressureHelp, s.memPressurePages)
	e.gauge(metricMlxHwMemFreeBytes, metricMlxHwMemFreeBytesHelp, s.memFree)
	e.gauge(metricMlxHwMemAvailableBytes, metricMlxHwMemAvailableBytesHelp, s.memAvailable)
	e.gauge(metricMlxHwMemPressureLevel, metricMlxHwMemPressureLevelHelp, s.memPressureLevel)
	e.gauge(metricMlxHwSwapTotalBytes, metricMlxHwSwapTotalBytesHelp, s.swapTotal)
	e.gauge(metricMlxHwSwapUsedBytes, metricMlxHwSwapUsedBytesHelp, s.swapUsed)

	e.gauge(metricMlxHwCpuTempCelsius, metricMlxHwCpuTempCelsiusHelp, s.cpuTemp)
	e.gauge(metricMlxHwGpuTempCelsius, metricMlxHwGpuTempCelsiusHelp, s.gpuTemp)
	for _, r := range s.sensors {
		e.gauge(metricMlxHwSensorTempCelsius, metricMlxHwSensorTempCelsiusHelp, fp(r.celsius), "sensor", r.name)
	}
	level := s.thermalLevel
	if level == nil {
		level = s.thermalLevelPM
	}
	if level != nil {
		e.gauge(metricMlxHwThermalPressure, metricMlxHwThermalPressureHelp, fp(*level/4))
	}
	e.gauge(metricMlxHwThermalPressureLevel, metricMlxHwThermalPressureLevelHelp, level)

	e.gauge(metricMlxHwGpuUtilizationPercent, metricMlxHwGpuUtilizationPercentHelp, s.gpuActivePercent)
	e.gauge(metricMlxHwGpuFrequencyMhz, metricMlxHwGpuFrequencyMhzHelp, s.gpuFreqMHz)
	e.gauge(metricMlxHwGpuPowerMilliwatts, metricMlxHwGpuPowerMilliwattsHelp, s.gpuPowerMW)
	e.gauge(metricMlxHwPackagePowerMilliwatts, metricMlxHwPackagePowerMilliwattsHelp, s.packagePowerMW)
	e.gauge(metricMlxHwCpuPowerMilliwatts, metricMlxHwCpuPowerMilliwattsHelp, s.cpuPowerMW)
	e.gauge(metricMlxHwAnePowerMilliwatts, metricMlxHwAnePowerMilliwattsHelp, s.anePowerMW)
	e.gauge(metricMlxHwGpuIokitUtilPercent, metricMlxHwGpuIokitUtilPercentHelp, s.gpuIOKitUtil)
	e.gauge(metricMlxHwGpuMemUsedBytes, metricMlxHwGpuMemUsedBytesHelp, s.gpuMemUsed)
	e.gauge(metricMlxHwGpuMemAllocBytes, metricMlxHwGpuMemAllocBytesHelp, s.gpuMemAlloc)
	if s.gpuIOKitUtil != nil || s.gpuMemUsed != nil || s.gpuMemAlloc != nil {
		e.gauge(metricMlxHwGpuMemTotalBytes, metricMlxHwGpuMemTotalBytesHelp, s.memTotal)
	}
	e.gauge(metricMlxHwGpuWiredLimitBytes, metricMlxHwGpuWiredLimitBytesHelp, s.gpuWiredLimit)

	for _, g := range s.nvidia {
		id := []string{"gpu", g.index}
		e.gauge(metricMlxHwNvidiaGpuInfo, metricMlxHwNvidiaGpuInfoHelp, fp(1), "gpu", g.index, "name", g.name, "uuid", g.uuid)
		e.gauge(metricMlxHwNvidiaGpuUtilizationRatio, metricMlxHwNvidiaGpuUtilizationRatioHelp, g.utilizationRatio, id...)
		e.gauge(metricMlxHwNvidiaGpuMemoryUsedBytes, metricMlxHwNvidiaGpuMemoryUsedBytesHelp, g.memUsedBytes, id...)
		e.gauge(metricMlxHwNvidiaGpuMemoryTotalBytes, metricMlxHwNvidiaGpuMemoryTotalBytesHelp, g.memTotalBytes, id...)
		e.gauge(metricMlxHwNvidiaGpuPowerWatts, metricMlxHwNvidiaGpuPowerWattsHelp, g.powerWatts, id...)
		e.gauge(metricMlxHwNvidiaGpuTempCelsius, metricMlxHwNvidiaGpuTempCelsiusHelp, g.tempCelsius, id...)
		e.gauge(metricMlxHwNvidiaGpuSmClockHertz, metricMlxHwNvidiaGpuSmClockHertzHelp, g.smClockHz, id...)
		e.gauge(metricMlxHwNvidiaGpuMemoryClockHertz, metricMlxHwNvidiaGpuMemoryClockHertzHelp, g.memClockHz, id...)
	}

	if s.procs != nil {
		if w, ok := s.procs[o.worker]; ok && o.worker != "" {
			e.gauge(metricMlxWorkerCpuPercent, metricMlxWorkerCpuPercentHelp, fp(w.cpuPercent))
			e.gauge(metricMlxWorkerRssBytes, metricMlxWorkerRssBytesHelp, fp(w.rssBytes))
		}
		for _, c := range o.components {
			p := s.procs[c]
			e.gauge(metricMlxProcCpuPercent, metricMlxProcCpuPercentHelp, fp(p.cpuPercent), "component", c)
			e.gauge(metricMlxProcRssBytes, metricMlxProcRssBytesHelp, fp(p.rssBytes), "component", c)
			e.gauge(metricMlxProcCount, metricMlxProcCountHelp, fp(float64(p.count)), "component", c)
		}
	}

	for _, n := range ringCounters(s, o.ring) {
		e.counter(metricMlxNetRxBytesTotal, metricMlxNetRxBytesTotalHelp, n.rxBytes, "iface", n.iface)
		e.counter(metricMlxNetTxBytesTotal, metricMlxNetTxBytesTotalHelp, n.txBytes, "iface", n.iface)
		e.counter(metricMlxNetRxErrorsTotal, metricMlxNetRxErrorsTotalHelp, n.rxErrors, "iface", n.iface)
		e.counter(metricMlxNetTxErrorsTotal, metricMlxNetTxErrorsTotalHelp, n.txErrors, "iface", n.iface)
	}
	links := ringLinks(s, o.ring)
	names := make([]string, 0, len(links))
	for n := range links {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		e.gauge(metricMlxNetLinkUp, metricMlxNetLinkUpHelp, fp(links[n]), "iface", n)
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
