package opikexporter

import (
	"context"
	"unicode/utf8"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/mlx-otelcol/mlx-otelcol/internal/opikapi"
)

// The logs half: gen_ai.evaluation.result events that name their Opik
// trace (opik.trace_id) become that trace's feedback scores. It is how
// feedback from people (the mlx_proxy receiver, records: feedback)
// reaches Opik through a pipeline, with the exporter helper's queue and
// retries, rather than by a side channel of the proxy's. Any other record
// is ignored.

// The evaluation event's name and keys (OTel GenAI events; the proxy's
// and the judge's metadata.yaml).
const (
	evaluationEvent   = "gen_ai.evaluation.result"
	attrEvalName      = "gen_ai.evaluation.name"
	attrEvalValue     = "gen_ai.evaluation.score.value"
	attrEvalReason    = "gen_ai.evaluation.explanation"
	attrOpikTraceID   = "opik.trace_id"
	feedbackScope     = "mlx.proxy.feedback" // proxy.FeedbackLogger: a person's verdict
	feedbackCategory  = "user"
	sourcePerson      = "ui" // Opik's source of a score a person gave
	sourceInstrument  = "sdk"
	maxScoreReasonLen = 4096
)

// createLogs makes the logs half; with no endpoint it takes everything and
// sends nothing, as the traces half does.
func createLogs(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Logs, error) {
	c := cfg.(*Config)
	if c.Endpoint == "" {
		return &offExporter{log: set.Logger}, nil
	}
	api := c.client()
	push := func(ctx context.Context, ld plog.Logs) error {
		scores := evaluationScores(ld, c.Project)
		for len(scores) > 0 {
			n := min(len(scores), c.FeedbackScores.BatchSize)
			if err := retryable(api.PutScores(ctx, scores[:n])); err != nil {
				return err
			}
			scores = scores[n:]
		}
		return nil
	}
	return exporterhelper.NewLogs(ctx, set, cfg, push,
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		exporterhelper.WithTimeout(exporterhelper.TimeoutConfig{Timeout: 0}),
		exporterhelper.WithRetry(c.RetryConfig),
		exporterhelper.WithQueue(c.QueueConfig),
		exporterhelper.WithShutdown(func(context.Context) error { api.HTTP.CloseIdleConnections(); return nil }))
}

// evaluationScores are the feedback scores of ld's evaluation events that
// name an Opik trace. A person's (the proxy's feedback scope) is written
// with source ui, as Opik marks scores given in its UI; any other with
// sdk.
func evaluationScores(ld plog.Logs, project string) []opikapi.Score {
	var out []opikapi.Score
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		sls := ld.ResourceLogs().At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			source, category := sourceInstrument, ""
			if sls.At(j).Scope().Name() == feedbackScope {
				source, category = sourcePerson, feedbackCategory
			}
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				if s, ok := scoreOf(lrs.At(k), project, source, category); ok {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

func scoreOf(lr plog.LogRecord, project, source, category string) (opikapi.Score, bool) {
	if lr.EventName() != evaluationEvent {
		return opikapi.Score{}, false
	}
	at := lr.Attributes()
	id, okID := at.Get(attrOpikTraceID)
	name, okName := at.Get(attrEvalName)
	value, okValue := at.Get(attrEvalValue)
	if !okID || !okName || !okValue || id.Str() == "" || name.Str() == "" {
		return opikapi.Score{}, false
	}
	var v float64
	switch value.Type() {
	case pcommon.ValueTypeDouble:
		v = value.Double()
	case pcommon.ValueTypeInt:
		v = float64(value.Int())
	default:
		return opikapi.Score{}, false
	}
	reason := ""
	if r, ok := at.Get(attrEvalReason); ok {
		reason = r.AsString()
		if len(reason) > maxScoreReasonLen {
			// Back off to a rune's start: never half a rune (invalid UTF-8).
			n := maxScoreReasonLen
			for n > 0 && !utf8.RuneStart(reason[n]) {
				n--
			}
			reason = reason[:n]
		}
	}
	return opikapi.Score{ID: id.Str(), ProjectName: project, Name: name.Str(), Value: round3(v),
		Reason: reason, CategoryName: category, Source: source}, true
}
