package judgereceiver

import (
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/mlx-otelcol/mlx-otelcol/internal/metricbuild"
)

// scopeName is the instrumentation scope of the metrics and events.
const scopeName = "github.com/mlx-otelcol/mlx-otelcol/receiver/judgereceiver"

// The buckets: scores are 0-1; a pass is one request per trace, each up
// to the judge's timeout.
var (
	scoreBounds = metricMlxJudgeScoreBuckets
	passBounds  = metricMlxJudgePassSecondsBuckets
)

// snapshot is a copy of the stats, for one collection.
type snapshot struct {
	traces, passes map[string]float64
	scores         map[scoreKey]*hist
	passSeconds    *hist
	injections     float64
}

// buildMetrics turns a snapshot into the series documented in
// documentation.md.
func buildMetrics(s snapshot, start, now time.Time) pmetric.Metrics {
	b := metricbuild.New(scopeName, metricUnits, start, now)
	for _, r := range traceResults {
		b.Counter(metricMlxJudgeTracesTotal, metricMlxJudgeTracesTotalHelp, s.traces[r], "result", r)
	}
	for _, r := range passResults {
		b.Counter(metricMlxJudgePassesTotal, metricMlxJudgePassesTotalHelp, s.passes[r], "result", r)
	}
	b.Counter(metricMlxJudgeInjectionsSuspectedTotal, metricMlxJudgeInjectionsSuspectedTotalHelp, s.injections)
	b.Histogram(metricMlxJudgePassSeconds, metricMlxJudgePassSecondsHelp, passBounds, s.passSeconds.counts, s.passSeconds.sum)
	keys := make([]scoreKey, 0, len(s.scores))
	for k := range s.scores {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b scoreKey) int {
		if a.name != b.name {
			return strings.Compare(a.name, b.name)
		}
		return strings.Compare(a.model, b.model)
	})
	for _, k := range keys {
		h := s.scores[k]
		b.Histogram(metricMlxJudgeScore, metricMlxJudgeScoreHelp, scoreBounds, h.counts, h.sum, "name", k.name, "model", k.model)
	}
	return b.Emit()
}
