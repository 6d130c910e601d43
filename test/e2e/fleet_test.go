//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

// fleetPorts are the ports of the shipped config and the roles each serves
// the fleet contract for (internal/fleet): every role on its own port.
var fleetPorts = map[string][]string{
	"mlx_proxy":             {"proxy"},
	"prometheus/hw":         {"hardware"},
	"prometheus/kv":         {"kvcache"},
	"prometheus/supervisor": {"supervisor", "judge"},
	"prometheus/logs":       {"logpipeline"},
}

// fleetNode is the node the test names (MLX_NODE_NAME).
const fleetNode = "fleet-test-node"

// distVersion is builder-config.yaml's dist.version: what the collector
// gives its components as BuildInfo.Version.
func distVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "builder-config.yaml"))
	require.NoError(t, err)
	var cfg struct {
		Dist struct {
			Version string `yaml:"version"`
		} `yaml:"dist"`
	}
	require.NoError(t, yaml.Unmarshal(b, &cfg))
	require.NotEmpty(t, cfg.Dist.Version)
	return cfg.Dist.Version
}

// agentScrapes waits until every port shows its roles' mlx_agent_up and
// returns a whole scrape of each.
func agentScrapes(s *stack) map[string]*promtext.Scrape {
	out := map[string]*promtext.Scrape{}
	for port, roles := range fleetPorts {
		out[port] = s.waitFor(port, 60*time.Second, port+": mlx_agent_up of "+strings.Join(roles, ", "), func(sc *promtext.Scrape) bool {
			// The KV-cache role is up once the engine has written its log.
			for _, role := range roles {
				if v, _ := sc.Value("mlx_agent_up", "role", role); v != 1 {
					return false
				}
			}
			return true
		})
	}
	return out
}

// agentCounts is each role's mlx_agent_restarts_total and
// mlx_agent_crashes_total.
func agentCounts(t *testing.T, scrapes map[string]*promtext.Scrape) map[string][2]float64 {
	t.Helper()
	out := map[string][2]float64{}
	for port, roles := range fleetPorts {
		for _, role := range roles {
			out[role] = [2]float64{
				value(t, scrapes[port], "mlx_agent_restarts_total", "role", role, "node", fleetNode),
				value(t, scrapes[port], "mlx_agent_crashes_total", "role", role, "node", fleetNode),
			}
		}
	}
	return out
}

func labelOf(m *dto.Metric, name string) (string, bool) {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue(), true
		}
	}
	return "", false
}

// The fleet contract on the built binary: every role says it is up, its
// build (the dist version, the commit make build stamped), its model and
// where the weights are, its uptime, on its own port, once; every series of
// every port names the node; and the restart counter rises across the
// collector's own restarts, a kill -9 counted as a crash apart from a clean
// stop.
func TestFleetContract(t *testing.T) {
	dataDir := t.TempDir()
	hub := t.TempDir()
	opts := collectorOptions{configs: demoConfigs, dataDir: dataDir, enginePort: freePort(t),
		env: map[string]string{"MLX_NODE_NAME": fleetNode, "MLXSIM_LOAD_DELAY": "0s", "HF_HUB_CACHE": hub}}
	s := startCollector(t, opts)
	scrapes := agentScrapes(s)
	version := distVersion(t)
	commitRE := regexp.MustCompile(`^[0-9a-f]{7,40}(-dirty)?$`)
	withModel := map[string]bool{"proxy": true, "kvcache": true, "supervisor": true}
	seen := map[string]int{}
	for port, sc := range scrapes {
		for name, f := range sc.Families {
			for _, m := range f.GetMetric() {
				node, ok := labelOf(m, "node")
				assert.True(t, ok && node == fleetNode, "%s: %s%v names the node %q", port, name, m.GetLabel(), fleetNode)
			}
		}
		for _, role := range fleetPorts[port] {
			for _, name := range []string{"mlx_agent_up", "mlx_agent_info", "mlx_agent_uptime_seconds", "mlx_agent_restarts_total", "mlx_agent_crashes_total"} {
				n := 0
				for _, m := range sc.Families[name].GetMetric() {
					if r, _ := labelOf(m, "role"); r == role {
						n++
					}
				}
				assert.Equal(t, 1, n, "%s: one %s of role %s", port, name, role)
			}
			seen[role]++
			assert.Equal(t, 1.0, value(t, sc, "mlx_agent_up", "role", role), role)
			assert.Equal(t, 1.0, value(t, sc, "mlx_agent_info", "role", role, "version", version), "%s: version %s", role, version)
			assert.Greater(t, value(t, sc, "mlx_agent_uptime_seconds", "role", role), 0.0, role)
			for _, m := range sc.Families["mlx_agent_info"].GetMetric() {
				if r, _ := labelOf(m, "role"); r != role {
					continue
				}
				commit, _ := labelOf(m, "commit")
				if os.Getenv("MLX_OTELCOL_UNSTAMPED") == "" {
					assert.Regexp(t, commitRE, commit, "%s: the commit make build stamped (MLX_OTELCOL_UNSTAMPED=1 for a binary built otherwise)", role)
				}
				gotModel, _ := labelOf(m, "model")
				path, _ := labelOf(m, "model_path")
				switch {
				case !withModel[role]:
					assert.Empty(t, gotModel, role)
					assert.Empty(t, path, role)
				case strings.HasPrefix(gotModel, "mlx-community/"):
					// A repo id: its folder in the hub cache.
					assert.Equal(t, filepath.Join(hub, "models--"+strings.ReplaceAll(gotModel, "/", "--")), path, "%s: the weights' folder in the hub cache", role)
				default:
					// A local path (demo.yaml gives the KV-cache receiver the
					// test model's config.json): the path, made absolute.
					assert.Equal(t, filepath.Join(repoRoot, gotModel), path, "%s: a local model's path", role)
				}
			}
		}
	}
	assert.Len(t, seen, 6, "every role reports: %v", seen)
	for role, c := range agentCounts(t, scrapes) {
		assert.Equal(t, [2]float64{0, 0}, c, "%s: a first start: no restart, no crash", role)
	}

	// kill -9: no clean stop. The next start counts a restart and a crash.
	require.NoError(t, s.cmd.Process.Kill())
	<-s.exited
	s = startCollector(t, opts)
	for role, c := range agentCounts(t, agentScrapes(s)) {
		assert.Equal(t, [2]float64{1, 1}, c, "%s: after kill -9: a restart and a crash", role)
	}

	// SIGTERM: a clean stop. The next start counts a restart only.
	s.stop()
	s = startCollector(t, opts)
	for role, c := range agentCounts(t, agentScrapes(s)) {
		assert.Equal(t, [2]float64{2, 1}, c, "%s: after a clean stop: a restart, no crash", role)
	}
}
