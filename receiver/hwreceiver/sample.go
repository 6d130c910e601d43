package hwreceiver

// sample holds what one scrape read. Sources fill it; buildMetrics turns
// it into series. A nil pointer (or an empty slice) means no source gave
// the value on this host at this scrape, and its series is not emitted:
// never a made-up 0 or NaN.
type sample struct {
	// sources maps each source tried to whether it worked; it becomes
	// mlx_hw_source_up. Sources that do not apply here are absent.
	sources map[string]bool

	uptimeSeconds         *float64
	load1, load5, load15  *float64
	cpuCount              *float64
	diskTotal, diskUsed   *float64
	memTotal, memUsed     *float64
	memFree, memAvailable *float64
	// memPressurePages is the original's mlx_hw_mem_pressure: pages free,
	// inactive and speculative (macOS) or MemAvailable in pages (Linux).
	memPressurePages *float64
	// memPressureLevel is the kernel's level (macOS: 1 normal, 2 warn, 4
	// critical).
	memPressureLevel    *float64
	swapTotal, swapUsed *float64

	// Temperatures: the CPU and GPU figures are derived from sensors.
	cpuTemp, gpuTemp *float64
	sensors          []sensorReading
	// thermalLevel is macOS's thermal pressure level, 0 (nominal) to 4
	// (sleeping), from notifyutil; thermalLevelPM the same from
	// powermetrics' thermal sampler, used when notifyutil gave nothing.
	thermalLevel, thermalLevelPM *float64

	// Apple GPU and power, from powermetrics (slow cadence).
	gpuActivePercent, gpuFreqMHz *float64
	gpuPowerMW, packagePowerMW   *float64
	cpuPowerMW, anePowerMW       *float64
	// Apple GPU from ioreg's PerformanceStatistics.
	gpuIOKitUtil, gpuMemUsed, gpuMemAlloc *float64
	// gpuWiredLimit is iogpu.wired_limit_mb when set (> 0).
	gpuWiredLimit *float64
	nvidia        []nvidiaGPU

	// procs is nil when the process source failed.
	procs map[string]procStats
	// net holds every interface's counters; the ring interfaces among them
	// are emitted.
	net []netCounters
	// ringDefault is the ring when ring_interfaces is not configured: on
	// macOS what the discovery found (nil when it failed), on Linux every
	// interface but lo.
	ringDefault []string
	// linkUp is every interface's link state (up and running), nil when
	// it could not be read.
	linkUp map[string]bool
}

func newSample() *sample { return &sample{sources: map[string]bool{}} }

type sensorReading struct {
	name    string
	celsius float64
}

// procStats sums the processes of one component.
type procStats struct {
	count      int
	cpuPercent float64
	rssBytes   float64
}

// netCounters are one interface's cumulative counters; nil when the source
// did not print that column.
type netCounters struct {
	iface              string
	rxBytes, txBytes   *float64
	rxErrors, txErrors *float64
}

// nvidiaGPU is one GPU of `nvidia-smi --query-gpu`.
type nvidiaGPU struct {
	index, uuid, name string
	utilizationRatio  *float64
	memUsedBytes      *float64
	memTotalBytes     *float64
	powerWatts        *float64
	tempCelsius       *float64
	smClockHz         *float64
	memClockHz        *float64
}

func fp(v float64) *float64 { return &v }
