package judgereceiver

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/mlx-otelcol/mlx-otelcol/internal/judge"
)

// eventName is the OTel GenAI event of an evaluation result.
const eventName = "gen_ai.evaluation.result"

// serviceName is the resource of the events.
const serviceName = "mlx-judge"

// evaluationEvents turns the scored judgements of a pass into one
// gen_ai.evaluation.result log record per score, in the judged span's
// trace context. Its keys are metadata.yaml's (generated_attributes.go).
func evaluationEvents(p *judge.Pass, scoreNames []string, judgeModel, reason string, now time.Time) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr(attrServiceName, serviceName)
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
			at.PutStr(attrGenAiEvaluationName, name)
			at.PutDouble(attrGenAiEvaluationScoreValue, j.Scores[name])
			at.PutStr(attrGenAiEvaluationExplanation, reason)
			at.PutStr(attrMlxJudgeModel, judgeModel)
			if c.Model != "" {
				at.PutStr(attrGenAiRequestModel, boundModel(c.Model))
			}
			if c.OpikID != "" {
				at.PutStr(attrOpikTraceId, c.OpikID)
			}
		}
	}
	return ld
}
