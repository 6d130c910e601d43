package judgereceiver

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/mlx-otelcol/mlx-otelcol/internal/judge"
)

// eventName is the OTel GenAI event of an evaluation result.
const eventName = "gen_ai.evaluation.result"

// serviceName is the resource of the events.
const serviceName = "mlx-judge"

// The attributes of an evaluation event (documentation.md, "Evaluation
// events").
const (
	attrEvalName    = string(semconv.GenAIEvaluationNameKey)
	attrScoreValue  = string(semconv.GenAIEvaluationScoreValueKey)
	attrExplanation = string(semconv.GenAIEvaluationExplanationKey)
	attrOpikTraceID = "opik.trace_id"
	attrJudgeModel  = "mlx.judge.model"
	attrJudgedModel = "gen_ai.request.model"
)

// evaluationEvents turns the scored judgements of a pass into one
// gen_ai.evaluation.result log record per score, in the judged span's
// trace context.
func evaluationEvents(p *judge.Pass, scoreNames []string, judgeModel string, now time.Time) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr(string(semconv.ServiceNameKey), serviceName)
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName(scopeName)
	ts := pcommon.NewTimestampFromTime(now)
	for _, j := range p.Judgements {
		if j.Result != judge.ResultScored {
			continue
		}
		c := j.Candidate
		for _, name := range scoreNames {
			lr := sl.LogRecords().AppendEmpty()
			lr.SetEventName(eventName)
			lr.SetTimestamp(ts)
			lr.SetObservedTimestamp(ts)
			lr.SetSeverityNumber(plog.SeverityNumberInfo)
			lr.SetSeverityText("INFO")
			if c.HasIDs {
				lr.SetTraceID(c.TraceID)
				lr.SetSpanID(c.SpanID)
			}
			at := lr.Attributes()
			at.PutStr(attrEvalName, name)
			at.PutDouble(attrScoreValue, j.Scores[name])
			at.PutStr(attrExplanation, judge.Reason)
			at.PutStr(attrJudgeModel, judgeModel)
			if c.Model != "" {
				at.PutStr(attrJudgedModel, c.Model)
			}
			if c.OpikID != "" {
				at.PutStr(attrOpikTraceID, c.OpikID)
			}
		}
	}
	return ld
}
