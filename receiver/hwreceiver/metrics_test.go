package hwreceiver

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/doccheck"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/fleettest"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/metrictest"
)

// fullSample has every value set, as no single host would.
func fullSample() *sample {
	s := newSample()
	s.sources = map[string]bool{"vm_stat": true, "powermetrics": false}
	for _, p := range []**float64{
		&s.uptimeSeconds, &s.load1, &s.load5, &s.load15, &s.cpuCount, &s.diskTotal, &s.diskUsed,
		&s.memTotal, &s.memUsed, &s.memFree, &s.memAvailable, &s.memPressurePages, &s.memPressureLevel,
		&s.swapTotal, &s.swapUsed, &s.cpuTemp, &s.gpuTemp, &s.thermalLevel,
		&s.gpuActivePercent, &s.gpuFreqMHz, &s.gpuPowerMW, &s.packagePowerMW, &s.cpuPowerMW, &s.anePowerMW,
		&s.gpuIOKitUtil, &s.gpuMemUsed, &s.gpuMemAlloc, &s.gpuWiredLimit,
	} {
		*p = fp(1)
	}
	s.sensors = []sensorReading{{"PMU tdie1", 40}}
	s.nvidia = []nvidiaGPU{{index: "0", uuid: "GPU-1", name: "NVIDIA L4",
		utilizationRatio: fp(0.5), memUsedBytes: fp(1), memTotalBytes: fp(2), powerWatts: fp(3),
		tempCelsius: fp(4), smClockHz: fp(5), memClockHz: fp(6)}}
	s.procs = map[string]procStats{"mlx_lm_server": {count: 1, cpuPercent: 50, rssBytes: 1 << 30}, "mlx_otelcol": {}}
	s.net = []netCounters{{iface: "en1", rxBytes: fp(1), txBytes: fp(2), rxErrors: fp(3), txErrors: fp(4)}}
	s.ringDefault = []string{"en1"}
	s.linkUp = map[string]bool{"en1": true}
	return s
}

var defaultEmit = emitOptions{node: "n1", components: []string{"mlx_lm_server", "mlx_otelcol"}, worker: "mlx_lm_server"}

func TestEmittedMetricsAreThoseDocumented(t *testing.T) {
	documented, err := doccheck.MetadataNames("metadata.yaml")
	require.NoError(t, err)
	md := fleettest.AddRole(buildMetrics(fullSample(), defaultEmit, time.Now(), time.Now()), fleet.RoleHardware)
	assert.Equal(t, documented, metrictest.Names(md))
	assert.NoError(t, doccheck.CheckMetrics("metadata.yaml", md), "types, help texts and labels are metadata.yaml's")
}

func TestCountersAreMonotonicAndTheRestGauges(t *testing.T) {
	md := buildMetrics(fullSample(), defaultEmit, time.Now(), time.Now())
	for _, m := range metrictest.Metrics(md) {
		if strings.HasPrefix(m.Name(), "mlx_net_") && strings.HasSuffix(m.Name(), "_total") {
			require.Equal(t, pmetric.MetricTypeSum, m.Type(), m.Name())
			assert.True(t, m.Sum().IsMonotonic(), m.Name())
			assert.Equal(t, pmetric.AggregationTemporalityCumulative, m.Sum().AggregationTemporality())
			assert.True(t, strings.HasSuffix(m.Name(), "_total"), m.Name())
		} else {
			assert.Equal(t, pmetric.MetricTypeGauge, m.Type(), m.Name())
		}
	}
}

func TestEmptySampleEmitsOnlyUp(t *testing.T) {
	md := buildMetrics(newSample(), defaultEmit, time.Now(), time.Now())
	assert.Equal(t, map[string]float64{"mlx_hw_up": 1}, points(t, md, "n1"))
}

func TestSourceUpAndValues(t *testing.T) {
	p := points(t, buildMetrics(fullSample(), defaultEmit, time.Now(), time.Now()), "n1")
	assert.Equal(t, 1.0, p["mlx_hw_source_up{source=vm_stat}"])
	assert.Equal(t, 0.0, metrictest.Value(t, p, "mlx_hw_source_up{source=powermetrics}"))
	assert.Equal(t, 50.0, p["mlx_worker_cpu_percent"])
	assert.Equal(t, float64(1<<30), p["mlx_worker_rss_bytes"])
	assert.Equal(t, 1.0, p["mlx_proc_count{component=mlx_lm_server}"])
	assert.Equal(t, 0.0, metrictest.Value(t, p, "mlx_proc_count{component=mlx_otelcol}"))
	assert.Equal(t, 40.0, p["mlx_hw_sensor_temp_celsius{sensor=PMU tdie1}"])
	assert.Equal(t, 0.5, p["mlx_hw_nvidia_gpu_utilization_ratio{gpu=0}"])
	assert.Equal(t, 1.0, p["mlx_hw_nvidia_gpu_info{gpu=0,name=NVIDIA L4,uuid=GPU-1}"])
	assert.Equal(t, 2.0, p["mlx_net_tx_bytes_total{iface=en1}"])
	assert.Equal(t, 1.0, p["mlx_hw_gpu_mem_total_bytes"], "unified memory = hw.memsize")
}

func TestThermalPressure(t *testing.T) {
	s := newSample()
	s.thermalLevelPM = fp(1)
	p := points(t, buildMetrics(s, defaultEmit, time.Now(), time.Now()), "n1")
	assert.Equal(t, 0.25, p["mlx_hw_thermal_pressure"], "powermetrics when notifyutil gave nothing")
	assert.Equal(t, 1.0, p["mlx_hw_thermal_pressure_level"])

	s.thermalLevel = fp(2)
	p = points(t, buildMetrics(s, defaultEmit, time.Now(), time.Now()), "n1")
	assert.Equal(t, 0.5, p["mlx_hw_thermal_pressure"], "notifyutil first")
	assert.Equal(t, 2.0, p["mlx_hw_thermal_pressure_level"])
}

func TestGPUMemTotalOnlyWithIOKitFigures(t *testing.T) {
	s := newSample()
	s.memTotal = fp(64 << 30)
	p := points(t, buildMetrics(s, defaultEmit, time.Now(), time.Now()), "n1")
	assert.NotContains(t, p, "mlx_hw_gpu_mem_total_bytes", "no GPU series on a host without ioreg")
}

func TestRingInterfaces(t *testing.T) {
	s := newSample()
	for _, n := range []string{"lo", "eth1", "eth0", "en1"} {
		s.net = append(s.net, netCounters{iface: n, rxBytes: fp(1)})
	}
	s.ringDefault = []string{"eth0", "eth1", "en1"}
	var got []string
	for _, n := range ringCounters(s, nil) {
		got = append(got, n.iface)
	}
	assert.Equal(t, []string{"en1", "eth0", "eth1"}, got, "the default set, sorted")

	got = nil
	for _, n := range ringCounters(s, []string{"lo", "missing"}) {
		got = append(got, n.iface)
	}
	assert.Equal(t, []string{"lo"}, got, "configured names override; absent ones give nothing")

	s.ringDefault = nil
	assert.Empty(t, ringCounters(s, nil), "discovery failed: no ring series")
}

func TestAbsentColumnGivesNoSeries(t *testing.T) {
	s := newSample()
	s.net = []netCounters{{iface: "en1", rxBytes: fp(5)}}
	s.ringDefault = []string{"en1"}
	p := points(t, buildMetrics(s, defaultEmit, time.Now(), time.Now()), "n1")
	assert.Equal(t, 5.0, p["mlx_net_rx_bytes_total{iface=en1}"])
	assert.NotContains(t, p, "mlx_net_rx_errors_total{iface=en1}")
}

func TestEveryMetricSaysWhereItComesFrom(t *testing.T) {
	doc, err := os.ReadFile("documentation.md")
	require.NoError(t, err)
	_, sourcesSection, _ := strings.Cut(string(doc), "## Sources")
	sourcesSection, _, _ = strings.Cut(sourcesSection, "\n## ")
	var sources []string
	for _, m := range regexp.MustCompile("(?m)^\\| `(\\w+)` \\|").FindAllStringSubmatch(sourcesSection, -1) {
		sources = append(sources, m[1])
	}
	require.NotEmpty(t, sources)
	known := map[string]bool{"always": true}
	for _, s := range sources {
		known[s] = true
	}
	presence, err := doccheck.MetadataPlatforms("metadata.yaml", "macOS", "Linux")
	require.NoError(t, err)
	for name, where := range presence {
		assert.NotEmpty(t, where, "%s has a macOS or Linux line", name)
		for osName, line := range where {
			first := strings.Trim(strings.Fields(strings.TrimSuffix(line, ","))[0], "`,")
			assert.True(t, known[first], "%s, %s: %q is a source of the Sources table", name, osName, first)
		}
	}

	meta, err := os.ReadFile("metadata.yaml")
	require.NoError(t, err)
	enum := regexp.MustCompile(`(?m)^    enum: \[([^\]]*)\]`).FindStringSubmatch(string(meta))
	require.NotNil(t, enum)
	inMeta := strings.Split(enum[1], ", ")
	sort.Strings(inMeta)
	sort.Strings(sources)
	assert.Equal(t, sources, inMeta, "metadata.yaml's source enum is the Sources table")
}
