package jsonlexporter

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/fleettest"
)

// TestMain fails the tests when a goroutine outlives them: Shutdown stops
// every goroutine Start began, but for lumberjack's (the rotating file),
// which cannot be stopped (fleettest.LumberjackMill).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m, fleettest.LumberjackMill) }
