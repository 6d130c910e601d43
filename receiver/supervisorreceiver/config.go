package supervisorreceiver

import (
	"errors"
	"fmt"
	"go.opentelemetry.io/collector/component"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"go.opentelemetry.io/collector/scraper/scraperhelper"

	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet"
)

// Probe kinds for health_check.probe.
const (
	// ProbeCompletion sends a max_tokens: 1 chat completion: it only succeeds
	// once the model is loaded and the generation loop answers.
	ProbeCompletion = "completion"
	// ProbeModels asks GET /v1/models and requires the model to be listed.
	// mlx_lm answers it before the model is loaded: a weaker signal.
	ProbeModels = "models"
	// ProbeHealth asks GET /health, which mlx_lm answers as soon as the HTTP
	// server is up. The weakest signal.
	ProbeHealth = "health"
)

// Config of the mlx_supervisor receiver.
type Config struct {
	scraperhelper.ControllerConfig `mapstructure:",squash"`

	// Command is the engine's argv. Empty means attach mode: the engine is
	// started elsewhere and only watched through Endpoint.
	Command []string `mapstructure:"command"`
	// Env is set in the engine's environment. The engine gets only these,
	// the variables named in EnvPassthrough, and the few of the
	// collector's environment a Python program, MLX and the Hugging Face
	// hub read (PATH, HOME, LANG, HF_*, MLX_*, ...: enginelog.go), so the
	// collector's exporter credentials stay out of it.
	Env map[string]string `mapstructure:"env"`
	// EnvPassthrough names more variables of the collector's environment
	// the engine gets (a name ending in "_" is a prefix).
	EnvPassthrough []string `mapstructure:"env_passthrough"`
	// WorkingDir is the engine's working directory ("" keeps the collector's).
	WorkingDir string `mapstructure:"working_dir"`
	// Endpoint is the engine's base URL, for probes.
	Endpoint string `mapstructure:"endpoint"`
	// Model is the model id the models probe looks for in /v1/models, and
	// the model label of mlx_model_loaded. Default: the value of --model in
	// Command.
	Model string `mapstructure:"model"`

	// RunFile is where the running engine's process group is recorded, so
	// that the next start ends an engine a killed collector left behind
	// (runrecord.go). Default: log.path with .run.json for its extension
	// (server.log: server.run.json).
	RunFile string `mapstructure:"run_file"`

	Log         LogConfig         `mapstructure:"log"`
	HealthCheck HealthCheckConfig `mapstructure:"health_check"`
	Restart     RestartConfig     `mapstructure:"restart"`
	// StartupTimeout: a started engine that is not ready this long after
	// its start is stopped and restarted with back-off (reason
	// model_load_failed when its log says the load failed, else
	// startup_timeout). mlx_lm never exits when its start fails (a failed
	// load kills only its generation thread; a failed bind leaves the
	// interpreter waiting for that thread): their tracebacks end it sooner
	// (threadwatch.go), and this ends a start that hangs without one. The default, 20 minutes, leaves room for a
	// first download of the model (Qwen3-4B-4bit is 2.3 GB: 15 minutes at
	// 20 Mbit/s) and its load; a failed load is seen sooner, by its
	// traceback (threadwatch.go). 0 disables.
	StartupTimeout time.Duration `mapstructure:"startup_timeout"`
	// ShutdownGracePeriod is how long the engine has between SIGTERM and
	// SIGKILL when the collector stops or a hung engine is replaced.
	ShutdownGracePeriod time.Duration `mapstructure:"shutdown_grace_period"`
	// Agent is where the role keeps its start counts (internal/fleet).
	Agent fleet.Config `mapstructure:"agent"`
}

// LogConfig says where the engine's stdout and stderr go.
type LogConfig struct {
	// Path of the server log. In attach mode it is only read, followed as
	// the engine appends to it, for a thread's death and its reason
	// (follow.go); it may be empty.
	Path string `mapstructure:"path"`
	// MaxSizeMiB rotates the file when it grows past this size.
	MaxSizeMiB int `mapstructure:"max_size_mib"`
	// MaxBackups is how many rotated files are kept.
	MaxBackups int `mapstructure:"max_backups"`
}

// HealthCheckConfig drives the readiness and health probes.
type HealthCheckConfig struct {
	Probe    string        `mapstructure:"probe"`
	Interval time.Duration `mapstructure:"interval"`
	// StartupInterval is the probe interval while the engine is not ready
	// yet, so readiness is seen soon after the model loads.
	StartupInterval time.Duration `mapstructure:"startup_interval"`
	Timeout         time.Duration `mapstructure:"timeout"`
	// HangAfter: an engine that was ready, is still running, has failed
	// every probe for this long, and has shown no progress for this long
	// either, is killed and restarted (reason "hung"). Progress is a line
	// of its output, or stream bytes through the ProgressFrom proxy: a
	// busy engine (a long unbatchable request holds mlx_lm's one
	// generation thread, and the probe waits) is not hung. 0 disables.
	HangAfter time.Duration `mapstructure:"hang_after"`
	// BusyLimit: while completion requests wait in the ProgressFrom proxy
	// and /health answers, a silent engine counts as busy, not hung, for
	// up to this long (a long non-streamed generation prints nothing until
	// it ends). Past it, with no progress, it is hung all the same: a
	// wedged generation thread looks busy from outside, and under steady
	// load requests are always waiting. The default is the proxy's own
	// timeouts.upstream_response_header (10m), after which the proxy gives
	// up on such a request anyway.
	BusyLimit time.Duration `mapstructure:"busy_limit"`
	// ProgressFrom is the mlx_proxy extension whose relayed stream bytes
	// prove the engine alive; used when it is running.
	ProgressFrom component.ID `mapstructure:"progress_from"`
}

// RestartConfig is the backoff between restarts after a crash.
type RestartConfig struct {
	Enabled        bool          `mapstructure:"enabled"`
	InitialBackoff time.Duration `mapstructure:"initial_backoff"`
	MaxBackoff     time.Duration `mapstructure:"max_backoff"`
	// ResetAfter: a process that ran this long before it exited starts the
	// backoff again from InitialBackoff.
	ResetAfter time.Duration `mapstructure:"reset_after"`
}

// SpawnMode says whether the receiver runs the engine itself.
func (c *Config) SpawnMode() bool { return len(c.Command) > 0 }

// Validate checks the configuration; the collector calls it at startup and
// in `mlx-otelcol validate`.
func (c *Config) Validate() error {
	var errs []error
	if c.Endpoint == "" {
		errs = append(errs, errors.New("endpoint: must be set (the engine's base URL, e.g. http://127.0.0.1:8081)"))
	} else if u, err := url.Parse(c.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("endpoint: %q is not an http(s) URL", c.Endpoint))
	}
	if len(c.Command) > 0 && c.Command[0] == "" {
		errs = append(errs, errors.New("command: the first element (the program) is empty"))
	}
	if c.SpawnMode() && c.Log.Path == "" {
		errs = append(errs, errors.New("log.path: must be set in spawn mode (the engine's stdout and stderr go there)"))
	}
	if c.Log.MaxSizeMiB <= 0 {
		errs = append(errs, fmt.Errorf("log.max_size_mib: must be positive, got %d", c.Log.MaxSizeMiB))
	}
	if c.Log.MaxBackups < 1 {
		errs = append(errs, fmt.Errorf("log.max_backups: must be at least 1 (0 would keep every rotated file), got %d", c.Log.MaxBackups))
	}
	switch c.HealthCheck.Probe {
	case ProbeCompletion, ProbeModels, ProbeHealth:
	default:
		errs = append(errs, fmt.Errorf("health_check.probe: %q is not one of completion, models, health", c.HealthCheck.Probe))
	}
	errs = append(errs,
		positive("health_check.interval", c.HealthCheck.Interval),
		positive("health_check.startup_interval", c.HealthCheck.StartupInterval),
		positive("health_check.timeout", c.HealthCheck.Timeout),
		notNegative("health_check.hang_after", c.HealthCheck.HangAfter),
		notNegative("health_check.busy_limit", c.HealthCheck.BusyLimit),
		positive("restart.initial_backoff", c.Restart.InitialBackoff),
		positive("restart.max_backoff", c.Restart.MaxBackoff),
		notNegative("restart.reset_after", c.Restart.ResetAfter),
		notNegative("startup_timeout", c.StartupTimeout),
		positive("shutdown_grace_period", c.ShutdownGracePeriod),
	)
	if c.Restart.MaxBackoff > 0 && c.Restart.MaxBackoff < c.Restart.InitialBackoff {
		errs = append(errs, fmt.Errorf("restart.max_backoff (%s) is below restart.initial_backoff (%s)", c.Restart.MaxBackoff, c.Restart.InitialBackoff))
	}
	return errors.Join(errs...)
}

func positive(name string, d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("%s: must be positive, got %s", name, d)
	}
	return nil
}

func notNegative(name string, d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("%s: must not be negative, got %s", name, d)
	}
	return nil
}

// runFile is RunFile, or its default named after the server log.
func (c *Config) runFile() string { return RunFile(c.RunFile, c.Log.Path) }

// RunFile is where a supervisor with run_file runFile and log.path logPath
// records its engine: runFile, or by default logPath with .run.json for its
// extension (server.log: server.run.json), so that supervisors with logs of
// their own have records of their own. The preflight reads the same file.
func RunFile(runFile, logPath string) string {
	if runFile != "" || logPath == "" {
		return runFile
	}
	return strings.TrimSuffix(logPath, filepath.Ext(logPath)) + ".run.json"
}

// modelName is the model label: the configured model, else --model from the
// command line, else mlx_lm's own default name.
func (c *Config) modelName() string {
	if c.Model != "" {
		return c.Model
	}
	for i, a := range c.Command {
		if a == "--model" && i+1 < len(c.Command) {
			return c.Command[i+1]
		}
		if len(a) > len("--model=") && a[:len("--model=")] == "--model=" {
			return a[len("--model="):]
		}
	}
	return defaultModel
}

// defaultModel is the name mlx_lm gives a request without a model.
const defaultModel = "default_model"
