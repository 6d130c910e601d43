package proxyreceiver

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/internal/opikid"
	"github.com/mlx-otelcol/mlx-otelcol/proxy"
)

// Feedback on a traced answer reaches the logs pipeline as one
// gen_ai.evaluation.result event in the answer's trace context, carrying
// the Opik trace the opik exporter made of the span, as metadata.yaml
// says.
func TestFeedbackAsDocumented(t *testing.T) {
	s := newStackOf(t, RecordsFeedback)
	resp, err := s.client.Post(s.url+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"messages": [{"role": "user", "content": "Say hello"}], "max_tokens": 8}`))
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	traceID := resp.Header.Get(proxy.TraceIDHeader)
	require.Len(t, traceID, 32)
	span := s.spans(t, 1)[0]
	require.Equal(t, traceID, span.TraceID().String())

	fb, err := s.client.Post(s.url+proxy.FeedbackPath, "application/json",
		strings.NewReader(`{"trace_id": "`+traceID+`", "score": "down", "comment": "wrong river"}`))
	require.NoError(t, err)
	fb.Body.Close()
	require.Equal(t, http.StatusOK, fb.StatusCode)

	require.Eventually(t, func() bool { return s.logs.LogRecordCount() == 1 }, 5*time.Second, 5*time.Millisecond)
	sl := s.logs.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0)
	assert.Equal(t, proxy.FeedbackLogger, sl.Scope().Name())
	lr := sl.LogRecords().At(0)
	checkAgainstSchema(t, logKind(t, "feedback"), lr.Attributes())
	assert.Equal(t, "gen_ai.evaluation.result", lr.EventName())
	assert.Equal(t, span.TraceID(), lr.TraceID())
	assert.Equal(t, span.SpanID(), lr.SpanID())
	at := lr.Attributes().AsRaw()
	assert.Equal(t, "user_feedback", at["gen_ai.evaluation.name"])
	assert.Equal(t, 0.0, at["gen_ai.evaluation.score.value"])
	assert.Equal(t, "down", at["gen_ai.evaluation.score.label"])
	assert.Equal(t, "wrong river", at["gen_ai.evaluation.explanation"])
	assert.Equal(t, opikid.Trace(span.TraceID(), span.SpanID(), span.StartTimestamp().AsTime()), at["opik.trace_id"])
	assert.Equal(t, "local", at["mlx.client"])
}
