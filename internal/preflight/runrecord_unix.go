//go:build unix

package preflight

import (
	"encoding/json"
	"errors"
	"os"
	"syscall"
)

// liveEngineRecorded says whether the supervisor's run record names a
// process group that still has a process: an engine a killed collector
// left, which still holds the engine's port and which the supervisor ends
// before it starts its own (receiver/supervisorreceiver/runrecord.go).
func liveEngineRecorded(runFile string) bool {
	b, err := os.ReadFile(runFile)
	if err != nil {
		return false
	}
	var rec struct {
		PGID int `json:"pgid"`
	}
	if json.Unmarshal(b, &rec) != nil || rec.PGID <= 1 {
		return false
	}
	err = syscall.Kill(-rec.PGID, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
