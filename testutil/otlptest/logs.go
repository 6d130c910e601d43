// Package otlptest is an OTLP/HTTP logs endpoint for tests: it accepts
// export requests (gzip or not) and keeps what they carried, or answers
// every request with a chosen error status.
package otlptest

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
)

// LogsDestination is a running endpoint; its URL is the base a sink
// appends /v1/logs to.
type LogsDestination struct {
	*httptest.Server
	status   atomic.Int32 // 0: accept
	mu       sync.Mutex
	bodies   []string
	records  []Record
	projects []string
}

// Record is what the destination keeps of an accepted log record besides
// its body.
type Record struct {
	EventName  string
	Attributes map[string]any
}

// NewLogsDestination starts an endpoint that lives until the test ends.
func NewLogsDestination(t testing.TB) *LogsDestination {
	d := &LogsDestination{}
	d.Server = httptest.NewServer(http.HandlerFunc(d.serve))
	t.Cleanup(d.Close)
	return d
}

func (d *LogsDestination) serve(w http.ResponseWriter, r *http.Request) {
	if s := d.status.Load(); s != 0 {
		w.WriteHeader(int(s))
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, _ := io.ReadAll(body)
	req := plogotlp.NewExportRequest()
	if r.URL.Path != "/v1/logs" || req.UnmarshalProto(b) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	d.mu.Lock()
	rls := req.Logs().ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		sls := rls.At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				lr := lrs.At(k)
				d.bodies = append(d.bodies, lr.Body().Str())
				d.records = append(d.records, Record{EventName: lr.EventName(), Attributes: lr.Attributes().AsRaw()})
			}
		}
	}
	d.projects = append(d.projects, r.Header.Get("projectName"))
	d.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	resp, _ := plogotlp.NewExportResponse().MarshalProto()
	_, _ = w.Write(resp)
}

// SetStatus makes every request get this status from now on; 0 accepts
// again.
func (d *LogsDestination) SetStatus(code int) { d.status.Store(int32(code)) }

// Bodies are the bodies of every record accepted, in the order received.
func (d *LogsDestination) Bodies() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.bodies...)
}

// Records are the event names and attributes of every record accepted.
func (d *LogsDestination) Records() []Record {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Record(nil), d.records...)
}

// Projects is the projectName header of every accepted request.
func (d *LogsDestination) Projects() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.projects...)
}
