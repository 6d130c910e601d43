//go:build linux

package hwreceiver

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shirou/gopsutil/v4/common"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func withHostProc(root string) context.Context {
	return context.WithValue(context.Background(), common.EnvKey, common.EnvMap{common.HostProcEnvKey: root})
}

func TestMeminfoSource(t *testing.T) {
	proc := t.TempDir()
	writeTree(t, proc, map[string]string{"meminfo": `MemTotal:       24684084 kB
MemFree:        21773372 kB
MemAvailable:   23911168 kB
Buffers:          102400 kB
Cached:          1843200 kB
SwapCached:            0 kB
Active:           900000 kB
Inactive:         800000 kB
SwapTotal:       2097148 kB
SwapFree:        1048572 kB
SReclaimable:      51200 kB
`})
	apply, err := meminfoSource(4096)(withHostProc(proc))
	require.NoError(t, err)
	s := newSample()
	apply(s)
	assert.Equal(t, 24684084.0*1024, *s.memTotal)
	assert.Equal(t, 21773372.0*1024, *s.memFree)
	assert.Equal(t, 23911168.0*1024, *s.memAvailable)
	assert.Equal(t, (24684084.0-23911168.0)*1024, *s.memUsed, "used = total - available")
	assert.Equal(t, 23911168.0*1024/4096, *s.memPressurePages, "the original's unit: pages")
	assert.Equal(t, 2097148.0*1024, *s.swapTotal)
	assert.Equal(t, (2097148.0-1048572.0)*1024, *s.swapUsed)
}

func TestMeminfoSourceFailsWithoutProc(t *testing.T) {
	_, err := meminfoSource(4096)(withHostProc(t.TempDir()))
	assert.Error(t, err)
}

func TestNetdevSource(t *testing.T) {
	proc := t.TempDir()
	writeTree(t, proc, map[string]string{"net/dev": `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 1182578    4947    0    0    0     0          0         0  1182578    4947    0    0    0     0       0          0
  eth0: 491372078   34210    2    0    0     0          0         0  2782792   26498    5    0    0     0       0          0
enp1s0f0: 98765432109 1000 3 0 0 0 0 0 87654321098 900 1 0 0 0 0 0
`})
	apply, err := netdevSource(withHostProc(proc))
	require.NoError(t, err)
	s := newSample()
	apply(s)
	assert.Equal(t, []string{"eth0", "enp1s0f0"}, s.ringDefault, "every interface but lo")
	ring := ringCounters(s, nil)
	require.Len(t, ring, 2)
	assert.Equal(t, "enp1s0f0", ring[0].iface)
	assert.Equal(t, 98765432109.0, *ring[0].rxBytes)
	assert.Equal(t, 87654321098.0, *ring[0].txBytes)
	assert.Equal(t, 2.0, *ring[1].rxErrors)
	assert.Equal(t, 5.0, *ring[1].txErrors)
}

func TestProcessCPUPercent(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	p := newProcfsSource(newProcMatcher(testConfig(), 1), time.Now)

	first := cpuMark{createTime: start.UnixMilli(), cpuSeconds: 30, at: start.Add(60 * time.Second)}
	assert.Equal(t, 50.0, p.cpuPercent(7, first), "first sight: the average since the process started")

	p.prev = map[int32]cpuMark{7: first}
	next := cpuMark{createTime: first.createTime, cpuSeconds: 45, at: first.at.Add(10 * time.Second)}
	assert.Equal(t, 150.0, p.cpuPercent(7, next), "1.5 cores over the interval")

	reused := cpuMark{createTime: first.createTime + 1000, cpuSeconds: 1, at: next.at}
	reused.at = time.UnixMilli(reused.createTime).Add(4 * time.Second)
	assert.Equal(t, 25.0, p.cpuPercent(7, reused), "a reused pid starts again")
}

// writeTree creates files under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(root, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(body), 0o644))
	}
}

func withHostSys(root string) context.Context {
	return context.WithValue(context.Background(), common.EnvKey, common.EnvMap{common.HostSysEnvKey: root})
}

func TestTemperatureSourceReadsHwmon(t *testing.T) {
	sys := t.TempDir()
	writeTree(t, sys, map[string]string{
		"class/hwmon/hwmon0/name":        "coretemp\n",
		"class/hwmon/hwmon0/temp1_label": "Package id 0\n",
		"class/hwmon/hwmon0/temp1_input": "61000\n",
		"class/hwmon/hwmon0/temp2_label": "Core 0\n",
		"class/hwmon/hwmon0/temp2_input": "58000\n",
		"class/hwmon/hwmon1/name":        "nvme\n",
		"class/hwmon/hwmon1/temp1_label": "Composite\n",
		"class/hwmon/hwmon1/temp1_input": "0\n", // a sensor that is off
	})
	apply, err := temperatureSource(withHostSys(sys))
	require.NoError(t, err)
	s := newSample()
	apply(s)
	require.NotNil(t, s.cpuTemp)
	assert.Equal(t, 61.0, *s.cpuTemp)
	assert.Equal(t, []sensorReading{{"coretemp_core_0", 58}, {"coretemp_package_id_0", 61}}, s.sensors)
}

func TestTemperatureSourceWithoutSensorsDoesNotApply(t *testing.T) {
	_, err := temperatureSource(withHostSys(t.TempDir()))
	assert.ErrorIs(t, err, errNotApplicable)
}
