package velotest

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func post(t *testing.T, s *Server, contentType, body string) string {
	return postTo(t, s, "/v1/logs", contentType, body)
}

func postTo(t *testing.T, s *Server, path, contentType, body string) string {
	resp, err := http.Post(s.Endpoint()+path, contentType, strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	return string(b)
}

func TestBodiesInEveryAcceptedForm(t *testing.T) {
	s, err := Start()
	require.NoError(t, err)
	defer s.Close()
	body := `{"resourceLogs":[{"scopeLogs":[{"logRecords":[
	  {"timeUnixNano":"1000000","attributes":[{"key":"event","value":{"stringValue":"stream_start"}},{"key":"request.id","value":{"stringValue":"r1"}},{"key":"model.id","value":{"stringValue":"m"}}]},
	  {"attributes":[{"key":"request.id","value":{"stringValue":"r1"}}],"body":{"choices":[{"index":0,"delta":{"content":"Hel"}}]}},
	  {"attributes":[{"key":"request.id","value":{"stringValue":"r1"}},{"key":"event","value":{"stringValue":"stream_delta"}}],"body":{"stringValue":"{\"choices\":[{\"delta\":{\"content\":\"lo\",\"reasoning\":\"r\"}}]}"}},
	  {"attributes":[{"key":"request.id","value":{"stringValue":"r1"}}],"body":{"kvlistValue":{"values":[{"key":"choices","value":{"stringValue":"[{\"delta\":{\"tool_calls\":[{\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}}]"}}]}}},
	  {"observed_time_unix_nano":5000000,"attributes":[{"key":"request.id","value":{"stringValue":"r1"}},{"key":"event","value":{"stringValue":"stream_end"}},{"key":"token.index","value":{"intValue":"3"}}],"body":{"choices":[{"delta":{},"finish_reason":"stop"}]}}
	]}]}]}`
	assert.Equal(t, `{"ingested":5}`, post(t, s, "application/json", body))
	st, ok := s.Stream("r1")
	require.True(t, ok)
	assert.Equal(t, Stream{RequestID: "r1", Model: "m", Text: "Hello", Reasoning: "r", Tools: "\n[tool f] {}",
		FinishReason: "stop", Deltas: 3, Starts: 1, Done: true, LastMs: 5}, st)
}

func TestOnlyStringAttributesAndJSONBodies(t *testing.T) {
	s, err := Start()
	require.NoError(t, err)
	defer s.Close()
	// A request.id that is not a stringValue reads as "".
	post(t, s, "application/json", `{"resource_logs":[{"scope_logs":[{"log_records":[
	  {"attributes":[{"key":"request.id","value":{"intValue":"7"}},{"key":"event","value":{"stringValue":"stream_start"}}]},
	  {"attributes":[{"key":"request.id","value":{"intValue":"7"}}],"body":{"choices":[{"delta":{"content":"x"}}]}}]}]}]}`)
	_, ok := s.Stream("7")
	assert.False(t, ok)
	st, ok := s.Stream("")
	require.True(t, ok)
	assert.Equal(t, "x", st.Text)
	// Protobuf is dropped silently and still answered 200.
	assert.Equal(t, `{"partialSuccess":{}}`, post(t, s, "application/x-protobuf", "\x0a\x02\x08\x01"))
	assert.Equal(t, 1, s.Streams())
	assert.Equal(t, []int{2}, s.Posts())
}

// A delta or an end of a stream no stream_start opened is ignored; a
// second stream_start of a panel is a new turn: the text goes on, the
// finish is reset.
func TestStartsOpenPanelsAndTurnsContinueThem(t *testing.T) {
	s, err := Start()
	require.NoError(t, err)
	defer s.Close()
	rec := func(id, event, content string) string {
		return `{"attributes":[{"key":"request.id","value":{"stringValue":"` + id + `"}},{"key":"event","value":{"stringValue":"` + event + `"}}],"body":{"choices":[{"delta":{"content":"` + content + `"},"finish_reason":"stop"}]}}`
	}
	post(t, s, "application/json", `{"resourceLogs":[{"scopeLogs":[{"logRecords":[`+
		rec("orphan", "stream_delta", "lost")+`,`+rec("orphan", "stream_end", "")+`,`+
		rec("p", "stream_start", "")+`,`+rec("p", "stream_delta", "one ")+`,`+rec("p", "stream_end", "")+`,`+
		rec("p", "stream_start", "")+`,`+rec("p", "stream_delta", "two")+`,`+rec("p", "stream_mystery", "?")+`]}]}]}`)
	_, ok := s.Stream("orphan")
	assert.False(t, ok)
	st, _ := s.Stream("p")
	assert.Equal(t, Stream{RequestID: "p", Text: "one two", Starts: 2, Deltas: 2, FinishReason: "stop"}, st)
}

// /v1/metrics counts the metrics of a JSON ExportMetricsServiceRequest,
// either casing, and answers {"accepted":N}; protobuf is dropped.
func TestMetricsAreCounted(t *testing.T) {
	s, err := Start()
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, `{"accepted":2}`, postTo(t, s, "/v1/metrics", "application/json", `{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"a"},{"name":"b"}]}]}]}`))
	assert.Equal(t, `{"accepted":1}`, postTo(t, s, "/v1/metrics", "application/json", `{"resource_metrics":[{"scope_metrics":[{"metrics":[{"name":"c"}]}]}]}`))
	assert.Equal(t, `{"partialSuccess":{}}`, postTo(t, s, "/v1/metrics", "application/x-protobuf", "\x0a\x02\x08\x01"))
	assert.Equal(t, 2, s.MetricPosts())
	assert.Equal(t, 3, s.MetricPoints())
}

func TestStatusAndTimestamps(t *testing.T) {
	s, err := Start()
	require.NoError(t, err)
	defer s.Close()
	post(t, s, "application/json", `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":[{"key":"event","value":{"stringValue":"status"}},{"key":"model.id","value":{"stringValue":"m"}},{"key":"topology","value":{"stringValue":"tp2"}}]}]}]}]}`)
	assert.Equal(t, &Status{Model: "m", Topology: "tp2"}, s.Status())
	ms, ok := TimestampMs("1700000000000000000")
	assert.True(t, ok)
	assert.Equal(t, 1.7e12, ms)
	ms, ok = TimestampMs(float64(2e6))
	assert.True(t, ok)
	assert.Equal(t, 2.0, ms)
}
