package perf

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
)

// The sink answers the collector's VictoriaLogs exporter as VictoriaLogs
// does, so the benchmark's log sinks succeed instead of retrying.
func TestSinkTakesLogRecordsAtVictoriaLogsPath(t *testing.T) {
	s, err := StartSpanSink()
	require.NoError(t, err)
	t.Cleanup(s.Stop)
	logs := plog.NewLogs()
	recs := logs.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	recs.AppendEmpty().Body().SetStr("a")
	recs.AppendEmpty().Body().SetStr("b")
	body, err := plogotlp.NewExportRequestFromLogs(logs).MarshalProto()
	require.NoError(t, err)

	resp, err := http.Post(s.LogsURL()+"/insert/opentelemetry/v1/logs", "application/x-protobuf", bytes.NewReader(body))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.EqualValues(t, 2, s.Records())

	resp, err = http.Post(s.LogsURL()+"/v1/logs", "application/x-protobuf", bytes.NewReader(body))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "only VictoriaLogs' path")
}
