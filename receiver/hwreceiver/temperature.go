package hwreceiver

import (
	"context"
	"sort"
	"strings"

	"github.com/shirou/gopsutil/v4/sensors"
)

// Readings outside this range are a sensor that is off or not wired (IOHID
// reports 0 or -127 for those; hwmon a few drivers report garbage).
const (
	minPlausibleCelsius = 1.0
	maxPlausibleCelsius = 150.0
)

// temperatureSource reads every temperature sensor through gopsutil: on
// Apple Silicon the IOHID temperature services (through purego, without
// cgo), on Linux hwmon's temp*_input files, else the thermal zones. A host
// with no sensor at all (a VM, a container) has nothing to report.
func temperatureSource(ctx context.Context) (func(*sample), error) {
	stats, err := sensors.TemperaturesWithContext(ctx)
	var readings []sensorReading
	seen := map[string]bool{}
	for _, st := range stats {
		if st.SensorKey == "" || seen[st.SensorKey] || st.Temperature < minPlausibleCelsius || st.Temperature > maxPlausibleCelsius {
			continue
		}
		seen[st.SensorKey] = true
		readings = append(readings, sensorReading{name: st.SensorKey, celsius: st.Temperature})
	}
	if len(readings) == 0 {
		if err != nil {
			return nil, err
		}
		return nil, errNotApplicable
	}
	// gopsutil's err here only lists the sensors it could not read (its
	// Warnings); the others are good.
	sort.Slice(readings, func(i, j int) bool { return readings[i].name < readings[j].name })
	cpu, gpu := summarizeTemperatures(readings)
	return func(s *sample) {
		s.sensors = readings
		s.cpuTemp, s.gpuTemp = cpu, gpu
	}, nil
}

// summarizeTemperatures derives the CPU and GPU temperatures from the
// sensors. Names differ by platform and do not overlap:
//
//   - Apple Silicon (IOHID "Product" names): the CPU is the mean of the
//     "pACC/eACC MTR Temp Sensor*" die sensors (M1/M2), else of "PMU tdie*"
//     (later chips); the GPU the mean of "GPU MTR Temp Sensor*". macmon and
//     mactop read the same services.
//   - Linux (hwmon "<chip>_<label>", or the thermal zone type): the hottest
//     CPU package sensor: coretemp's "Package id N", k10temp's Tdie else
//     Tctl, zenpower's Tdie, else the x86_pkg_temp or cpu_thermal zones.
func summarizeTemperatures(rs []sensorReading) (cpu, gpu *float64) {
	byPrefix := func(prefixes ...string) []float64 {
		var v []float64
		for _, r := range rs {
			for _, p := range prefixes {
				if strings.HasPrefix(r.name, p) {
					v = append(v, r.celsius)
					break
				}
			}
		}
		return v
	}
	cpu = mean(byPrefix("pACC MTR Temp Sensor", "eACC MTR Temp Sensor"))
	if cpu == nil {
		cpu = mean(byPrefix("PMU tdie"))
	}
	gpu = mean(byPrefix("GPU MTR Temp Sensor"))
	if cpu != nil {
		return cpu, gpu
	}
	for _, group := range [][]string{
		{"coretemp_package_id_"},
		{"k10temp_tdie", "zenpower_tdie"},
		{"k10temp_tctl"},
		{"x86_pkg_temp", "cpu_thermal", "cpu-thermal", "soc_thermal"},
	} {
		if v := byPrefix(group...); len(v) > 0 {
			return maxOf(v), gpu
		}
	}
	return nil, gpu
}

func mean(v []float64) *float64 {
	if len(v) == 0 {
		return nil
	}
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	return fp(sum / float64(len(v)))
}

func maxOf(v []float64) *float64 {
	m := v[0]
	for _, x := range v[1:] {
		if x > m {
			m = x
		}
	}
	return fp(m)
}
