package judgereceiver

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mdgen/mdschema"
	"github.com/mlx-otelcol/mlx-otelcol/internal/judge"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/doccheck"
)

// loadSchema reads metadata.yaml, the one schema of the events.
var loadSchema = sync.OnceValues(func() (*mdschema.Component, error) { return mdschema.Load("metadata.yaml") })

// checkEvents holds every resource and record of ld to metadata.yaml:
// every key is in it with its type, and every "always" key is there. It
// returns how many records it held.
func checkEvents(t *testing.T, ld plog.Logs) int {
	t.Helper()
	schema, err := loadSchema()
	require.NoError(t, err)
	evaluation, ok := schema.LogAttributes.Get(eventName)
	require.True(t, ok, "metadata.yaml has log_attributes.%s", eventName)
	n := 0
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		rl := ld.ResourceLogs().At(i)
		assert.NoError(t, doccheck.CheckAttributes(schema.ResourceAttributes, rl.Resource().Attributes()), "resource")
		for j := 0; j < rl.ScopeLogs().Len(); j++ {
			lrs := rl.ScopeLogs().At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				assert.NoError(t, doccheck.CheckAttributes(evaluation, lrs.At(k).Attributes()), "event %d", n)
				n++
			}
		}
	}
	return n
}

// An event with everything known and one with only the always keys are
// both as metadata.yaml says; a judgement that was not scored makes none.
func TestEventsAsInMetadata(t *testing.T) {
	scores := map[string]float64{"correctness": 0.9, "helpfulness": 0.5}
	ld := evaluationEvents(&judge.Pass{Judgements: []judge.Judgement{
		{Candidate: judge.Candidate{OpikID: "01a23331-527b-700d-a007-8bc1f20816b9", TraceID: [16]byte{1}, SpanID: [8]byte{2}, HasIDs: true, Model: "m"},
			Result: judge.ResultScored, Scores: scores},
		{Candidate: judge.Candidate{}, Result: judge.ResultScored, Scores: scores},
		{Candidate: judge.Candidate{Model: "m"}, Result: judge.ResultParseFailed},
	}}, []string{"correctness", "helpfulness"}, "default_model", judge.Reason, time.Now())
	assert.Equal(t, 4, checkEvents(t, ld))
	lrs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	assert.Len(t, lrs.At(0).Attributes().AsRaw(), 6, "every key when everything is known")
	assert.Len(t, lrs.At(3).Attributes().AsRaw(), 4, "the always keys only")
}

// The events' gen_ai keys and the resource key are the OTel semantic
// conventions' spelling.
func TestEventKeysAreSemconvs(t *testing.T) {
	assert.Equal(t, string(semconv.GenAIEvaluationNameKey), attrGenAiEvaluationName)
	assert.Equal(t, string(semconv.GenAIEvaluationScoreValueKey), attrGenAiEvaluationScoreValue)
	assert.Equal(t, string(semconv.GenAIEvaluationExplanationKey), attrGenAiEvaluationExplanation)
	assert.Equal(t, string(semconv.GenAIRequestModelKey), attrGenAiRequestModel)
	assert.Equal(t, string(semconv.ServiceNameKey), attrServiceName)
}
