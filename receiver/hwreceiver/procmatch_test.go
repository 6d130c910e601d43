package hwreceiver

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestProcMatcher(t *testing.T) {
	cfg := testConfig()
	cfg.Processes = map[string]string{
		"mlx_lm_server": defaultWorkerPattern,
		"python":        `(^|/)[Pp]ython[0-9.]*( |$)`,
	}
	m := newProcMatcher(cfg, 42)
	assert.Equal(t, []string{"mlx_lm_server", "mlx_otelcol", "python"}, m.names())

	assert.Equal(t, []string{"mlx_lm_server", "python"},
		m.match(7, "/opt/homebrew/bin/python3.12 -m mlx_lm.server --model m"), "a process counts in every component it matches")
	assert.Equal(t, []string{"mlx_lm_server"}, m.match(8, "/usr/local/bin/mlx_lm.server --port 8081"))
	assert.Equal(t, []string{"mlx_lm_server"}, m.match(9, "/venv/bin/mlx_lm server --port 8081"), "the subcommand form of newer mlx-lm")
	assert.Equal(t, []string{"mlx_otelcol"}, m.match(42, "mlx-otelcol --set processes::x=mlx_lm.server"), "the collector is matched by pid only")
	assert.Empty(t, m.match(10, ""), "kernel threads")
	assert.Empty(t, m.match(11, "/usr/sbin/sshd -D"))

	cfg.SelfComponent = ""
	m = newProcMatcher(cfg, 42)
	assert.Empty(t, m.match(42, "mlx-otelcol"))
	assert.Equal(t, []string{"mlx_lm_server", "python"}, m.names())
}

func TestProcTotals(t *testing.T) {
	m := newProcMatcher(testConfig(), 1)
	tot := m.newTotals()
	assert.Equal(t, procTotals{"mlx_lm_server": {}, "mlx_otelcol": {}}, tot, "every component, at zero")
	tot.add([]string{"mlx_lm_server"}, 150, 1000)
	tot.add([]string{"mlx_lm_server"}, 50, 24)
	tot.add(nil, 99, 99)
	assert.Equal(t, procStats{count: 2, cpuPercent: 200, rssBytes: 1024}, tot["mlx_lm_server"])
}
