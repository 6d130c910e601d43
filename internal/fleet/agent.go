package fleet

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Config is the part of a component's config that the contract reads,
// under the key agent.
type Config struct {
	// StateDirectory keeps the role's start and crash counts across the
	// collector's restarts; "" is $MLX_DATA_DIR/agents, else ./.data/agents.
	StateDirectory string `mapstructure:"state_directory"`
}

// Settings describe one role of this collector.
type Settings struct {
	// Role is one of Roles.
	Role string
	// Node is the configured node name; "" is NodeName's default.
	Node string
	// Version is component.BuildInfo.Version (the distribution's).
	Version string
	// Model is the model the role serves or reads (the engine's --model),
	// "" for a role that has none.
	Model string
	// StateDir keeps the start counts; "" is DefaultStateDir().
	StateDir string
}

// Agent is one role's side of the contract: what its series say. Create
// it with the component, Start it with the component's Start and Stop it
// with its Shutdown. Safe for concurrent use.
type Agent struct {
	role, version, model, modelPath string
	ledger                          ledger

	mu       sync.Mutex
	node     string
	started  time.Time
	restarts uint64
	crashes  uint64
	running  bool

	up atomic.Bool
}

// New describes a role; it reads and writes nothing until Start.
func New(s Settings) *Agent {
	dir := s.StateDir
	if dir == "" {
		dir = DefaultStateDir()
	}
	return &Agent{
		role:      s.Role,
		version:   Version(s.Version),
		model:     s.Model,
		modelPath: ModelPath(s.Model),
		ledger:    newLedger(dir, s.Role),
		node:      NodeName(s.Node),
	}
}

// Role is the role's name.
func (a *Agent) Role() string { return a.role }

// Node is the node label of the role's series.
func (a *Agent) Node() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.node
}

// SetNode names the node when the role finds its name only at start (the
// hardware receiver's rank in the ring).
func (a *Agent) SetNode(node string) {
	if node == "" {
		return
	}
	a.mu.Lock()
	a.node = node
	a.mu.Unlock()
}

// SetUp says whether the role works (Roles' doc says what that is).
func (a *Agent) SetUp(up bool) { a.up.Store(up) }

// Start counts the start in the state directory. A state directory that
// cannot be written fails the start: a restart counter that silently
// stays at 0 would hide the crash loop it is there to show.
func (a *Agent) Start(now time.Time) error {
	r, err := a.ledger.begin(now)
	if err != nil {
		return fmt.Errorf("counting the %s role's start in %s: %w", a.role, a.ledger.path, err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.started, a.running = now, true
	a.restarts, a.crashes = r.Starts-1, r.Crashes
	return nil
}

// Stop records a clean stop. Safe without Start, and twice.
func (a *Agent) Stop() error {
	a.up.Store(false)
	a.mu.Lock()
	running := a.running
	a.running = false
	a.mu.Unlock()
	if !running {
		return nil
	}
	return a.ledger.end()
}

// Snapshot is what the series say at one moment.
type Snapshot struct {
	Role, Node, Version, Commit, Model, ModelPath string

	Up       bool
	Uptime   time.Duration
	Restarts uint64
	Crashes  uint64
	// Started is false before Start: the role reports nothing then.
	Started bool
}

// Snapshot reads the role's state at now.
func (a *Agent) Snapshot(now time.Time) Snapshot {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := Snapshot{
		Role: a.role, Node: a.node, Version: a.version, Commit: Commit(),
		Model: a.model, ModelPath: a.modelPath,
		Up: a.up.Load(), Restarts: a.restarts, Crashes: a.crashes, Started: a.running,
	}
	if a.running {
		s.Uptime = max(now.Sub(a.started), 0)
	}
	return s
}

// InfoLabels are the label pairs of mlx_agent_info beyond role and node,
// in order.
func (s Snapshot) InfoLabels() []string {
	return []string{LabelVersion, s.Version, LabelCommit, s.Commit, LabelModel, s.Model, LabelModelPath, s.ModelPath}
}
