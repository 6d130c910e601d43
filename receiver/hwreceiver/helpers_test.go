package hwreceiver

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// fixture is the path of a recorded command output of the applesrc tests.
func fixture(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("internal", "applesrc", "testdata", name))
	require.NoError(t, err)
	require.FileExists(t, p)
	return p
}

// fakeCommands writes each script as an executable named after its key in
// a new directory, and makes that directory the only one on PATH besides
// /usr/bin and /bin (the scripts need cat, sleep and sh).
func fakeCommands(t testing.TB, scripts map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range scripts {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	}
	t.Setenv("PATH", dir+":/usr/bin:/bin")
	return dir
}

// catScript prints a fixture.
func catScript(path string) string { return "exec cat '" + path + "'" }

// points flattens metrics into "name{k=v,...}" → value, node left out of
// the key (every point must carry it: checked here).
func points(t testing.TB, md pmetric.Metrics, node string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	forEachPoint(md, func(m pmetric.Metric, dp pmetric.NumberDataPoint) {
		n, ok := dp.Attributes().Get("node")
		require.True(t, ok, "%s has a node label", m.Name())
		require.Equal(t, node, n.Str(), m.Name())
		var kv []string
		dp.Attributes().Range(func(k string, v pcommon.Value) bool {
			if k != "node" {
				kv = append(kv, k+"="+v.Str())
			}
			return true
		})
		sort.Strings(kv)
		key := m.Name()
		if len(kv) > 0 {
			key += "{" + strings.Join(kv, ",") + "}"
		}
		_, dup := out[key]
		require.False(t, dup, "series %s emitted twice", key)
		out[key] = dp.DoubleValue()
	})
	return out
}

func forEachPoint(md pmetric.Metrics, f func(pmetric.Metric, pmetric.NumberDataPoint)) {
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				var dps pmetric.NumberDataPointSlice
				switch m.Type() {
				case pmetric.MetricTypeGauge:
					dps = m.Gauge().DataPoints()
				case pmetric.MetricTypeSum:
					dps = m.Sum().DataPoints()
				default:
					continue
				}
				for l := 0; l < dps.Len(); l++ {
					f(m, dps.At(l))
				}
			}
		}
	}
}

// metricNames are the names of the metrics in md, sorted.
func metricNames(md pmetric.Metrics) []string {
	seen := map[string]bool{}
	forEachPoint(md, func(m pmetric.Metric, _ pmetric.NumberDataPoint) { seen[m.Name()] = true })
	return sortedKeys(seen)
}

// testConfig is the default configuration with short timeouts.
func testConfig() *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.Node = "test-node"
	return cfg
}
