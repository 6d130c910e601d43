//go:build !unix

package supervisorreceiver

import (
	"context"
	"time"
)

func endLeftover(context.Context, runRecord, time.Duration) int { return 0 }
