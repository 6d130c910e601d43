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

	"github.com/mlx-otelcol/mlx-otelcol/proxy"
)

// source is what the mlx_proxy extension offers its receiver.
type source interface {
	AttachSpans(proxy.SpanSink) (detach func(context.Context), err error)
	AttachAccessLog(proxy.AccessLogSink) (detach func(context.Context), err error)
	AttachLive(proxy.LiveSink) (detach func(context.Context), err error)
	AttachFeedback(proxy.FeedbackSink) (detach func(context.Context), err error)
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

// attachment is the part both receivers share: the extension's id, the
// receiver's own telemetry, attach at Start and detach at Shutdown (safe
// without Start, and more than once). The collector shuts receivers down
// before extensions: detaching hands the pipeline what the proxy has
// buffered, within Shutdown's context, and returns when the pipeline is
// not called any more.
type attachment struct {
	cfg *Config
	obs *receiverhelper.ObsReport

	mu     sync.Mutex
	detach func(context.Context)
}

func (a *attachment) init(cfg *Config, set receiver.Settings) (err error) {
	a.cfg = cfg
	a.obs, err = receiverhelper.NewObsReport(receiverhelper.ObsReportSettings{ReceiverID: set.ID, Transport: transport, ReceiverCreateSettings: set})
	return err
}

// transport is the otelcol_receiver_* transport label: the records come
// from memory.
const transport = "memory"

// attachTo finds the extension and attaches to it with attach.
func (a *attachment) attachTo(host component.Host, attach func(source) (func(context.Context), error)) error {
	src, err := findSource(host, a.cfg.Extension)
	if err != nil {
		return err
	}
	detach, err := attach(src)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.detach = detach
	return nil
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
	next consumer.Traces
}

func newTracesReceiver(cfg *Config, set receiver.Settings, next consumer.Traces) (*tracesReceiver, error) {
	r := &tracesReceiver{next: next}
	if err := r.init(cfg, set); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *tracesReceiver) Start(_ context.Context, host component.Host) error {
	return r.attachTo(host, func(src source) (func(context.Context), error) { return src.AttachSpans(r.consume) })
}

func (r *tracesReceiver) consume(ctx context.Context, spans []*proxy.Span) error {
	td := spansToTraces(spans)
	ctx = r.obs.StartTracesOp(ctx)
	err := r.next.ConsumeTraces(ctx, td)
	r.obs.EndTracesOp(ctx, "otlp", td.SpanCount(), err)
	return err
}

// logsReceiver feeds the proxy's access log, its feedback, or its live
// stream into a logs pipeline.
type logsReceiver struct {
	attachment
	next consumer.Logs
}

func newLogsReceiver(cfg *Config, set receiver.Settings, next consumer.Logs) (*logsReceiver, error) {
	r := &logsReceiver{next: next}
	if err := r.init(cfg, set); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *logsReceiver) Start(_ context.Context, host component.Host) error {
	return r.attachTo(host, func(src source) (func(context.Context), error) {
		switch r.cfg.Records {
		case RecordsLive:
			return src.AttachLive(func(ctx context.Context, recs []*proxy.LiveRecord) error {
				return r.consume(ctx, liveToLogs(recs))
			})
		case RecordsFeedback:
			return src.AttachFeedback(func(ctx context.Context, recs []*proxy.FeedbackRecord) error {
				return r.consume(ctx, feedbackToLogs(recs))
			})
		}
		return src.AttachAccessLog(func(ctx context.Context, recs []*proxy.AccessRecord) error {
			return r.consume(ctx, accessToLogs(recs))
		})
	})
}

func (r *logsReceiver) consume(ctx context.Context, ld plog.Logs) error {
	ctx = r.obs.StartLogsOp(ctx)
	err := r.next.ConsumeLogs(ctx, ld)
	r.obs.EndLogsOp(ctx, "otlp", ld.LogRecordCount(), err)
	return err
}
