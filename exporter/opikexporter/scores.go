package opikexporter

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mlx-otelcol/mlx-otelcol/internal/opikapi"
	"github.com/mlx-otelcol/mlx-otelcol/internal/spanwalk"
)

// The proxy's span attributes read here: the mark of a proxy span
// (stampTraceIDs) and the scores' inputs. They are the proxy's keys
// (receiver/proxyreceiver/metadata.yaml; a test holds them to it).
const (
	attrModel      = "mlx.model"
	attrRisk       = "mlx.hallucination_risk"
	attrFlagged    = "mlx.hallucination_flagged"
	attrConfidence = "mlx.confidence_mean"
	attrTokens     = "mlx.scored_tokens"
	attrSource     = "mlx.logprobs_source"
)

// scoreCarriers copies, from td, the spans with scores and an Opik trace
// id, with only the attributes the scores need: that is all the scores
// half queues.
func scoreCarriers(td ptrace.Traces) ptrace.Traces {
	out := ptrace.NewTraces()
	var spans ptrace.SpanSlice
	started := false
	spanwalk.Each(td, func(s ptrace.Span) {
		at := s.Attributes()
		if _, ok := at.Get(attrRisk); !ok {
			return
		}
		if _, ok := at.Get(attrOpikTraceId); !ok {
			return
		}
		if !started {
			started = true
			spans = out.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
		}
		c := spans.AppendEmpty()
		c.SetTraceID(s.TraceID())
		c.SetSpanID(s.SpanID())
		c.SetName(s.Name())
		c.SetStartTimestamp(s.StartTimestamp())
		for _, k := range []string{attrOpikTraceId, attrRisk, attrFlagged, attrConfidence, attrTokens, attrSource} {
			if v, ok := at.Get(k); ok {
				v.CopyTo(c.Attributes().PutEmpty(k))
			}
		}
	})
	return out
}

// feedbackScore is one item of Opik's PUT /v1/private/traces/feedback-scores.
type feedbackScore = opikapi.Score

// The reasons, worded as the original proxy worded them.
const (
	reasonQuality = "proxy heuristic (repetition/refusal/hedging/ungrounded signals), higher is better"
	reasonFlagged = "1.0 == proxy heuristics did NOT flag the output for hallucination risk"
)

func reasonConfidence(tokens int64, source string) string {
	return "mean probability of the sampled tokens (" + strconv.FormatInt(tokens, 10) + " scored, source=" + source + "), higher is better"
}

// scoresOf returns a span's feedback scores: hallucination_quality and
// hallucination_flagged always, token_confidence when it was scored.
func scoresOf(s ptrace.Span, project string) []feedbackScore {
	at := s.Attributes()
	id, _ := at.Get(attrOpikTraceId)
	risk, _ := at.Get(attrRisk)
	flagged, _ := at.Get(attrFlagged)
	item := func(name string, value float64, category, reason string) feedbackScore {
		return feedbackScore{ID: id.Str(), ProjectName: project, Name: name, Value: round3(value),
			Reason: reason, CategoryName: category, Source: "sdk"}
	}
	notFlagged := 1.0
	if flagged.Bool() {
		notFlagged = 0
	}
	out := []feedbackScore{
		item("hallucination_quality", 1-risk.Double(), "quality", reasonQuality),
		item("hallucination_flagged", notFlagged, "safety", reasonFlagged),
	}
	if conf, ok := at.Get(attrConfidence); ok {
		tokens, _ := at.Get(attrTokens)
		source, _ := at.Get(attrSource)
		out = append(out, item("token_confidence", conf.Double(), "quality", reasonConfidence(tokens.Int(), source.Str())))
	}
	return out
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// scoreWriter PUTs feedback scores to Opik.
type scoreWriter struct {
	cfg *Config
	api *opikapi.Client
}

func newScoreWriter(c *Config) *scoreWriter {
	return &scoreWriter{cfg: c, api: c.client()}
}

func (w *scoreWriter) shutdown(context.Context) error {
	w.api.HTTP.CloseIdleConnections()
	return nil
}

// push writes the scores of td's spans in batches of at most
// feedback_scores.batch_size. Opik answers 204; a 4xx other than 408 and
// 429 is permanent (the batch is dropped and counted), anything else is
// retried by the helper. Writing a score again overwrites it, so a retry
// of a batch that partly succeeded is harmless.
func (w *scoreWriter) push(ctx context.Context, td ptrace.Traces) error {
	var items []feedbackScore
	spanwalk.Each(td, func(s ptrace.Span) { items = append(items, scoresOf(s, w.cfg.Project)...) })
	for len(items) > 0 {
		n := min(len(items), w.cfg.FeedbackScores.BatchSize)
		if err := retryable(w.api.PutScores(ctx, items[:n])); err != nil {
			return err
		}
		items = items[n:]
	}
	return nil
}

// retryable tells the exporter helper what to do with an error: drop a
// permanent refusal, wait as long as a 429 or 503 asks, retry the rest.
func retryable(err error) error {
	var se *opikapi.StatusError
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &se):
		return err
	case se.Permanent():
		return consumererror.NewPermanent(err)
	case se.RetryAfter > 0 && (se.Code == http.StatusTooManyRequests || se.Code == http.StatusServiceUnavailable):
		return exporterhelper.NewThrottleRetry(err, se.RetryAfter)
	}
	return err
}
