package loghealthreceiver

import (
	"context"
	"os"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/mlx-otelcol/mlx-otelcol/internal/loghealth"
)

// reporter reads, at each scrape, the counts the log pipeline's processor
// and sinks keep under the health key, and the followed file's size.
type reporter struct {
	cfg   *Config
	stats *loghealth.Stats
}

func newReporter(cfg *Config) *reporter {
	return &reporter{cfg: cfg, stats: loghealth.For(cfg.HealthKey)}
}

func (r *reporter) scrape(context.Context) (pmetric.Metrics, error) {
	return buildMetrics(r.stats.Snapshot(), fileSize(r.cfg.FilePath), time.Now()), nil
}

// fileSize is the size of the followed file, 0 while it does not exist.
func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}
