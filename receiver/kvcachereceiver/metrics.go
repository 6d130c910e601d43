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
	b := metricbuild.New(scopeName, start, now)
	b.Gauge("mlx_kv_agent_up", "1 if the engine log could be read at the last collection, else 0.", metricbuild.Bool(s.logReadable))
	b.Gauge("mlx_kv_cache_max_sequences", "The engine's prompt cache limit in sequences (--prompt-cache-size).", float64(s.maxSequences))
	if s.hasMaxBytes {
		b.Gauge("mlx_kv_cache_max_bytes", "The engine's prompt cache limit in bytes (--prompt-cache-bytes).", float64(s.maxBytes))
	}
	if s.hasEst {
		b.Gauge("mlx_kv_est_bytes_max_context", "Estimated KV cache bytes of one sequence as long as the model's context.", float64(s.estBytesMaxContext))
	}
	if !s.known {
		return b.Emit()
	}
	st := s.state
	const seqHelp = "Sequences in the engine's prompt cache, by type, as last logged."
	const bytesHelp = "Bytes of the engine's prompt cache, by type, as last logged (1e9-byte units, 2 decimals)."
	b.Gauge("mlx_kv_cache_sequences", seqHelp, float64(st.Total.Sequences), "type", "total")
	b.Gauge("mlx_kv_cache_bytes", bytesHelp, float64(st.Total.Bytes), "type", "total")
	if st.Format == formatPromptCache {
		for t, name := range cacheTypeNames {
			b.Gauge("mlx_kv_cache_sequences", seqHelp, float64(st.ByType[t].Sequences), "type", name)
			b.Gauge("mlx_kv_cache_bytes", bytesHelp, float64(st.ByType[t].Bytes), "type", name)
		}
	}
	if u, ok := utilization(st.Total, s); ok {
		b.Gauge("mlx_kv_cache_utilization", "How full the prompt cache is against the engine's limits: the larger of sequences / max sequences and bytes / max bytes.", u)
	}
	b.Gauge("mlx_kv_cache_state_age_seconds", "Seconds since the engine logged the cache state reported.", max(now.Sub(st.SeenAt).Seconds(), 0))
	return b.Emit()
}

// utilization is the fill of the cache against the limit closer to being
// reached. mlx_lm enforces both limits (it evicts while there are more
// sequences than --prompt-cache-size, and while the bytes exceed
// --prompt-cache-bytes), so 1 means the next insertion evicts. A limit of
// 0 (nothing is cached) gives no ratio.
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
