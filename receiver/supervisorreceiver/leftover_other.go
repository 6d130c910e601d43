//go:build !unix

package supervisorreceiver

import (
	"context"
	"time"
)

func endLeftover(context.Context, runRecord, time.Duration) int { return 0 }

func processStart(int) int64 { return 0 }

func ownerRuns(runRecord) bool { return false }

// LeftoverEngine: no engine is spawned on this system.
func LeftoverEngine(string) bool { return false }
