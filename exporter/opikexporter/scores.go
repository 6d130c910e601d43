package opikexporter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The span attributes the scores are read from (the proxy's; see
// receiver/proxyreceiver/documentation.md).
const (
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
	eachSpan(td, func(s ptrace.Span) {
		at := s.Attributes()
		if _, ok := at.Get(attrRisk); !ok {
			return
		}
		if _, ok := at.Get(opikTraceIDKey); !ok {
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
		for _, k := range []string{opikTraceIDKey, attrRisk, attrFlagged, attrConfidence, attrTokens, attrSource} {
			if v, ok := at.Get(k); ok {
				v.CopyTo(c.Attributes().PutEmpty(k))
			}
		}
	})
	return out
}

// feedbackScore is one item of Opik's PUT /v1/private/traces/feedback-scores.
type feedbackScore struct {
	ID           string  `json:"id"`
	ProjectName  string  `json:"project_name"`
	Name         string  `json:"name"`
	Value        float64 `json:"value"`
	Reason       string  `json:"reason"`
	CategoryName string  `json:"category_name"`
	Source       string  `json:"source"`
}

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
	id, _ := at.Get(opikTraceIDKey)
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
	cfg    *Config
	client *http.Client
}

func newScoreWriter(c *Config) *scoreWriter {
	return &scoreWriter{cfg: c, client: &http.Client{Timeout: c.Timeout}}
}

func (w *scoreWriter) shutdown(context.Context) error {
	w.client.CloseIdleConnections()
	return nil
}

// push writes the scores of td's spans in batches of at most
// feedback_scores.batch_size. Opik answers 204; a 4xx other than 408 and
// 429 is permanent (the batch is dropped and counted), anything else is
// retried by the helper. Writing a score again overwrites it, so a retry
// of a batch that partly succeeded is harmless.
func (w *scoreWriter) push(ctx context.Context, td ptrace.Traces) error {
	var items []feedbackScore
	eachSpan(td, func(s ptrace.Span) { items = append(items, scoresOf(s, w.cfg.Project)...) })
	for len(items) > 0 {
		n := min(len(items), w.cfg.FeedbackScores.BatchSize)
		if err := w.put(ctx, items[:n]); err != nil {
			return err
		}
		items = items[n:]
	}
	return nil
}

func (w *scoreWriter) put(ctx context.Context, batch []feedbackScore) error {
	body, err := json.Marshal(struct {
		Scores []feedbackScore `json:"scores"`
	}{batch})
	if err != nil {
		return consumererror.NewPermanent(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, w.cfg.scoresURL(), bytes.NewReader(body))
	if err != nil {
		return consumererror.NewPermanent(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range w.cfg.headers() {
		req.Header.Set(k, v)
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable:
		err := fmt.Errorf("opik feedback scores: %s: %s", resp.Status, bytes.TrimSpace(msg))
		if after, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil && after > 0 {
			return exporterhelper.NewThrottleRetry(err, time.Duration(after)*time.Second)
		}
		return err
	case resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusRequestTimeout:
		return consumererror.NewPermanent(fmt.Errorf("opik feedback scores: %s: %s", resp.Status, bytes.TrimSpace(msg)))
	}
	return fmt.Errorf("opik feedback scores: %s: %s", resp.Status, bytes.TrimSpace(msg))
}
