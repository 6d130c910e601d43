package opikexporter

import (
	"errors"
	"math"
	"net/http"
	"strconv"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mlx-otelcol/mlx-otelcol/internal/opikapi"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/span/spankey"
)

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

// scoresOf returns a span's feedback scores on the trace id: none when
// the proxy did not score the answer, else hallucination_quality and
// hallucination_flagged, and token_confidence when it was scored.
func scoresOf(s ptrace.Span, id, project string) []feedbackScore {
	at := s.Attributes()
	risk, ok := at.Get(spankey.MlxHallucinationRisk)
	if !ok {
		return nil
	}
	flagged, _ := at.Get(spankey.MlxHallucinationFlagged)
	item := func(name string, value float64, category, reason string) feedbackScore {
		return feedbackScore{ID: id, ProjectName: project, Name: name, Value: round3(value),
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
	if conf, ok := at.Get(spankey.MlxConfidenceMean); ok {
		tokens, _ := at.Get(spankey.MlxScoredTokens)
		source, _ := at.Get(spankey.MlxLogprobsSource)
		out = append(out, item("token_confidence", conf.Double(), "quality", reasonConfidence(tokens.Int(), source.Str())))
	}
	return out
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

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
