package perf

import (
	"context"
	"net"
	"sync/atomic"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	// The collector's otlp exporters compress with gzip by default.
	_ "google.golang.org/grpc/encoding/gzip"
)

// SpanSink stands where Jaeger's OTLP/gRPC receiver stands in the shipped
// config (127.0.0.1:14317): it takes every export, counts the spans and
// keeps nothing. The collector does all of its tracing work (spans built,
// batched, encoded and sent) and Jaeger's own CPU stays out of the figures.
type SpanSink struct {
	ptraceotlp.UnimplementedGRPCServer
	srv   *grpc.Server
	addr  string
	spans atomic.Int64
}

// StartSpanSink listens on a loopback port of its own.
func StartSpanSink() (*SpanSink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &SpanSink{srv: grpc.NewServer(), addr: ln.Addr().String()}
	ptraceotlp.RegisterGRPCServer(s.srv, s)
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

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
func (s *SpanSink) Stop() { s.srv.Stop() }
