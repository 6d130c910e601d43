package supervisorreceiver

import (
	"testing"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/fleettest"
)

// The engine's log file is a lumberjack.Logger (fleettest.LumberjackMill).
func TestMain(m *testing.M) { fleettest.Main(m, fleettest.LumberjackMill) }
