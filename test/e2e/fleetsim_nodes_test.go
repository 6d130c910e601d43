//go:build e2e && stack

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The simulated fleet of TestStackFleetSim: N Macs in network namespaces
// (f20-01...), each its own collector on the push path, five of them with
// an incident.

// simModels are the three models the fleet's engines serve, with the
// config.json the proxy and the KV-cache receiver read for each (the
// simulator has no Hugging Face cache; a Llama has no head_dim).
var simModels = []struct{ id, config string }{
	{"mlx-community/Qwen3-4B-4bit", "internal/modelconfig/testdata/qwen3-4b-4bit.json"},
	{"mlx-community/Llama-3.2-3B-Instruct-4bit", "internal/modelconfig/testdata/llama-no-headdim.json"},
	{"mlx-community/Qwen3.5-4B-4bit", "internal/modelconfig/testdata/qwen3.5-4b-hybrid.json"},
}

// The incidents, each on its own node (the author's mock,
// ../shared/reference/fleet.md section 2).
const (
	incWedged   = "wedged"    // the engine's generation thread stalls: up, not ready
	incRoleDown = "role down" // the KV-cache role cannot read the engine's log
	incCrash    = "crash loop"
	incDark     = "dark" // the node's link goes down
	incOld      = "old version"
)

// oldVersion is the dist.version of the node left behind
// (scripts/fleet-old-build.sh builds its binary).
const oldVersion = "0.0.9"

type simNode struct {
	fleetHost
	model    int // index in simModels; -1: no engine (config/node.yaml)
	incident string
	old      bool // runs the binary built as oldVersion
}

func (n simNode) hasEngine() bool { return n.model >= 0 }

// roles are what the node's collector serves the fleet contract for.
func (n simNode) roles() []string {
	if n.hasEngine() {
		return []string{"hardware", "judge", "kvcache", "logpipeline", "proxy", "supervisor"}
	}
	return []string{"hardware"}
}

// simFleet lays out n nodes (5 at least): mac01 to mac03 run an engine,
// one model each, mac01 healthy, mac02's engine wedged, mac03's KV-cache
// role down; mac04 (hardware only) crash-loops and mac05 (hardware only)
// goes dark; mac06 runs the older version (mac03 does, in a fleet of five);
// from mac07 on every third node runs an engine, the models in turn, and
// the rest are hardware-only ring members. Every node with no incident is
// healthy.
func simFleet(n int) []simNode {
	var out []simNode
	for i := range n {
		h := fleetHost{
			ns: fmt.Sprintf("f20-%02d", i+1), node: fmt.Sprintf("mac%02d", i+1), rootIf: fmt.Sprintf("f20-r%02d", i+1),
			rootIP: fmt.Sprintf("10.220.%d.%d/30", i/64, 4*(i%64)+1), ip: fmt.Sprintf("10.220.%d.%d/30", i/64, 4*(i%64)+2),
		}
		s := simNode{fleetHost: h, model: -1}
		switch {
		case i < 3:
			s.model = i
		case i >= 6 && i%3 == 0:
			s.model = (i / 3) % len(simModels)
		}
		s.engine = s.hasEngine()
		s.incident = map[int]string{1: incWedged, 2: incRoleDown, 3: incCrash, 4: incDark}[i]
		s.old = i == 5 || (n == 5 && i == 2)
		out = append(out, s)
	}
	return out
}

// overlay is the node's own config overlay for its incident, or "".
func (n simNode) overlay(t *testing.T, mlxsim string) string {
	t.Helper()
	var body string
	switch n.incident {
	case incWedged:
		// The generation thread wedges after the third completion (a GPU
		// stall: every completion waits, /health answers). hang_after 0:
		// the supervisor does not restart it, so it stays up but not
		// ready, as an engine does whose supervisor gave up or was told
		// to leave it for a person to look at.
		m := simModels[n.model]
		body = fmt.Sprintf(`receivers:
  mlx_supervisor:
    command: [%q, --model, %q, --host, 127.0.0.1, --port, "8081", --prompt-cache-size, "2048",
      --chat-template-args, '{"enable_thinking": false}', --sim-load-delay, 0s,
      --sim-decode-tokens-per-second, "40", --sim-mlx-lm-version, 0.31.3, --sim-hang-after, "3"]
    health_check:
      hang_after: 0s
`, mlxsim, m.id)
	case incRoleDown:
		// The KV-cache receiver reads a log the engine does not write.
		body = "receivers:\n  mlx_kvcache:\n    log_path: ${env:MLX_DATA_DIR}/moved/server.log\n"
	default:
		return ""
	}
	p := filepath.Join(t.TempDir(), n.node+".yaml")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	return p
}
