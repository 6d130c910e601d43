package loghealthreceiver

import (
	"sort"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/mlx-otelcol/mlx-otelcol/internal/loghealth"
	"github.com/mlx-otelcol/mlx-otelcol/internal/metricbuild"
)

const scopeName = "github.com/mlx-otelcol/mlx-otelcol/receiver/loghealthreceiver"

// severities are emitted for every sink from the start, at 0, so that
// "nothing shipped" is a series at 0 and not an absent one.
var severities = []string{
	loghealth.SeverityDebug, loghealth.SeverityInfo, loghealth.SeverityWarning,
	loghealth.SeverityError, loghealth.SeverityFatal,
}

// processorReasons are the drops the processor makes; the others are a sink's.
var processorReasons = map[string]bool{
	loghealth.ReasonHTTPFilter: true, loghealth.ReasonRateLimit: true, loghealth.ReasonEmpty: true,
}

// buildMetrics turns the pipeline's counts and the followed file's size
// into the mlx_log_tailer_* series (documentation.md).
func buildMetrics(snap loghealth.Snapshot, fileBytes int64, now time.Time) pmetric.Metrics {
	b := metricbuild.New(scopeName, metricUnits, snap.Start, now)
	b.Gauge(metricMlxLogTailerUp, metricMlxLogTailerUpHelp, metricbuild.Bool(snap.Up))

	lines := make([]loghealth.LineKey, 0, len(snap.Lines))
	for k := range snap.Lines {
		lines = append(lines, k)
	}
	sort.Slice(lines, func(i, j int) bool {
		return lines[i].Severity+"/"+lines[i].Category < lines[j].Severity+"/"+lines[j].Category
	})
	for _, k := range lines {
		b.Counter(metricMlxLogTailerLinesTotal, metricMlxLogTailerLinesTotalHelp,
			float64(snap.Lines[k]), "severity", k.Severity, "category", k.Category)
	}

	sinks := snap.Sinks()
	for _, sink := range sinks {
		seen := map[string]bool{}
		for _, sev := range severities {
			seen[sev] = true
			b.Counter(metricMlxLogTailerShippedTotal, metricMlxLogTailerShippedTotalHelp, float64(snap.Shipped[loghealth.ShipKey{Severity: sev, Sink: sink}]), "severity", sev, "sink", sink)
		}
		for _, k := range sortedShipKeys(snap.Shipped) {
			if k.Sink == sink && !seen[k.Severity] {
				b.Counter(metricMlxLogTailerShippedTotal, metricMlxLogTailerShippedTotalHelp, float64(snap.Shipped[k]), "severity", k.Severity, "sink", sink)
			}
		}
	}

	for _, reason := range loghealth.DropReasons {
		if processorReasons[reason] {
			b.Counter(metricMlxLogTailerDroppedTotal, metricMlxLogTailerDroppedTotalHelp, float64(snap.Dropped[loghealth.DropKey{Reason: reason}]), "reason", reason, "sink", "")
			continue
		}
		for _, sink := range sinks {
			b.Counter(metricMlxLogTailerDroppedTotal, metricMlxLogTailerDroppedTotalHelp, float64(snap.Dropped[loghealth.DropKey{Reason: reason, Sink: sink}]), "reason", reason, "sink", sink)
		}
	}

	b.Counter(metricMlxLogTailerErrorsTotal, metricMlxLogTailerErrorsTotalHelp, float64(snap.Errors))
	b.Gauge(metricMlxLogTailerFileBytes, metricMlxLogTailerFileBytesHelp, float64(fileBytes))
	for _, sink := range sinks {
		if n, ok := snap.Queues[sink]; ok {
			b.Gauge(metricMlxLogTailerQueueDepth, metricMlxLogTailerQueueDepthHelp, float64(n), "sink", sink)
		}
	}
	return b.Emit()
}

func sortedShipKeys(m map[loghealth.ShipKey]uint64) []loghealth.ShipKey {
	keys := make([]loghealth.ShipKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Sink+keys[i].Severity < keys[j].Sink+keys[j].Severity })
	return keys
}
