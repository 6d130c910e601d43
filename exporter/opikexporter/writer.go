package opikexporter

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/mlx-otelcol/mlx-otelcol/internal/opikapi"
)

// writer creates the proxy's requests in Opik through REST: for each batch
// of requests (at most batch_size, and about maxCallBytes of JSON), their
// traces, then their LLM spans, then their scores, in that order and in
// one push. So a score is only ever sent once Opik has taken its trace
// (204), and a push that fails part way is retried whole: Opik's batch
// endpoints write an id again without complaint and a score of the same
// name replaces the old one, so what a retry sends twice is harmless
// (standins/opiktest, rules 7 and 9).
type writer struct {
	cfg *Config
	api *opikapi.Client
	log *zap.Logger

	// Read-back: one scored trace in cfg.ReadBack.Every is read again,
	// cfg.ReadBack.Delay after its scores were taken, off the push (a
	// goroutine, a bounded queue: a check that finds it full is skipped);
	// a score Opik took (204 whatever the id) on a trace it does not show
	// is counted in unseen.
	sampled                        atomic.Int64
	checks                         chan readCheck
	stop                           chan struct{}
	done                           sync.WaitGroup
	unseen, readBacks, readFailed  atomic.Int64
	unseenCounter, readBackCounter metric.Int64Counter
	attrs                          metric.MeasurementOption
}

// readCheck is one trace to read back: its id, the scores written, when.
type readCheck struct {
	id     string
	scores []string
	due    time.Time
}

// maxCallBytes bounds one REST call's body, about: a request's content is
// sent twice (the trace's and the span's input and output, as Opik's SDKs
// do), and may be 256 KiB (traces.max_content_bytes).
const maxCallBytes = 8 << 20

// maxPendingChecks bounds the read-backs waiting for their delay.
const maxPendingChecks = 256

// meterName is the scope of the exporter's own counts.
const meterName = "github.com/mlx-otelcol/mlx-otelcol/exporter/opikexporter"

func newWriter(c *Config, set exporter.Settings) (*writer, error) {
	w := &writer{cfg: c, api: c.client(), log: set.Logger,
		checks: make(chan readCheck, maxPendingChecks), stop: make(chan struct{}),
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

func (w *writer) start(context.Context, component.Host) error {
	if w.cfg.ReadBack.Every > 0 {
		w.done.Add(1)
		go w.readBacksLoop()
	}
	return nil
}

func (w *writer) shutdown(context.Context) error {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	w.done.Wait()
	w.api.HTTP.CloseIdleConnections()
	return nil
}

// push writes td's proxy spans to Opik (see writer).
func (w *writer) push(ctx context.Context, td ptrace.Traces) error {
	reqs := w.requests(td)
	for len(reqs) > 0 {
		n, size := 0, 0
		for n < len(reqs) && n < w.cfg.BatchSize && (n == 0 || size+reqs[n].size <= maxCallBytes) {
			size += reqs[n].size
			n++
		}
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
				out = append(out, requestOf(spans.At(k), rs.Resource().Attributes(), w.cfg.Project, w.cfg.Environment, w.cfg.FeedbackScores.Enabled))
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
	w.sample(reqs)
	return nil
}

// sample queues the read-back of one scored trace in read_back.every.
func (w *writer) sample(reqs []request) {
	every := int64(w.cfg.ReadBack.Every)
	if every <= 0 {
		return
	}
	for _, r := range reqs {
		if len(r.scores) == 0 || w.sampled.Add(1)%every != 0 {
			continue
		}
		c := readCheck{id: r.trace.ID, due: time.Now().Add(w.cfg.ReadBack.Delay)}
		for _, sc := range r.scores {
			c.scores = append(c.scores, sc.Name)
		}
		select {
		case w.checks <- c:
		default: // a read-back is a sample: one more or less changes nothing
		}
	}
}

func (w *writer) readBacksLoop() {
	defer w.done.Done()
	for {
		select {
		case <-w.stop:
			return
		case c := <-w.checks:
			if wait := time.Until(c.due); wait > 0 {
				select {
				case <-w.stop:
					return
				case <-time.After(wait):
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), w.cfg.Timeout)
			w.readBack(ctx, c)
			cancel()
		}
	}
}

// readBack reads one trace and counts the scores written that it does not
// show (all of them when Opik has no such trace); a failed read is counted
// apart.
func (w *writer) readBack(ctx context.Context, c readCheck) {
	t, found, err := w.api.GetTrace(ctx, c.id)
	if err != nil {
		w.readFailed.Add(1)
		w.readBackCounter.Add(ctx, 1, w.attrs, metric.WithAttributes(attribute.String("result", "failed")))
		w.log.Debug("Opik read-back failed", zap.String("trace", c.id), zap.Error(err))
		return
	}
	shown := map[string]bool{}
	for _, fs := range t.FeedbackScores {
		shown[fs.Name] = found
	}
	missing := 0
	for _, name := range c.scores {
		if !shown[name] {
			missing++
		}
	}
	result := "seen"
	if missing > 0 {
		result = "unseen"
		w.unseen.Add(int64(missing))
		w.unseenCounter.Add(ctx, int64(missing), w.attrs)
		w.log.Warn("Opik does not show scores it took", zap.String("trace", c.id), zap.Bool("trace_found", found), zap.Int("scores", missing))
	}
	w.readBacks.Add(1)
	w.readBackCounter.Add(ctx, 1, w.attrs, metric.WithAttributes(attribute.String("result", result)))
}
