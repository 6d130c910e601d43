package opikexporter

import (
	"context"
	"errors"
	"github.com/mlx-otelcol/mlx-otelcol/internal/spanwalk"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/mlx-otelcol/mlx-otelcol/internal/opikid"
)

// opikExporter stamps opik.trace_id, then hands the spans to the spans
// half and the spans that carry scores to the scores half.
type opikExporter struct {
	cfg    *Config
	log    *zap.Logger
	spans  exporter.Traces
	scores exporter.Traces // nil when feedback scores are off
}

func (e *opikExporter) Start(ctx context.Context, host component.Host) error {
	if err := e.spans.Start(ctx, host); err != nil {
		return err
	}
	if e.scores != nil {
		return e.scores.Start(ctx, host)
	}
	return nil
}

func (e *opikExporter) Shutdown(ctx context.Context) error {
	err := e.spans.Shutdown(ctx)
	if e.scores != nil {
		err = errors.Join(err, e.scores.Shutdown(ctx))
	}
	return err
}

// Capabilities: the spans are changed (opik.trace_id is added).
func (e *opikExporter) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: true}
}

func (e *opikExporter) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	stampTraceIDs(td)
	var scored ptrace.Traces
	if e.scores != nil {
		// Taken before the spans half owns td: its queue may send and
		// release it at once.
		scored = scoreCarriers(td)
	}
	err := e.spans.ConsumeTraces(ctx, td)
	if e.scores != nil && scored.SpanCount() > 0 {
		err = errors.Join(err, e.scores.ConsumeTraces(ctx, scored))
	}
	return err
}

// stampTraceIDs sets opik.trace_id on every span that Opik is to make a
// trace of: a root span, and a proxy span (it carries mlx.model) that
// continues a client's trace, whose parent Opik never sees. The id is the
// one internal/opikid derives from the trace id and the span's start. The
// key is metadata.yaml's (generated_attributes.go): Opik's override
// attribute, which it uses as the trace id as it is.
func stampTraceIDs(td ptrace.Traces) {
	spanwalk.Each(td, func(s ptrace.Span) {
		if !s.ParentSpanID().IsEmpty() {
			if _, proxySpan := s.Attributes().Get(attrModel); !proxySpan {
				return
			}
		}
		s.Attributes().PutStr(attrOpikTraceId, opikid.TraceID(s.TraceID(), s.StartTimestamp().AsTime()))
	})
}

// offExporter stands in when no endpoint is set: it takes everything and
// sends nothing.
type offExporter struct{ log *zap.Logger }

func (o *offExporter) Start(context.Context, component.Host) error {
	o.log.Info("Opik export is off: no endpoint (set OPIK_URL)")
	return nil
}
func (o *offExporter) Shutdown(context.Context) error { return nil }
func (o *offExporter) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}
func (o *offExporter) ConsumeTraces(context.Context, ptrace.Traces) error { return nil }
