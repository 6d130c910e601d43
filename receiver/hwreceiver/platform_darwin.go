//go:build darwin

package hwreceiver

// platformCommandDirs are where macOS keeps the commands read (sysctl,
// ioreg, netstat, networksetup and ifconfig are in /usr/sbin and /sbin,
// which a launchd job's PATH may lack).
var platformCommandDirs = []string{"/usr/bin", "/bin", "/usr/sbin", "/sbin"}

// platformSources on macOS: the commands of the original exporter, with
// gopsutil for load, CPU count and disk, and IOHID for temperatures.
func platformSources(cfg *Config, run, slowRun *commandRunner, procs *procMatcher) ([]*source, []slowSource) {
	fast := append(commonSources(cfg), macOSSources(cfg, run, procs)...)
	var slow []slowSource
	if cfg.Powermetrics.Enabled {
		slow = append(slow, powermetricsSource(cfg.Powermetrics, slowRun))
	}
	return fast, slow
}
