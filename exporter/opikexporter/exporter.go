package opikexporter

import (
	"context"
	"errors"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
)

// opikExporter hands the proxy's spans to the REST half (one Opik trace,
// span and scores each) and every other span of the pipeline to the OTLP
// half, unchanged.
type opikExporter struct {
	cfg  *Config
	log  *zap.Logger
	rest exporter.Traces
	otlp exporter.Traces
	w    *writer
}

func (e *opikExporter) Start(ctx context.Context, host component.Host) error {
	if err := e.rest.Start(ctx, host); err != nil {
		return err
	}
	return e.otlp.Start(ctx, host)
}

func (e *opikExporter) Shutdown(ctx context.Context) error {
	return errors.Join(e.rest.Shutdown(ctx), e.otlp.Shutdown(ctx))
}

// Capabilities: td is split, not changed.
func (e *opikExporter) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

func (e *opikExporter) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	proxy, other := split(td)
	var err error
	if proxy.SpanCount() > 0 {
		err = e.rest.ConsumeTraces(ctx, proxy)
	}
	if other.SpanCount() > 0 {
		err = errors.Join(err, e.otlp.ConsumeTraces(ctx, other))
	}
	return err
}

// split copies td's proxy spans and its other spans apart, each with its
// resource and scope. A copy, because each half's queue may send and
// release what it was given at once, and td is shared with the pipeline's
// other exporters.
func split(td ptrace.Traces) (proxy, other ptrace.Traces) {
	proxy, other = ptrace.NewTraces(), ptrace.NewTraces()
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		var prs, ors ptrace.ResourceSpans
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j)
			var pss, oss ptrace.ScopeSpans
			for k := 0; k < ss.Spans().Len(); k++ {
				sp := ss.Spans().At(k)
				out, rsOut, ssOut := &other, &ors, &oss
				if isProxySpan(sp) {
					out, rsOut, ssOut = &proxy, &prs, &pss
				}
				if *ssOut == (ptrace.ScopeSpans{}) {
					if *rsOut == (ptrace.ResourceSpans{}) {
						*rsOut = out.ResourceSpans().AppendEmpty()
						rs.Resource().CopyTo(rsOut.Resource())
						rsOut.SetSchemaUrl(rs.SchemaUrl())
					}
					*ssOut = rsOut.ScopeSpans().AppendEmpty()
					ss.Scope().CopyTo(ssOut.Scope())
					ssOut.SetSchemaUrl(ss.SchemaUrl())
				}
				sp.CopyTo(ssOut.Spans().AppendEmpty())
			}
		}
	}
	return proxy, other
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
func (o *offExporter) ConsumeLogs(context.Context, plog.Logs) error       { return nil }
