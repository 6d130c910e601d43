package kvcachereceiver

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/mlx-otelcol/mlx-otelcol/internal/metricbuild"
)

// scopeName is the instrumentation scope of the metrics emitted.
const scopeName = "github.com/mlx-otelcol/mlx-otelcol/receiver/kvcachereceiver"

// snapshot is everything one collection reports.
type snapshot struct {
	logReadable bool

	state cacheState
	known bool // a cache state has been seen (since the engine last started)

	maxSequences int64
	maxBytes     int64
	hasMaxBytes  bool

	estBytesMaxContext int64
	hasEst             bool
}

// buildMetrics turns a snapshot into the series documented in
// documentation.md. Cache series are left out, not zeroed, while the state
// is unknown: a zero would claim an empty cache.
func buildMetrics(s snapshot, start, now time.Time) pmetric.Metrics {
	b := metricbuild.New(scopeName, metricUnits, start, now)
	b.Gauge(metricMlxKvAgentUp, metricMlxKvAgentUpHelp, metricbuild.Bool(s.logReadable))
	b.Gauge(metricMlxKvCacheMaxSequences, metricMlxKvCacheMaxSequencesHelp, float64(s.maxSequences))
	if s.hasMaxBytes {
		b.Gauge(metricMlxKvCacheMaxBytes, metricMlxKvCacheMaxBytesHelp, float64(s.maxBytes))
	}
	if s.hasEst {
		b.Gauge(metricMlxKvEstBytesMaxContext, metricMlxKvEstBytesMaxContextHelp, float64(s.estBytesMaxContext))
	}
	if !s.known {
		return b.Emit()
	}
	st := s.state
	b.Gauge(metricMlxKvCacheSequences, metricMlxKvCacheSequencesHelp, float64(st.Total.Sequences), "type", "total")
	b.Gauge(metricMlxKvCacheBytes, metricMlxKvCacheBytesHelp, float64(st.Total.Bytes), "type", "total")
	if st.Format == formatPromptCache {
		for t, name := range cacheTypeNames {
			b.Gauge(metricMlxKvCacheSequences, metricMlxKvCacheSequencesHelp, float64(st.ByType[t].Sequences), "type", name)
			b.Gauge(metricMlxKvCacheBytes, metricMlxKvCacheBytesHelp, float64(st.ByType[t].Bytes), "type", name)
		}
	}
	if u, ok := utilization(st.Total, s); ok {
		b.Gauge(metricMlxKvCacheUtilization, metricMlxKvCacheUtilizationHelp, u)
	}
	b.Gauge(metricMlxKvCacheStateAgeSeconds, metricMlxKvCacheStateAgeSecondsHelp, max(now.Sub(st.SeenAt).Seconds(), 0))
	return b.Emit()
}

// utilization is the fill of the cache against the limit closer to being
// reached. mlx_lm evicts on insert while there are more sequences than
// --prompt-cache-size, but --prompt-cache-bytes only acts when a batched
// request is admitted (mlx_lm v0.31.3 server.py: _generate calls
// prompt_cache.trim_to, and run builds LRUPromptCache without max_bytes):
// the byte ratio can exceed 1 in between. A limit of 0
// (nothing is cached) gives no ratio.
func utilization(u usage, s snapshot) (float64, bool) {
	r, ok := 0.0, false
	if s.maxSequences > 0 {
		r, ok = float64(u.Sequences)/float64(s.maxSequences), true
	}
	if s.hasMaxBytes && s.maxBytes > 0 {
		r, ok = max(r, float64(u.Bytes)/float64(s.maxBytes)), true
	}
	return r, ok
}
