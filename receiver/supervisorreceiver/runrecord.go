package supervisorreceiver

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// The run record: which process group the running engine is, written to
// the data directory before the supervisor waits on it, so that the next
// collector can end an engine that a killed collector left behind (macOS has
// no parent-death signal, and Linux's only reaches the direct child, not
// the ranks mlx.launch starts).

// runTokenEnv is set in the engine's environment, with a value new for every
// run. Every process the engine starts inherits it: it is how a leftover
// process is known to be ours, never its name.
const runTokenEnv = "MLX_OTELCOL_ENGINE_RUN"

// runRecord is the file's content.
type runRecord struct {
	PGID    int       `json:"pgid"`
	Argv    []string  `json:"argv"`
	Token   string    `json:"token"`
	Started time.Time `json:"started"`
	// Owner is the collector that runs the engine: a record whose owner
	// still runs is not a leftover, whoever reads it.
	Owner processID `json:"owner"`
}

// processID names a process beyond its pid, which the system reuses: the
// pid and its start time (Unix milliseconds, as gopsutil reads it).
type processID struct {
	PID   int   `json:"pid"`
	Start int64 `json:"start_ms"`
}

// self is this collector.
func self() processID {
	return processID{PID: os.Getpid(), Start: processStart(os.Getpid())}
}

// newRunToken is a random value for runTokenEnv.
func newRunToken() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// writeRunRecord replaces path with rec atomically (a reader never sees half
// a record).
func writeRunRecord(path string, rec runRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// readRunRecord reads path; ok is false when there is none.
func readRunRecord(path string) (rec runRecord, ok bool, err error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return rec, false, nil
	}
	if err != nil {
		return rec, false, err
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, false, fmt.Errorf("%s: %w", path, err)
	}
	if rec.PGID <= 1 {
		return rec, false, fmt.Errorf("%s: pgid %d is not an engine's", path, rec.PGID)
	}
	return rec, true, nil
}
