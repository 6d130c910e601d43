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
	resp, err := http.Post(s.Endpoint()+"/v1/logs", contentType, strings.NewReader(body))
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
	assert.Equal(t, `{"partialSuccess":{}}`, post(t, s, "application/json", body))
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
	post(t, s, "application/json", `{"resource_logs":[{"scope_logs":[{"log_records":[{"attributes":[{"key":"request.id","value":{"intValue":"7"}}],"body":{"choices":[{"delta":{"content":"x"}}]}}]}]}]}`)
	_, ok := s.Stream("7")
	assert.False(t, ok)
	st, ok := s.Stream("")
	require.True(t, ok)
	assert.Equal(t, "x", st.Text)
	// Protobuf is dropped silently and still answered 200.
	assert.Equal(t, `{"partialSuccess":{}}`, post(t, s, "application/x-protobuf", "\x0a\x02\x08\x01"))
	assert.Equal(t, 1, s.Streams())
	assert.Equal(t, []int{1}, s.Posts())
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
