//go:build linux

package hwreceiver

var platformCommandDirs []string

// platformSources on Linux: /proc and /sys through gopsutil, and
// nvidia-smi where it is installed.
func platformSources(cfg *Config, _, slowRun *commandRunner, procs *procMatcher) ([]*source, []slowSource) {
	fast := append(commonSources(cfg), linuxSources(cfg, procs)...)
	var slow []slowSource
	if cfg.NvidiaSMI.Enabled {
		slow = append(slow, nvidiaSource(slowRun))
	}
	return fast, slow
}
