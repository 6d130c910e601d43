package proxyreceiver

import (
	"context"
	"fmt"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mlx-otelcol/mlx-otelcol/proxy"
)

// source is what the mlx_proxy extension offers its receiver.
type source interface {
	AttachSpans(proxy.SpanSink) (detach func(context.Context), err error)
	AttachAccessLog(proxy.AccessLogSink) (detach func(context.Context), err error)
	AttachLive(proxy.LiveSink) (detach func(context.Context), err error)
}

// findSource looks the extension up among the running ones.
func findSource(host component.Host, id component.ID) (source, error) {
	ext, ok := host.GetExtensions()[id]
	if !ok {
		return nil, fmt.Errorf("mlx_proxy receiver: extension %q is not running (add it to service.extensions)", id)
	}
	src, ok := ext.(source)
	if !ok {
		return nil, fmt.Errorf("mlx_proxy receiver: extension %q is not an mlx_proxy extension", id)
	}
	return src, nil
}

// attachment is the part both receivers share: attach at Start, detach at
// Shutdown (safe without Start, and more than once). The collector shuts
// receivers down before extensions: detaching hands the pipeline what the
// proxy has buffered, within Shutdown's context, and returns when the
// pipeline is not called any more.
type attachment struct {
	mu     sync.Mutex
	detach func(context.Context)
}

func (a *attachment) set(detach func(context.Context)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.detach = detach
}

func (a *attachment) Shutdown(ctx context.Context) error {
	a.mu.Lock()
	detach := a.detach
	a.detach = nil
	a.mu.Unlock()
	if detach != nil {
		detach(ctx)
	}
	return nil
}

// tracesReceiver feeds the proxy's spans into a traces pipeline.
type tracesReceiver struct {
	attachment
	cfg  *Config
	next consumer.Traces
	obs  *receiverhelper.ObsReport
}

func newTracesReceiver(cfg *Config, set receiver.Settings, next consumer.Traces) (*tracesReceiver, error) {
	obs, err := receiverhelper.NewObsReport(receiverhelper.ObsReportSettings{ReceiverID: set.ID, Transport: transport, ReceiverCreateSettings: set})
	if err != nil {
		return nil, err
	}
	return &tracesReceiver{cfg: cfg, next: next, obs: obs}, nil
}

// transport is the otelcol_receiver_* transport label: the records come
// from memory.
const transport = "memory"

func (r *tracesReceiver) Start(_ context.Context, host component.Host) error {
	src, err := findSource(host, r.cfg.Extension)
	if err != nil {
		return err
	}
	detach, err := src.AttachSpans(r.consume)
	if err != nil {
		return err
	}
	r.set(detach)
	return nil
}

func (r *tracesReceiver) consume(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	td := spansToTraces(spans)
	ctx = r.obs.StartTracesOp(ctx)
	err := r.next.ConsumeTraces(ctx, td)
	r.obs.EndTracesOp(ctx, "otlp", td.SpanCount(), err)
	return err
}

// logsReceiver feeds the proxy's access log, or its live stream, into a
// logs pipeline.
type logsReceiver struct {
	attachment
	cfg  *Config
	next consumer.Logs
	obs  *receiverhelper.ObsReport
}

func newLogsReceiver(cfg *Config, set receiver.Settings, next consumer.Logs) (*logsReceiver, error) {
	obs, err := receiverhelper.NewObsReport(receiverhelper.ObsReportSettings{ReceiverID: set.ID, Transport: transport, ReceiverCreateSettings: set})
	if err != nil {
		return nil, err
	}
	return &logsReceiver{cfg: cfg, next: next, obs: obs}, nil
}

func (r *logsReceiver) Start(_ context.Context, host component.Host) error {
	src, err := findSource(host, r.cfg.Extension)
	if err != nil {
		return err
	}
	var detach func(context.Context)
	if r.cfg.Records == RecordsLive {
		detach, err = src.AttachLive(func(ctx context.Context, recs []*proxy.LiveRecord) error {
			return r.consume(ctx, liveToLogs(recs))
		})
	} else {
		detach, err = src.AttachAccessLog(func(ctx context.Context, recs []*proxy.AccessRecord) error {
			return r.consume(ctx, accessToLogs(recs))
		})
	}
	if err != nil {
		return err
	}
	r.set(detach)
	return nil
}

func (r *logsReceiver) consume(ctx context.Context, ld plog.Logs) error {
	ctx = r.obs.StartLogsOp(ctx)
	err := r.next.ConsumeLogs(ctx, ld)
	r.obs.EndLogsOp(ctx, "otlp", ld.LogRecordCount(), err)
	return err
}
