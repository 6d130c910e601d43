package fleet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mdgen/mdschema"
)

// A clean stop and a start count a restart; a start that finds the last
// run's mark counts a crash as well; the counts survive the process (they
// are read back from the file).
func TestRestartsAndCrashesAreCountedAcrossRuns(t *testing.T) {
	dir := t.TempDir()
	run := func() *Agent {
		a := New(Settings{Role: RoleKVCache, StateDir: dir})
		require.NoError(t, a.Start(time.Now()))
		return a
	}
	a := run()
	s := a.Snapshot(time.Now())
	assert.Equal(t, [2]uint64{0, 0}, [2]uint64{s.Restarts, s.Crashes}, "a first start")
	require.NoError(t, a.Stop())

	a = run()
	s = a.Snapshot(time.Now())
	assert.Equal(t, [2]uint64{1, 0}, [2]uint64{s.Restarts, s.Crashes}, "after a clean stop")
	// No Stop: the process was killed.

	a = run()
	s = a.Snapshot(time.Now())
	assert.Equal(t, [2]uint64{2, 1}, [2]uint64{s.Restarts, s.Crashes}, "after a run that did not stop")
	require.NoError(t, a.Stop())
	require.NoError(t, a.Stop(), "twice")
	assert.NoError(t, New(Settings{Role: RoleJudge, StateDir: dir}).Stop(), "without Start")

	b, err := os.ReadFile(filepath.Join(dir, RoleKVCache+".json"))
	require.NoError(t, err)
	assert.JSONEq(t, `{"starts": 3, "crashes": 1, "running": false}`, string(b))
}

func TestAnUnwritableStateDirectoryFailsTheStart(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	err := New(Settings{Role: RoleProxy, StateDir: filepath.Join(file, "agents")}).Start(time.Now())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "counting the proxy role's start")
}

func TestACorruptLedgerIsAnError(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, RoleHardware+".json"), []byte("{"), 0o600))
	assert.Error(t, New(Settings{Role: RoleHardware, StateDir: dir}).Start(time.Now()))
}

func TestDefaultStateDirFollowsTheDataDirectory(t *testing.T) {
	t.Setenv("MLX_DATA_DIR", "/var/mlx")
	assert.Equal(t, "/var/mlx/agents", DefaultStateDir())
	t.Setenv("MLX_DATA_DIR", "")
	assert.Equal(t, filepath.Join(".data", "agents"), DefaultStateDir())
}

func TestNodeName(t *testing.T) {
	t.Setenv(NodeEnv, "rank1")
	assert.Equal(t, "mac-14", NodeName("mac-14"), "configured wins")
	assert.Equal(t, "rank1", NodeName(""))
	t.Setenv(NodeEnv, "")
	host, _ := os.Hostname()
	assert.Equal(t, host, NodeName(""))
}

func TestModelPath(t *testing.T) {
	t.Setenv("HF_HUB_CACHE", "/hub")
	assert.Equal(t, "/hub/models--mlx-community--Qwen3-4B-4bit", ModelPath("mlx-community/Qwen3-4B-4bit"))
	t.Setenv("HF_HUB_CACHE", "")
	t.Setenv("HF_HOME", "/hf")
	assert.Equal(t, "/hf/hub/models--org--name", ModelPath("org/name"))
	local := t.TempDir()
	assert.Equal(t, local, ModelPath(local), "a local path as it is")
	assert.Empty(t, ModelPath(""))
	assert.Empty(t, ModelPath("default_model"))
	assert.Empty(t, ModelPath("./missing/model"))
}

func TestVersionAndCommitSayUnknownUnstamped(t *testing.T) {
	assert.Equal(t, "0.1.0", Version("0.1.0"))
	assert.Equal(t, Unknown, Version(""))
	assert.Equal(t, Unknown, Commit(), "go test stamps none")
}

// The client_golang side: the five series with their labels, nothing
// before Start, and node added to every series that has none.
func TestCollectorAndNodeLabel(t *testing.T) {
	t.Setenv("HF_HUB_CACHE", "/hub")
	a := New(Settings{Role: RoleProxy, Node: "n1", Version: "0.1.0", Model: "org/m", StateDir: t.TempDir()})
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(NewCollector(a)))
	n, err := testutil.GatherAndCount(reg)
	require.NoError(t, err)
	assert.Zero(t, n, "nothing before Start")

	require.NoError(t, a.Start(time.Now()))
	a.SetUp(true)
	other := prometheus.NewCounter(prometheus.CounterOpts{Name: "mlx_other_total", Help: "h"})
	reg.MustRegister(other)
	want := `
# HELP mlx_agent_crashes_total ` + HelpCrashes + `
# TYPE mlx_agent_crashes_total counter
mlx_agent_crashes_total{node="n1",role="proxy"} 0
# HELP mlx_agent_info ` + HelpInfo + `
# TYPE mlx_agent_info gauge
mlx_agent_info{commit="unknown",model="org/m",model_path="/hub/models--org--m",node="n1",role="proxy",version="0.1.0"} 1
# HELP mlx_agent_restarts_total ` + HelpRestarts + `
# TYPE mlx_agent_restarts_total counter
mlx_agent_restarts_total{node="n1",role="proxy"} 0
# HELP mlx_agent_up ` + HelpUp + `
# TYPE mlx_agent_up gauge
mlx_agent_up{node="n1",role="proxy"} 1
# HELP mlx_other_total h
# TYPE mlx_other_total counter
mlx_other_total{node="n1"} 0
`
	assert.NoError(t, testutil.GatherAndCompare(WithNode(reg, "n1"), strings.NewReader(want),
		MetricCrashes, MetricInfo, MetricRestarts, MetricUp, "mlx_other_total"))
	up, err := testutil.GatherAndCount(reg, MetricUptime)
	require.NoError(t, err)
	assert.Equal(t, 1, up)
}

// Every component that runs a role lists the contract's series in its
// metadata.yaml, with the help texts, types, units and labels the
// emitters use, and node on every series.
func TestEveryRoleDocumentsTheContract(t *testing.T) {
	components := map[string]string{
		RoleProxy:       "extension/proxyextension",
		RoleHardware:    "receiver/hwreceiver",
		RoleKVCache:     "receiver/kvcachereceiver",
		RoleSupervisor:  "receiver/supervisorreceiver",
		RoleLogPipeline: "receiver/loghealthreceiver",
		RoleJudge:       "receiver/judgereceiver",
	}
	assert.Len(t, components, len(Roles))
	want := map[string]struct {
		help, prom, unit string
		labels           []string
	}{
		MetricUp:       {HelpUp, "gauge", "", []string{LabelRole, LabelNode}},
		MetricInfo:     {HelpInfo, "gauge", "", []string{LabelRole, LabelVersion, LabelCommit, LabelModel, LabelModelPath, LabelNode}},
		MetricUptime:   {HelpUptime, "gauge", "s", []string{LabelRole, LabelNode}},
		MetricRestarts: {HelpRestarts, "counter", "", []string{LabelRole, LabelNode}},
		MetricCrashes:  {HelpCrashes, "counter", "", []string{LabelRole, LabelNode}},
	}
	for role, dir := range components {
		c, err := mdschema.Load(filepath.Join("..", "..", dir, "metadata.yaml"))
		require.NoError(t, err)
		assert.Equal(t, []string{LabelNode}, c.CommonLabels(), dir)
		a, ok := c.Attributes.Get(LabelRole)
		require.True(t, ok, dir)
		assert.Equal(t, []string{role}, a.Enum, dir)
		for name, w := range want {
			m, ok := c.Metrics.Get(name)
			if !assert.True(t, ok, "%s: %s", dir, name) {
				continue
			}
			assert.Equal(t, w.help, m.Description, "%s: %s", dir, name)
			assert.Equal(t, w.prom, m.PromType(), "%s: %s", dir, name)
			assert.Equal(t, w.unit, m.Unit, "%s: %s", dir, name)
			assert.ElementsMatch(t, w.labels, c.Labels(m), "%s: %s", dir, name)
		}
	}
}
