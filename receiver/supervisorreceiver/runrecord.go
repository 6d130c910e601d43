package supervisorreceiver

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// The run record: which process group the running engine is, written to
// the data directory before the supervisor waits on it, so that the next
// collector can end an engine that a killed collector left behind (macOS has
// no parent-death signal, and Linux's only reaches the direct child, not
// the ranks mlx.launch starts).
//
// The record decides which processes get signalled, so it is believed only
// when nobody else could have written it: a regular file (no symlink, FIFO
// or device), owned by this collector's user, readable by it alone, at most
// maxRunRecord bytes, in a directory that is ours and that group and others
// cannot write (runrecord_unix.go). Anything else is refused and logged,
// and no leftover is looked for.

// runTokenEnv is set in the engine's environment, with a value new for every
// run. Every process the engine starts inherits it: it is how a leftover
// process is known to be ours, never its name.
const runTokenEnv = "MLX_OTELCOL_ENGINE_RUN"

// maxRunRecord bounds a record's size: a real one is a few hundred bytes,
// and a link to /dev/zero must not fill memory.
const maxRunRecord = 64 << 10

// runRecord is the file's content.
type runRecord struct {
	PGID int      `json:"pgid"`
	Argv []string `json:"argv"`
	// LeaderStart is the start time of the group's leader (the engine
	// process, pid == pgid), Unix milliseconds: a leader with another start
	// time means the system gave the pgid to someone else since.
	LeaderStart int64     `json:"leader_start_ms,omitempty"`
	Token       string    `json:"token"`
	Started     time.Time `json:"started"`
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
// a record). The temporary file is created new (O_EXCL, 0600: a planted file
// or symlink of that name is never written through) and synced before the
// rename, so a crash leaves the old record or the new one.
func writeRunRecord(path string, rec runRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := checkRecordDir(dir); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}

// readRunRecord reads path; ok is false when there is none. A record that
// is not provably this user's own (see above) is an error, never read.
func readRunRecord(path string) (rec runRecord, ok bool, err error) {
	if err := checkRecordDir(filepath.Dir(path)); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return rec, false, nil
		}
		return rec, false, err
	}
	f, err := openRecord(path)
	if errors.Is(err, os.ErrNotExist) {
		return rec, false, nil
	}
	if err != nil {
		return rec, false, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxRunRecord+1))
	if err != nil {
		return rec, false, err
	}
	if len(b) > maxRunRecord {
		return rec, false, fmt.Errorf("%s: over %d KiB, not a run record", path, maxRunRecord>>10)
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, false, fmt.Errorf("%s: %w", path, err)
	}
	if rec.PGID <= 1 {
		return rec, false, fmt.Errorf("%s: pgid %d is not an engine's", path, rec.PGID)
	}
	return rec, true, nil
}
