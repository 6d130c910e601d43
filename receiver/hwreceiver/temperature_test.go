package hwreceiver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAppleSiliconTemperatures(t *testing.T) {
	// IOHID product names as an M1/M2 prints them.
	cpu, gpu := summarizeTemperatures([]sensorReading{
		{"pACC MTR Temp Sensor0", 50}, {"pACC MTR Temp Sensor1", 54},
		{"eACC MTR Temp Sensor0", 40}, {"GPU MTR Temp Sensor1", 45}, {"GPU MTR Temp Sensor4", 47},
		{"PMU tdie1", 90}, {"NAND CH0 temp", 35}, {"gas gauge battery", 30},
	})
	require.NotNil(t, cpu)
	require.NotNil(t, gpu)
	assert.InDelta(t, 48.0, *cpu, 1e-9, "mean of the pACC/eACC die sensors, PMU left out")
	assert.InDelta(t, 46.0, *gpu, 1e-9)

	// Chips that only name PMU die sensors.
	cpu, gpu = summarizeTemperatures([]sensorReading{{"PMU tdie1", 40}, {"PMU tdie2", 42}, {"PMU tcal", 51}})
	require.NotNil(t, cpu)
	assert.InDelta(t, 41.0, *cpu, 1e-9)
	assert.Nil(t, gpu)
}

func TestLinuxCPUTemperature(t *testing.T) {
	cpu, gpu := summarizeTemperatures([]sensorReading{
		{"coretemp_core_0", 70}, {"coretemp_package_id_0", 60}, {"coretemp_package_id_1", 65},
		{"acpitz", 30}, {"nvme_composite", 40},
	})
	require.NotNil(t, cpu)
	assert.Equal(t, 65.0, *cpu, "the hottest package, not a core")
	assert.Nil(t, gpu)

	cpu, _ = summarizeTemperatures([]sensorReading{{"k10temp_tctl", 70}, {"k10temp_tdie", 60}})
	assert.Equal(t, 60.0, *cpu, "Tdie rather than Tctl, which AMD offsets")

	cpu, _ = summarizeTemperatures([]sensorReading{{"cpu_thermal", 48}})
	assert.Equal(t, 48.0, *cpu, "Raspberry Pi style thermal zone")

	cpu, _ = summarizeTemperatures([]sensorReading{{"acpitz", 30}, {"nvme_composite", 40}})
	assert.Nil(t, cpu, "no CPU sensor, no CPU temperature")
}
