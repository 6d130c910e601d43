package opikexporter

import (
	"context"
	"sync/atomic"

	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/mlx-otelcol/mlx-otelcol/internal/opikapi"
)

// writer creates the proxy's requests in Opik through REST: for each batch
// of at most batch_size requests, their traces, then their LLM spans, then
// their scores, in that order and in one push. So a score is only ever
// sent once Opik has taken its trace (204), and a push that fails part way
// is retried whole: Opik's batch endpoints write an id again without
// complaint and a score of the same name replaces the old one, so what a
// retry sends twice is harmless (internal/opiktest, rules 7 and 9).
type writer struct {
	cfg *Config
	api *opikapi.Client
	log *zap.Logger

	// Read-back: one trace in cfg.ReadBack.Every is read again after its
	// scores; a score Opik took (204 whatever the id) on a trace it does not
	// show is counted in unseen.
	sampled                        atomic.Int64
	unseen, readBacks, readFailed  atomic.Int64
	unseenCounter, readBackCounter metric.Int64Counter
	attrs                          metric.MeasurementOption
}

// meterName is the scope of the exporter's own counts.
const meterName = "github.com/mlx-otelcol/mlx-otelcol/exporter/opikexporter"

func newWriter(c *Config, set exporter.Settings) (*writer, error) {
	w := &writer{cfg: c, api: c.client(), log: set.Logger,
		attrs: metric.WithAttributes(attribute.String("exporter", set.ID.String()))}
	meter := set.MeterProvider.Meter(meterName)
	var err error
	if w.unseenCounter, err = meter.Int64Counter(metricMlxOpikScoresUnseenTotal, metric.WithDescription(metricMlxOpikScoresUnseenTotalHelp)); err != nil {
		return nil, err
	}
	if w.readBackCounter, err = meter.Int64Counter(metricMlxOpikReadbacksTotal, metric.WithDescription(metricMlxOpikReadbacksTotalHelp)); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *writer) shutdown(context.Context) error {
	w.api.HTTP.CloseIdleConnections()
	return nil
}

// push writes td's proxy spans to Opik (see writer).
func (w *writer) push(ctx context.Context, td ptrace.Traces) error {
	reqs := w.requests(td)
	for len(reqs) > 0 {
		n := min(len(reqs), w.cfg.BatchSize)
		if err := w.write(ctx, reqs[:n]); err != nil {
			return err
		}
		reqs = reqs[n:]
	}
	return nil
}

func (w *writer) requests(td ptrace.Traces) []request {
	var out []request
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			spans := rs.ScopeSpans().At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				out = append(out, requestOf(spans.At(k), rs.Resource().Attributes(), w.cfg.Project, w.cfg.FeedbackScores.Enabled))
			}
		}
	}
	return out
}

func (w *writer) write(ctx context.Context, reqs []request) error {
	traces := make([]opikapi.NewTrace, len(reqs))
	spans := make([]opikapi.NewSpan, len(reqs))
	var scores []feedbackScore
	for i, r := range reqs {
		traces[i], spans[i] = r.trace, r.span
		scores = append(scores, r.scores...)
	}
	if err := retryable(w.api.CreateTraces(ctx, traces)); err != nil {
		return err
	}
	if err := retryable(w.api.CreateSpans(ctx, spans)); err != nil {
		return err
	}
	for len(scores) > 0 {
		n := min(len(scores), w.cfg.FeedbackScores.BatchSize)
		if err := retryable(w.api.PutScores(ctx, scores[:n])); err != nil {
			return err
		}
		scores = scores[n:]
	}
	w.readBack(ctx, reqs)
	return nil
}

// readBack reads the sampled traces of reqs that got scores; a failed read
// is counted and never fails the push (what was written stays written).
func (w *writer) readBack(ctx context.Context, reqs []request) {
	every := int64(w.cfg.ReadBack.Every)
	if every <= 0 {
		return
	}
	for _, r := range reqs {
		if len(r.scores) == 0 || w.sampled.Add(1)%every != 0 {
			continue
		}
		t, found, err := w.api.GetTrace(ctx, r.trace.ID)
		if err != nil {
			w.readFailed.Add(1)
			w.readBackCounter.Add(ctx, 1, w.attrs, metric.WithAttributes(attribute.String("result", "failed")))
			w.log.Debug("Opik read-back failed", zap.String("trace", r.trace.ID), zap.Error(err))
			continue
		}
		shown := map[string]bool{}
		for _, fs := range t.FeedbackScores {
			shown[fs.Name] = found
		}
		missing := 0
		for _, sc := range r.scores {
			if !shown[sc.Name] {
				missing++
			}
		}
		result := "seen"
		if missing > 0 {
			result = "unseen"
			w.unseen.Add(int64(missing))
			w.unseenCounter.Add(ctx, int64(missing), w.attrs)
			w.log.Warn("Opik does not show scores it took", zap.String("trace", r.trace.ID), zap.Bool("trace_found", found), zap.Int("scores", missing))
		}
		w.readBacks.Add(1)
		w.readBackCounter.Add(ctx, 1, w.attrs, metric.WithAttributes(attribute.String("result", result)))
	}
}
