package hwreceiver

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/metrictest"
)

// fixture is the path of a recorded command output of the applesrc tests.
func fixture(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("internal", "applesrc", "testdata", name))
	require.NoError(t, err)
	require.FileExists(t, p)
	return p
}

// fakeCommands writes each script as an executable named after its key in
// a new directory, and makes that directory the only one on PATH besides
// /usr/bin and /bin (the scripts need cat, sleep and sh).
func fakeCommands(t testing.TB, scripts map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range scripts {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	}
	t.Setenv("PATH", dir+":/usr/bin:/bin")
	return dir
}

// catScript prints a fixture.
func catScript(path string) string { return "exec cat '" + path + "'" }

// points flattens md into "name{k=v,...}" → value, node left out of the
// key (every point must carry it: checked by metrictest).
func points(t testing.TB, md pmetric.Metrics, node string) map[string]float64 {
	t.Helper()
	return metrictest.Points(t, md, metrictest.Without("node", node))
}

// testConfig is the default configuration with short timeouts.
func testConfig() *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.Node = "test-node"
	return cfg
}
