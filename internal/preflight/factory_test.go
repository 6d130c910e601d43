package preflight

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
)

// testConfig listens on port with a prometheus exporter and runs engine.
func testConfig(t *testing.T, port int, engine string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(p, fmt.Appendf(nil, `receivers:
  mlx_supervisor:
    command: [%q, --model, mlx-community/Qwen3-4B-4bit]
exporters:
  prometheus/hw:
    endpoint: 127.0.0.1:%d
service:
  pipelines:
    metrics:
      receivers: [mlx_supervisor]
      exporters: [prometheus/hw]
  telemetry:
    metrics:
      level: none
`, engine, port), 0o600))
	return p
}

// resolve runs the converter as the collector does: in its resolver,
// after the files are merged and ${...} expanded.
func resolve(t *testing.T, c *converter, uris ...string) error {
	t.Helper()
	set := testResolverSettings(uris, nil)
	set.ConverterFactories = []confmap.ConverterFactory{confmap.NewConverterFactory(func(confmap.ConverterSettings) confmap.Converter { return c })}
	r, err := confmap.NewResolver(set)
	require.NoError(t, err)
	_, err = r.Resolve(context.Background())
	return err
}

func TestConverterStopsTheStartWithEveryProblem(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	t.Setenv("PATH", t.TempDir())

	c := &converter{args: []string{"--config", "x.yaml"}, getenv: func(string) string { return "" }, ports: systemPorts}
	err = resolve(t, c, "file:"+testConfig(t, port, "mlx_lm.server"))
	require.Error(t, err)
	var pe *Error
	require.ErrorAs(t, err, &pe)
	require.Len(t, pe.Problems, 2)
	msg := err.Error()
	assert.Contains(t, msg, "cannot convert the confmap.Conf: preflight: the collector cannot start (MLX_PREFLIGHT=off skips these checks):\n  - port ")
	assert.Contains(t, msg, fmt.Sprintf("\n  - port %d of exporters::prometheus/hw (endpoint: 127.0.0.1:%d) is already in use, held by pid %d", port, port, os.Getpid()))
	assert.Contains(t, msg, "\n  - receivers::mlx_supervisor: the engine \"mlx_lm.server\" (command[0]) is not on PATH")

	// A reload resolves again while this collector holds its own ports.
	assert.NoError(t, resolve(t, c, "file:"+testConfig(t, port, "mlx_lm.server")), "only the first resolution is checked")
}

func TestConverterSkips(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	cfg := testConfig(t, l.Addr().(*net.TCPAddr).Port, "no-such-engine")
	for name, c := range map[string]*converter{
		"validate":          {args: []string{"validate", "--config", cfg}, getenv: func(string) string { return "" }, ports: systemPorts},
		"print-config":      {args: []string{"--config", cfg, "print-config"}, getenv: func(string) string { return "" }, ports: systemPorts},
		"MLX_PREFLIGHT=off": {args: []string{"--config", cfg}, getenv: func(k string) string { return map[string]string{EnvSwitch: "off"}[k] }, ports: systemPorts},
	} {
		assert.NoError(t, resolve(t, c, "file:"+cfg), name)
	}
}

func TestConverterPassesAGoodConfig(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "mlx_lm.server"), []byte("#!/bin/sh\n"), 0o755))
	t.Setenv("PATH", dir)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	c := &converter{args: nil, getenv: func(string) string { return "" }, ports: systemPorts}
	assert.NoError(t, resolve(t, c, "file:"+testConfig(t, port, "mlx_lm.server")))
}

func TestNewFactory(t *testing.T) {
	c := NewFactory().Create(confmap.ConverterSettings{})
	conv, ok := c.(*converter)
	require.True(t, ok)
	assert.Equal(t, os.Args[1:], conv.args)
}
