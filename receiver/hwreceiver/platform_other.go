//go:build !darwin && !linux

package hwreceiver

var platformCommandDirs []string

// platformSources elsewhere: what gopsutil reads the same way everywhere.
// The distribution ships for macOS and Linux; this keeps the package
// building on other systems.
func platformSources(cfg *Config, _, _ *commandRunner, _ *procMatcher) ([]*source, []slowSource) {
	return commonSources(cfg), nil
}
