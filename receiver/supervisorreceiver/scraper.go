package supervisorreceiver

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"
)

// scrape reports the supervisor's status: what the restart loop and the
// probes last saw, with no I/O of its own.
func (s *supervisor) scrape(context.Context) (pmetric.Metrics, error) {
	snap := s.st.snapshot(s.cfg.SpawnMode(), time.Now())
	return buildMetrics(snap, s.model, s.started, time.Now()), nil
}
