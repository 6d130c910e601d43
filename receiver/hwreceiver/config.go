package hwreceiver

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"time"

	"go.opentelemetry.io/collector/scraper/scraperhelper"

	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet"
)

// Config of the mlx_hw receiver.
type Config struct {
	// collection_interval is the fast cadence: load, memory, disk,
	// processes, network counters, GPU statistics from ioreg.
	scraperhelper.ControllerConfig `mapstructure:",squash"`

	// Node is the value of the node label on every series. Empty means the
	// host name.
	Node string `mapstructure:"node"`
	// SlowInterval is the cadence of the sources that block for about a
	// second (powermetrics on macOS, nvidia-smi on Linux). They run in the
	// background; each scrape emits their last result while it is fresh.
	SlowInterval time.Duration `mapstructure:"slow_interval"`
	// CommandTimeout bounds every command and every source of a scrape, so
	// a hung source never stalls the scrape.
	CommandTimeout time.Duration `mapstructure:"command_timeout"`

	Powermetrics PowermetricsConfig `mapstructure:"powermetrics"`
	NvidiaSMI    ToggleConfig       `mapstructure:"nvidia_smi"`
	// Temperatures reads the temperature sensors: IOHID on Apple Silicon,
	// hwmon and thermal zones on Linux.
	Temperatures ToggleConfig `mapstructure:"temperatures"`

	// RingInterfaces are the interfaces whose counters feed mlx_net_*.
	// Empty: on macOS the members of bridge0 and the "Thunderbolt N"
	// hardware ports; on Linux every interface but lo.
	RingInterfaces []string `mapstructure:"ring_interfaces"`
	// RingHostfile is the MLX ring's hostfile (mlx.launch --hostfile), read
	// at start. This node's rank is the host whose ring address is one of
	// this host's: it names the node (rankN) when node is empty. Unless
	// ring_interfaces is set, the ring interfaces are the ones holding a
	// ring address, looked up at every scrape.
	RingHostfile string `mapstructure:"ring_hostfile"`

	// Processes maps a component name (the component label) to a regular
	// expression matched against each process's full command line.
	Processes map[string]string `mapstructure:"processes"`
	// WorkerComponent is the component whose sums are also emitted as
	// mlx_worker_cpu_percent and mlx_worker_rss_bytes. Empty disables them.
	WorkerComponent string `mapstructure:"worker_component"`
	// SelfComponent is the component name under which the collector's own
	// process is reported (matched by pid, not by pattern). Empty disables.
	SelfComponent string `mapstructure:"self_component"`

	// DiskPath is the file system of mlx_hw_disk_*.
	DiskPath string `mapstructure:"disk_path"`
	// Agent is where the role keeps its start counts (internal/fleet).
	Agent fleet.Config `mapstructure:"agent"`
}

// PowermetricsConfig drives the macOS power, GPU and thermal sampler.
type PowermetricsConfig struct {
	Enabled bool `mapstructure:"enabled"`
	// Sudo runs it as `sudo -n powermetrics`: powermetrics needs root, and
	// -n fails at once, rather than waiting for a password, when sudo is
	// not passwordless for it. Off when the collector runs as root.
	Sudo bool `mapstructure:"sudo"`
}

// ToggleConfig turns an optional source on or off.
type ToggleConfig struct {
	Enabled bool `mapstructure:"enabled"`
}

// Validate checks the configuration; the collector calls it at startup and
// in `mlx-otelcol validate`.
func (c *Config) Validate() error {
	var errs []error
	if c.CollectionInterval <= 0 {
		errs = append(errs, fmt.Errorf("collection_interval: must be positive, got %s", c.CollectionInterval))
	}
	if c.SlowInterval <= 0 {
		errs = append(errs, fmt.Errorf("slow_interval: must be positive, got %s", c.SlowInterval))
	}
	if c.CommandTimeout <= 0 {
		errs = append(errs, fmt.Errorf("command_timeout: must be positive, got %s", c.CommandTimeout))
	} else if c.CollectionInterval > 0 && c.CommandTimeout >= c.CollectionInterval {
		errs = append(errs, fmt.Errorf("command_timeout (%s) must be below collection_interval (%s), or scrapes would overlap", c.CommandTimeout, c.CollectionInterval))
	}
	if c.DiskPath == "" {
		errs = append(errs, errors.New("disk_path: must be set (e.g. /)"))
	}
	for _, name := range c.RingInterfaces {
		if name == "" {
			errs = append(errs, errors.New("ring_interfaces: empty interface name"))
		}
	}
	for _, comp := range sortedKeys(c.Processes) {
		if comp == "" {
			errs = append(errs, errors.New("processes: empty component name"))
			continue
		}
		if comp == c.SelfComponent {
			errs = append(errs, fmt.Errorf("processes.%s: the name is taken by self_component", comp))
		}
		if c.Processes[comp] == "" {
			errs = append(errs, fmt.Errorf("processes.%s: empty pattern", comp))
		} else if _, err := regexp.Compile(c.Processes[comp]); err != nil {
			errs = append(errs, fmt.Errorf("processes.%s: %w", comp, err))
		}
	}
	if c.WorkerComponent != "" {
		if _, ok := c.Processes[c.WorkerComponent]; !ok && c.WorkerComponent != c.SelfComponent {
			errs = append(errs, fmt.Errorf("worker_component: %q is not a key of processes", c.WorkerComponent))
		}
	}
	return errors.Join(errs...)
}

// slowTimeout bounds one run of a slow source: the command timeout plus
// powermetrics' one-second sampling window.
func (c *Config) slowTimeout() time.Duration { return c.CommandTimeout + time.Second }

// staleAfter is the age past which a slow source's last result is no longer
// emitted: two missed runs.
func (c *Config) staleAfter() time.Duration { return 2*c.SlowInterval + c.slowTimeout() }

// compiledProcesses returns the component patterns, compiled; Validate has
// checked them.
func (c *Config) compiledProcesses() []componentPattern {
	var out []componentPattern
	for _, comp := range sortedKeys(c.Processes) {
		out = append(out, componentPattern{name: comp, re: regexp.MustCompile(c.Processes[comp])})
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
