// Package loghealth holds the numbers behind the log pipeline's health series
// (mlx_log_tailer_* on :9106), counted where each event really happens: the
// classification processor counts the lines it saw and the lines it dropped,
// each sink exporter counts what its destination accepted, what it failed to
// deliver and what waits in its queue. The mlx_log_health receiver reads them.
//
// The components of one collector share a Stats through a process-wide
// registry keyed by the `health_key` of their configuration: components
// configured with the same key report into, and read from, the same Stats.
// This is the one piece of state shared between components; it lives for
// the life of the process, so counters survive a pipeline rebuild and start
// from zero at each collector start, as Prometheus counters do.
package loghealth

import (
	"sort"
	"sync"
	"time"
)

// Label values of mlx_log_tailer_dropped_total{reason}.
const (
	// ReasonHTTPFilter: an HTTP access line, dropped because include_http is
	// off (the original's name for it).
	ReasonHTTPFilter = "http_filter"
	// ReasonRateLimit: over the configured rate limit.
	ReasonRateLimit = "rate_limit"
	// ReasonEmpty: a record with an empty body.
	ReasonEmpty = "empty"
	// ReasonQueueFull: a sink's sending queue was full.
	ReasonQueueFull = "queue_full"
	// ReasonExportFailed: a sink gave up on records (retries exhausted, or a
	// permanent error such as a 400 from the destination).
	ReasonExportFailed = "export_failed"
)

// DropReasons lists every reason, in the order the receiver emits them.
var DropReasons = []string{ReasonHTTPFilter, ReasonRateLimit, ReasonEmpty, ReasonQueueFull, ReasonExportFailed}

// LineKey labels mlx_log_tailer_lines_total.
type LineKey struct{ Severity, Category string }

// ShipKey labels mlx_log_tailer_shipped_total.
type ShipKey struct{ Severity, Sink string }

// DropKey labels mlx_log_tailer_dropped_total; Sink is empty for drops made
// by the processor.
type DropKey struct{ Reason, Sink string }

// Stats is the health of one log pipeline.
type Stats struct {
	mu      sync.Mutex
	running int
	lines   map[LineKey]uint64
	shipped map[ShipKey]uint64
	dropped map[DropKey]uint64
	errors  uint64
	queues  map[string]func() (int64, bool)
	start   time.Time
}

var (
	registryMu sync.Mutex
	registry   = map[string]*Stats{}
)

// For returns the Stats of the pipeline named key, creating it on first use.
func For(key string) *Stats {
	registryMu.Lock()
	defer registryMu.Unlock()
	s := registry[key]
	if s == nil {
		s = &Stats{
			lines:   map[LineKey]uint64{},
			shipped: map[ShipKey]uint64{},
			dropped: map[DropKey]uint64{},
			queues:  map[string]func() (int64, bool){},
			start:   time.Now(),
		}
		registry[key] = s
	}
	return s
}

// Forget drops the Stats of key, so that the next For starts from zero. A
// running collector never calls it: its counters must outlive a pipeline
// rebuilt on reload.
func Forget(key string) {
	registryMu.Lock()
	delete(registry, key)
	registryMu.Unlock()
}

// DefaultKey is the health_key of every log pipeline component that does
// not set one: the engine's log.
const DefaultKey = "default"

// ProcessorStarted and ProcessorStopped bracket the life of a classification
// processor: the pipeline is up while at least one runs.
func (s *Stats) ProcessorStarted() { s.mu.Lock(); s.running++; s.mu.Unlock() }

// ProcessorStopped: see ProcessorStarted.
func (s *Stats) ProcessorStopped() {
	s.mu.Lock()
	if s.running > 0 {
		s.running--
	}
	s.mu.Unlock()
}

// AddClassified adds one processor batch: the lines it saw, by (severity,
// category), and the ones it dropped, by reason. Both go in under one lock,
// so no scrape sees a line counted and its drop not yet: lines minus drops
// minus shipped never dips below what is really in flight.
func (s *Stats) AddClassified(lines map[LineKey]uint64, dropped map[string]uint64) {
	s.mu.Lock()
	for k, n := range lines {
		s.lines[k] += n
	}
	for reason, n := range dropped {
		if n > 0 {
			s.dropped[DropKey{Reason: reason}] += n
		}
	}
	s.mu.Unlock()
}

// AddDropped counts n records dropped for reason by sink ("" for the
// processor).
func (s *Stats) AddDropped(reason, sink string, n uint64) {
	if n == 0 {
		return
	}
	s.mu.Lock()
	s.dropped[DropKey{reason, sink}] += n
	s.mu.Unlock()
}

// AddShipped counts records, by severity, that sink's destination accepted.
func (s *Stats) AddShipped(sink string, bySeverity map[string]uint64) {
	s.mu.Lock()
	for sev, n := range bySeverity {
		s.shipped[ShipKey{sev, sink}] += n
	}
	s.mu.Unlock()
}

// AddErrors counts failed export attempts.
func (s *Stats) AddErrors(n uint64) {
	s.mu.Lock()
	s.errors += n
	s.mu.Unlock()
}

// SetQueue registers how to read sink's current queue size; size returns
// false while the queue cannot tell (not started).
func (s *Stats) SetQueue(sink string, size func() (int64, bool)) {
	s.mu.Lock()
	s.queues[sink] = size
	s.mu.Unlock()
}

// RemoveQueue forgets sink's queue (the exporter shut down).
func (s *Stats) RemoveQueue(sink string) {
	s.mu.Lock()
	delete(s.queues, sink)
	s.mu.Unlock()
}

// Snapshot is a consistent copy of a Stats, for one scrape.
type Snapshot struct {
	Up      bool
	Start   time.Time
	Lines   map[LineKey]uint64
	Shipped map[ShipKey]uint64
	Dropped map[DropKey]uint64
	Errors  uint64
	// Queues maps each sink to its queue size; sinks whose queue cannot tell
	// are left out.
	Queues map[string]int64
}

// Snapshot reads every queue size, then copies the counters. In that order
// because a sink counts a batch shipped (or dropped) before the batch leaves
// its queue: a queue read first and found empty means every batch that left
// it is already in the counters, so a scrape never shows records neither
// queued nor shipped nor dropped.
func (s *Stats) Snapshot() Snapshot {
	s.mu.Lock()
	readers := make(map[string]func() (int64, bool), len(s.queues))
	for k, f := range s.queues {
		readers[k] = f
	}
	s.mu.Unlock()
	// Queue sizes are read outside the lock: they call into the exporters.
	queues := map[string]int64{}
	for sink, f := range readers {
		if n, ok := f(); ok {
			queues[sink] = n
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	snap := Snapshot{
		Up:      s.running > 0,
		Start:   s.start,
		Lines:   make(map[LineKey]uint64, len(s.lines)),
		Shipped: make(map[ShipKey]uint64, len(s.shipped)),
		Dropped: make(map[DropKey]uint64, len(s.dropped)),
		Errors:  s.errors,
		Queues:  queues,
	}
	for k, v := range s.lines {
		snap.Lines[k] = v
	}
	for k, v := range s.shipped {
		snap.Shipped[k] = v
	}
	for k, v := range s.dropped {
		snap.Dropped[k] = v
	}
	return snap
}

// Sinks returns the names of the sinks seen in the snapshot (shipped,
// dropped or queued), sorted.
func (s Snapshot) Sinks() []string {
	seen := map[string]bool{}
	for k := range s.Shipped {
		seen[k.Sink] = true
	}
	for k := range s.Dropped {
		if k.Sink != "" {
			seen[k.Sink] = true
		}
	}
	for k := range s.Queues {
		seen[k] = true
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
