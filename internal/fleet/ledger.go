package fleet

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// StateDirEnv and the default state directory: the shipped configs keep
// their data in $MLX_DATA_DIR (./.data), and the roles' start counts go in
// agents/ there, beside file_storage's storage/.
const (
	dataDirEnv      = "MLX_DATA_DIR"
	defaultDataDir  = ".data"
	stateSubdirName = "agents"
)

// DefaultStateDir is where the start counts are kept when no state
// directory is configured: $MLX_DATA_DIR/agents, else ./.data/agents.
func DefaultStateDir() string {
	if d := os.Getenv(dataDirEnv); d != "" {
		return filepath.Join(d, stateSubdirName)
	}
	return filepath.Join(defaultDataDir, stateSubdirName)
}

// record is what the ledger file of a role holds.
type record struct {
	// Starts counts the role's starts, this one included.
	Starts uint64 `json:"starts"`
	// Crashes counts the starts that found Running left set.
	Crashes uint64 `json:"crashes"`
	// Running is set at start and cleared at a clean stop: a start that
	// finds it set follows a run that did not stop cleanly.
	Running bool `json:"running"`
	// PID and Since say which process set Running, for a person reading
	// the file.
	PID   int       `json:"pid,omitempty"`
	Since time.Time `json:"since,omitzero"`
}

// ledger is one role's file in the state directory.
type ledger struct{ path string }

func newLedger(dir, role string) ledger {
	return ledger{path: filepath.Join(dir, role+".json")}
}

// begin counts a start: it reads the file (none: a first start), counts a
// crash when the last run left Running set, and writes the file back with
// Running set.
func (l ledger) begin(now time.Time) (record, error) {
	r, err := l.read()
	if err != nil {
		return record{}, err
	}
	if r.Running {
		r.Crashes++
	}
	r.Starts++
	r.Running, r.PID, r.Since = true, os.Getpid(), now.UTC()
	return r, l.write(r)
}

// end records a clean stop.
func (l ledger) end() error {
	r, err := l.read()
	if err != nil {
		return err
	}
	r.Running, r.PID, r.Since = false, 0, time.Time{}
	return l.write(r)
}

func (l ledger) read() (record, error) {
	var r record
	b, err := os.ReadFile(l.path)
	if errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: %w", l.path, err)
	}
	return r, nil
}

// write replaces the file in one rename, so that a crash while writing
// leaves the old count or the new one, never half a file.
func (l ledger) write(r record) error {
	if err := os.MkdirAll(filepath.Dir(l.path), 0o750); err != nil {
		return err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(l.path), filepath.Base(l.path)+".*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(append(b, '\n'))
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), l.path); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return nil
}
