// Package applesrc holds the parsers of the macOS commands the hardware
// receiver (:9102) reads on Apple Silicon. Each is a pure function over the
// command's stdout, `func ParseX(b []byte) (X, error)`: no exec, no clock,
// no globals. Optional values are pointers (nil = absent, never a silent
// zero); no parser panics or returns NaN/Inf on any input (fuzzed), and
// every number is read by a strict decimal reader that refuses "NaN",
// "Inf", signs, exponents and hex. On error the value returned is the zero
// value; where a format holds independent values, the rule for partial
// input is stated on the function.
//
// What each parser reads:
//
//   - ParsePowermetrics: `powermetrics -n 1 -f text --samplers
//     cpu_power,gpu_power,thermal`. CPU/GPU/ANE/Combined power (mW), GPU
//     active frequency and active/idle residency, per-cluster frequency and
//     residency (E-/P-Cluster, E0-/P0-/P1-Cluster..., S-Cluster), thermal
//     pressure level, sample time and elapsed. With several samples, the
//     last complete one.
//   - ParseVMStat: `vm_stat` page size and every counter; FreeBytes and
//     UsedBytes (macmon's formula).
//   - ParseSysctl: `sysctl hw.memsize vm.swapusage kern.boottime
//     kern.memorystatus_vm_pressure_level hw.perflevel0.logicalcpu
//     hw.perflevel1.logicalcpu machdep.cpu.brand_string
//     iogpu.wired_limit_mb` ("name: value" form); ParseSysctlUint,
//     ParseSwapUsage, ParseBootTime, ParseMemoryPressure for one `sysctl -n`
//     value.
//   - ParseIOReg: `ioreg -r -c IOAccelerator -d 2`, the
//     "PerformanceStatistics" dictionary (device/renderer/tiler
//     utilisation, in-use and allocated system memory) and the
//     accelerator's class (AGXAcceleratorG13X...).
//   - ParsePmsetTherm: `pmset -g therm`; ParseThermalPressureNotify and
//     ParseNotifyutil: `notifyutil -g com.apple.system.thermalpressurelevel`.
//   - ParseNetstat: `netstat -ib`, the <Link#N> row of each interface.
//   - ParseIfconfigBridge: `ifconfig bridge0` members;
//     ParseHardwarePorts: `networksetup -listallhardwareports`;
//     ThunderboltInterfaces: the interfaces that can carry the MLX ring.
//   - ParsePS: `ps -axo pid=,pcpu=,rss=,command=`.
//
// Bugs of the original mlx_hw_telemetry.py that these parsers avoid:
//
//   - (a) pmset printed "CPU_Scheduler_Limit \t= 100" but was read with
//     `CPU_Scheduler_Limit:\s*(\d+)`, which never matched, so thermal
//     pressure was always 0. ParsePmsetTherm reads the "=" form and, on
//     Apple Silicon where only "Note:" lines are printed, returns no value
//     rather than a made-up 0; the thermal pressure level comes from
//     powermetrics' thermal sampler or from notifyutil (0..4, see
//     ThermalPressure).
//   - (b) The temperature came from powermetrics' smc sampler, which exists
//     on Intel only, so it was always NaN. Nothing here reads a temperature
//     from powermetrics, and no parser can produce NaN.
//   - (c) netstat counters were read at fixed fields[6]/fields[9], which
//     shift on rows without an Address column. ParseNetstat counts the
//     columns from the end of the row, at the distance the header gives,
//     uses only <Link#N> rows and de-duplicates by name.
//   - (d) The ring interface was found by looking for `inet 10.0.0.x`.
//     ThunderboltInterfaces finds it from bridge membership and the
//     "Thunderbolt N" hardware ports, with no address assumed.
//   - mlx_hw_mem_pressure was a free page count; VMStat gives bytes
//     (FreeBytes, UsedBytes) and Sysctl the kernel's pressure level.
//   - In ioreg output, "In use system memory (driver)" and the
//     IOReportLegend block repeat the names of the statistics; ParseIOReg
//     tokenises the PerformanceStatistics dictionary and matches whole
//     keys, so neither is ever read in their place.
package applesrc
