package perf

import (
	"compress/gzip"
	"context"
	"io"
	"net"
	"net/http"
	"sync/atomic"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	// The collector's otlp exporters compress with gzip by default.
	_ "google.golang.org/grpc/encoding/gzip"
)

// SpanSink stands where the stores stand in the shipped config: Jaeger's
// OTLP/gRPC receiver (127.0.0.1:14317) and VictoriaLogs' OTLP/HTTP logs
// endpoint (127.0.0.1:9428). It takes every export, counts the spans and
// log records and keeps nothing. The collector does all of its work (spans
// and records built, batched, encoded and sent) and the stores' own CPU
// stays out of the figures.
type SpanSink struct {
	ptraceotlp.UnimplementedGRPCServer
	srv     *grpc.Server
	addr    string
	logs    *http.Server
	logsURL string
	spans   atomic.Int64
	records atomic.Int64
}

// StartSpanSink listens on two loopback ports of its own.
func StartSpanSink() (*SpanSink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	logsLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		ln.Close()
		return nil, err
	}
	s := &SpanSink{srv: grpc.NewServer(), addr: ln.Addr().String(), logsURL: "http://" + logsLn.Addr().String()}
	ptraceotlp.RegisterGRPCServer(s.srv, s)
	s.logs = &http.Server{Handler: http.HandlerFunc(s.exportLogs)}
	go func() { _ = s.srv.Serve(ln) }()
	go func() { _ = s.logs.Serve(logsLn) }()
	return s, nil
}

// exportLogs answers VictoriaLogs' OTLP/HTTP path as it does: protobuf in,
// an empty response out.
func (s *SpanSink) exportLogs(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/insert/opentelemetry/v1/logs" {
		http.NotFound(w, r)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	req := plogotlp.NewExportRequest()
	if err == nil {
		err = req.UnmarshalProto(b)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.records.Add(int64(req.Logs().LogRecordCount()))
	out, _ := plogotlp.NewExportResponse().MarshalProto()
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// LogsURL is the sink's base URL, for MLX_VLOGS_URL.
func (s *SpanSink) LogsURL() string { return s.logsURL }

// Records is how many log records arrived.
func (s *SpanSink) Records() int64 { return s.records.Load() }

// Export counts the request's spans.
func (s *SpanSink) Export(_ context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	s.spans.Add(int64(req.Traces().SpanCount()))
	return ptraceotlp.NewExportResponse(), nil
}

// Addr is the sink's host:port, for MLX_JAEGER_OTLP.
func (s *SpanSink) Addr() string { return s.addr }

// Spans is how many spans arrived.
func (s *SpanSink) Spans() int64 { return s.spans.Load() }

// Stop stops serving.
func (s *SpanSink) Stop() {
	s.srv.Stop()
	_ = s.logs.Close()
}
