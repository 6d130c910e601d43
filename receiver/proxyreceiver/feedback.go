package proxyreceiver

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/mlx-otelcol/mlx-otelcol/proxy"
)

// evaluationEvent is the OTel GenAI event of an evaluation result: a
// person's feedback is one, as a judge's score is.
const evaluationEvent = "gen_ai.evaluation.result"

// feedbackToLogs turns feedback records into one gen_ai.evaluation.result
// event each, in the judged request's trace context, with the Opik trace
// the opik exporter writes the score on.
func feedbackToLogs(recs []*proxy.FeedbackRecord) plog.Logs {
	ld, lrs := newProxyLogs(proxy.FeedbackLogger, len(recs))
	for _, f := range recs {
		lr := lrs.AppendEmpty()
		ts := pcommon.NewTimestampFromTime(f.Time)
		lr.SetEventName(evaluationEvent)
		lr.SetTimestamp(ts)
		lr.SetObservedTimestamp(ts)
		lr.SetSeverityNumber(plog.SeverityNumberInfo)
		lr.SetSeverityText("INFO")
		lr.SetTraceID(pcommon.TraceID(f.TraceID))
		lr.SetSpanID(pcommon.SpanID(f.SpanID))
		at := lr.Attributes()
		at.PutStr(attrGenAiEvaluationName, f.Name)
		at.PutDouble(attrGenAiEvaluationScoreValue, f.Score)
		at.PutStr(attrGenAiEvaluationScoreLabel, f.Label)
		if f.Comment != "" {
			at.PutStr(attrGenAiEvaluationExplanation, f.Comment)
		}
		at.PutStr(attrGenAiRequestModel, f.Model)
		if f.ResponseID != "" {
			at.PutStr(attrGenAiResponseId, f.ResponseID)
		}
		at.PutStr(attrOpikTraceId, f.OpikTraceID)
		if f.Client != "" {
			at.PutStr(attrMlxClient, f.Client)
		}
	}
	return ld
}
