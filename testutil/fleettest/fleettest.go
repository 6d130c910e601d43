// Package fleettest keeps the fleet contract's start counts (internal/fleet)
// of a package's tests out of the source tree: without a state directory
// configured they go to $MLX_DATA_DIR/agents, else ./.data/agents, the
// package's folder under go test.
package fleettest

import (
	"os"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/goleak"

	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet"
	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet/fleetmetrics"
)

// Main runs the tests with MLX_DATA_DIR in a temporary directory (Use),
// and fails them when a goroutine outlives them (goleak, with opts): a
// component's Shutdown stops every goroutine its Start began.
func Main(m *testing.M, opts ...goleak.Option) {
	cleanup := Use()
	goleak.VerifyTestMain(m, append(opts, goleak.Cleanup(func(code int) { cleanup(); os.Exit(code) }))...)
}

// LumberjackMill is the one goroutine goleak is told to let outlive a
// test: lumberjack v2.2.1 starts it with a Logger's first file and gives no
// way to stop it (Close leaves it parked on a channel nothing closes), so
// every lumberjack.Logger keeps one, idle, for the life of the process.
var LumberjackMill = goleak.IgnoreTopFunction("gopkg.in/natefinch/lumberjack%2ev2.(*Logger).millRun")

// Use points MLX_DATA_DIR at a new temporary directory for the test
// binary; cleanup removes it.
func Use() (cleanup func()) {
	dir, err := os.MkdirTemp("", "fleettest-")
	if err != nil {
		panic(err)
	}
	if err := os.Setenv("MLX_DATA_DIR", dir); err != nil {
		panic(err)
	}
	return func() { _ = os.RemoveAll(dir) }
}

// Node is the node AddRole stamps.
const Node = "test-node"

// AddRole adds to md what the role's consumer adds to a receiver's batch
// (internal/fleet/fleetmetrics): node on every point and the role's
// mlx_agent_* series, for a test that holds a receiver's whole output to
// its metadata.yaml.
func AddRole(md pmetric.Metrics, role string) pmetric.Metrics {
	fleetmetrics.StampNode(md, Node)
	fleetmetrics.Append(md, fleet.Snapshot{Role: role, Node: Node, Version: fleet.Unknown, Commit: fleet.Unknown, Up: true, Started: true}, time.Now())
	return md
}
