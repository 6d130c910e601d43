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
	b := metricbuild.New(scopeName, metricUnits, start, now)
	b.Gauge(metricMlxServerState, metricMlxServerStateHelp, float64(snap.state))
	b.Gauge(metricMlxServerUp, metricMlxServerUpHelp, metricbuild.Bool(snap.up))
	b.Gauge(metricMlxServerReady, metricMlxServerReadyHelp, metricbuild.Bool(snap.ready))
	b.Gauge(metricMlxModelLoaded, metricMlxModelLoadedHelp, metricbuild.Bool(snap.ready), "model", model)
	b.Counter(metricMlxServerRestartsTotal, metricMlxServerRestartsTotalHelp, float64(snap.restarts))
	for _, r := range crashReasons {
		b.Counter(metricMlxServerCrashesTotal, metricMlxServerCrashesTotalHelp, float64(snap.crashes[r]), "reason", r)
	}
	b.Gauge(metricMlxServerUptimeSeconds, metricMlxServerUptimeSecondsHelp, snap.uptime.Seconds())
	b.Gauge(metricMlxServerLastExitCode, metricMlxServerLastExitCodeHelp, float64(snap.lastExit))
	for _, r := range crashReasons {
		b.Gauge(metricMlxServerLastCrashReason, metricMlxServerLastCrashReasonHelp, metricbuild.Bool(r == snap.lastReason), "reason", r)
	}
	for _, r := range healthResults {
		b.Counter(metricMlxServerHealthChecksTotal, metricMlxServerHealthChecksTotalHelp, float64(snap.checks[r]), "result", r)
	}
	b.Gauge(metricMlxServerBackoffSeconds, metricMlxServerBackoffSecondsHelp, snap.backoff.Seconds())
	b.Counter(metricMlxServerLogWriteErrorsTotal, metricMlxServerLogWriteErrorsTotalHelp, float64(snap.logErrors))
	for _, w := range loops {
		b.Counter(metricMlxSupervisorPanicsTotal, metricMlxSupervisorPanicsTotalHelp, float64(snap.panics[w]), "where", w)
	}
	return b.Emit()
}
