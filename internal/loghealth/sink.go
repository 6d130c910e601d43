package loghealth

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/plog"
)

// Sink counts what one sink exporter of a log pipeline really did: records
// its destination accepted (by severity), failed export attempts, records it
// gave up on or could not queue, and what waits in its queue. An exporter
// built on the exporter helper uses it in three places: Telemetry for the
// helper's settings, Push around its push function, and Wrap around the
// exporter the helper returns.
type Sink struct {
	stats *Stats
	name  string
	tap   *meterTap
}

// NewSink counts into stats under the sink label name (the exporter's id).
func NewSink(stats *Stats, name string) *Sink {
	return &Sink{
		stats: stats,
		name:  name,
		tap: &meterTap{
			onEnqueueFailed: func(n int64) { stats.AddDropped(ReasonQueueFull, name, uint64(n)) },
			onSendFailed:    func(n int64) { stats.AddDropped(ReasonExportFailed, name, uint64(n)) },
		},
	}
}

// Telemetry returns set with the sink's tap in front of its MeterProvider.
// Give the result to the exporter helper, and only to it: the tap takes the
// helper's drop counts and queue size as the sink's.
func (s *Sink) Telemetry(set component.TelemetrySettings) component.TelemetrySettings {
	s.tap.MeterProvider = set.MeterProvider
	set.MeterProvider = s.tap
	return set
}

// Push wraps the function that delivers a batch to the destination: a nil
// return means the destination accepted every record, and only then are they
// counted as shipped.
func (s *Sink) Push(push consumer.ConsumeLogsFunc) consumer.ConsumeLogsFunc {
	return func(ctx context.Context, ld plog.Logs) error {
		counts := CountBySeverity(ld)
		if err := push(ctx, ld); err != nil {
			s.stats.AddErrors(1)
			return err
		}
		s.stats.AddShipped(s.name, counts)
		return nil
	}
}

// Wrap returns the exporter the pipeline should see. It registers the queue
// size reader while the exporter runs, and it never returns an error to the
// pipeline: a failure of this sink is already counted (queue_full or
// export_failed, through the helper's telemetry) and logged by the helper,
// and returning it would make the file_log receiver resend the batch to
// every sink, duplicating it in the sinks that had accepted it.
func (s *Sink) Wrap(exp exporter.Logs) exporter.Logs {
	return &sinkExporter{Logs: exp, sink: s}
}

type sinkExporter struct {
	exporter.Logs
	sink *Sink
}

func (e *sinkExporter) Start(ctx context.Context, host component.Host) error {
	if err := e.Logs.Start(ctx, host); err != nil {
		return err
	}
	e.sink.stats.SetQueue(e.sink.name, e.sink.tap.queueSize)
	return nil
}

func (e *sinkExporter) Shutdown(ctx context.Context) error {
	e.sink.stats.RemoveQueue(e.sink.name)
	return e.Logs.Shutdown(ctx)
}

func (e *sinkExporter) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	_ = e.Logs.ConsumeLogs(ctx, ld) // counted and logged by the helper; see Wrap
	return nil
}
