package supervisorreceiver

import (
	"maps"
	"sync"
	"sync/atomic"
	"time"
)

// Values of mlx_server_state, as the original supervisor defined them.
const (
	stateIdle     = 0
	stateRunning  = 1
	stateStarting = 2
	stateBackoff  = 3
)

// status is what the runner and the prober know, read by each scrape.
type status struct {
	mu sync.Mutex

	procUp     bool      // spawn mode: the engine process is running
	procSince  time.Time // when the running process started
	inBackoff  bool
	backoff    time.Duration
	restarts   int64
	crashes    map[string]int64
	lastReason string // "" until the first crash
	lastExit   int

	httpUp     bool      // attach mode: /health answered
	httpSince  time.Time // when /health started answering
	ready      bool
	readyOnce  bool // ready at least once since the process started
	failingFor time.Time
	checks     map[string]int64
	// logWriteErrors counts writes to the engine's log that failed.
	logWriteErrors int64
	// panics counts recovered panics by loop (runner, prober).
	panics map[string]int64
	// lastOutput is when the engine last wrote (Unix nanoseconds; progress
	// proof). Atomic: every write of the engine's output sets it.
	lastOutput atomic.Int64

	// started is signalled when a new engine process starts, so the prober
	// does not sleep through a restart on the long interval.
	started chan struct{}
}

func newStatus() *status {
	return &status{crashes: map[string]int64{}, checks: map[string]int64{}, panics: map[string]int64{}, started: make(chan struct{}, 1)}
}

// snapshot is a consistent copy for one scrape.
type snapshot struct {
	state      int
	up, ready  bool
	uptime     time.Duration
	backoff    time.Duration
	restarts   int64
	crashes    map[string]int64
	lastReason string
	lastExit   int
	checks     map[string]int64
	logErrors  int64
	panics     map[string]int64
}

func (s *status) snapshot(spawn bool, now time.Time) snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := snapshot{
		ready:      s.ready,
		backoff:    s.backoff,
		restarts:   s.restarts,
		lastReason: s.lastReason,
		lastExit:   s.lastExit,
		crashes:    copyCounts(s.crashes),
		checks:     copyCounts(s.checks),
		logErrors:  s.logWriteErrors,
		panics:     maps.Clone(s.panics),
	}
	since := s.httpSince
	snap.up = s.httpUp
	if spawn {
		snap.up, since = s.procUp, s.procSince
	}
	if snap.up {
		snap.uptime = now.Sub(since)
	}
	switch {
	case s.inBackoff:
		snap.state = stateBackoff
	case snap.up && s.ready:
		snap.state = stateRunning
	case snap.up || (spawn && s.procUp):
		snap.state = stateStarting
	default:
		snap.state = stateIdle
	}
	return snap
}

func copyCounts(m map[string]int64) map[string]int64 {
	c := make(map[string]int64, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
