package loghealthreceiver

import (
	"testing"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/fleettest"
)

func TestMain(m *testing.M) { fleettest.Main(m) }
