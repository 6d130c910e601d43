package supervisorreceiver

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/mlx-otelcol/mlx-otelcol/internal/metricbuild"
)

// scopeName is the instrumentation scope of the metrics emitted.
const scopeName = "github.com/mlx-otelcol/mlx-otelcol/receiver/supervisorreceiver"

// healthResults are the values of the result label, all emitted from the
// start so rate() sees the first failure.
var healthResults = []string{"ok", "fail", "skipped"}

// buildMetrics turns a status snapshot into the supervisor's series; names,
// types and labels are those of mlx_server_supervisor.py (documentation.md).
func buildMetrics(snap snapshot, model string, start, now time.Time) pmetric.Metrics {
	b := metricbuild.New(scopeName, start, now)
	b.Gauge("mlx_server_state", "Engine state: 0 idle, 1 running, 2 starting, 3 backoff.", float64(snap.state))
	b.Gauge("mlx_server_up", "1 if the engine process is running (attach mode: its /health answers).", metricbuild.Bool(snap.up))
	b.Gauge("mlx_server_ready", "1 if the last readiness probe succeeded.", metricbuild.Bool(snap.ready))
	b.Gauge("mlx_model_loaded", "1 while the probe sees the model served.", metricbuild.Bool(snap.ready), "model", model)
	b.Counter("mlx_server_restarts_total", "Engine restarts performed by the supervisor.", float64(snap.restarts))
	for _, r := range crashReasons {
		b.Counter("mlx_server_crashes_total", "Engine exits not asked for by the supervisor, by reason.", float64(snap.crashes[r]), "reason", r)
	}
	b.Gauge("mlx_server_uptime_seconds", "Seconds since the running engine started; 0 when it is down.", snap.uptime.Seconds())
	b.Gauge("mlx_server_last_exit_code", "Exit code of the last engine exit; minus the signal number when a signal ended it.", float64(snap.lastExit))
	for _, r := range crashReasons {
		b.Gauge("mlx_server_last_crash_reason", "1 for the reason of the most recent crash, 0 for the others.", metricbuild.Bool(r == snap.lastReason), "reason", r)
	}
	for _, r := range healthResults {
		b.Counter("mlx_server_health_checks_total", "Health probe outcomes.", float64(snap.checks[r]), "result", r)
	}
	b.Gauge("mlx_server_backoff_seconds", "Delay before the next restart while in backoff, else 0.", snap.backoff.Seconds())
	b.Counter("mlx_server_log_write_errors_total", "Writes of the engine's output to its log file that failed (a full disk); the engine runs on, those lines are lost.", float64(snap.logErrors))
	for _, w := range loops {
		b.Counter("mlx_supervisor_panics_total", "Panics recovered in the supervisor's loops, by loop; the loop is started again.", float64(snap.panics[w]), "where", w)
	}
	return b.Emit()
}
