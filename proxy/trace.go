package proxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"

	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/span"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/span/spankey"
)

// Tracing: one span per completion request, named as OpenTelemetry's GenAI
// conventions name it (spanName) and written as plain data (proxy/span) with the OpenTelemetry API's
// types. The span is started when the
// request ends (with the request's arrival as its start time, so the IDs
// are known to the access log), given its attributes off the request path
// by the scorer's worker (after scoring, so the scores are on it), and
// ended there with the request's own end time. Ended spans go into a
// bounded outbox that the collector side drains; nothing on the request
// path waits for export.

// operationName is gen_ai.operation.name: "text_completion" on
// /v1/completions, "chat" on /v1/chat/completions.
func operationName(route Route) string {
	if route == RouteText {
		return span.OpTextCompletion
	}
	return span.OpChat
}

// TracerName is the instrumentation scope of the proxy's spans (the
// original's tracer).
const TracerName = "mlx.proxy"

// ServiceName is the service.name of the proxy's spans and access log
// (the original's).
const ServiceName = "mlx-metrics-proxy"

// NoTraceHeader: a request that sends it with the value 0 is not traced
// (metrics still count it), as in the original.
const NoTraceHeader = "X-Mlx-Trace"

// TraceConfig says what the proxy's spans carry. The mlx_proxy extension
// reads it from YAML as it is (key `traces`).
type TraceConfig struct {
	// CaptureContent puts prompts, answers and tool definitions on the span
	// (input.*, output.*, llm.input_messages.*, llm.output_messages.*,
	// llm.prompts, llm.tools.*). Off: those attributes are left out and
	// nothing else changes.
	CaptureContent bool `mapstructure:"capture_content"`
	// Hide is OpenInference's redaction settings, from the environment
	// (OPENINFERENCE_HIDE_*), not from YAML.
	Hide HideConfig `mapstructure:"-"`
	// MaxContentBytes bounds the bytes of content one span carries; past
	// it content strings are cut and mlx.content_truncated is set.
	MaxContentBytes int `mapstructure:"max_content_bytes"`
	// QueueSize is how many ended spans may wait for the collector's
	// pipeline; past it a span is dropped (mlx_spans_dropped_total).
	QueueSize int `mapstructure:"queue_size"`
	// Node names this node in the span's resource (mlx.node.name) and in
	// the metadata attribute; "" is the host name.
	Node string `mapstructure:"node"`
}

// Validate checks the settings.
func (c *TraceConfig) Validate() error {
	var errs []error
	if c.MaxContentBytes < 0 {
		errs = append(errs, fmt.Errorf("max_content_bytes: must not be negative, got %d", c.MaxContentBytes))
	}
	if c.QueueSize < 1 {
		errs = append(errs, fmt.Errorf("queue_size: must be at least 1, got %d", c.QueueSize))
	}
	return errors.Join(errs...)
}

// HideFromEnv reads OpenInference's OPENINFERENCE_HIDE_* variables ("true"
// or "1", any case) and OPENINFERENCE_BASE64_IMAGE_MAX_LENGTH (a count of
// characters) with getenv (os.Getenv when nil).
func HideFromEnv(getenv func(string) string) HideConfig {
	if getenv == nil {
		getenv = os.Getenv
	}
	on := func(name string) bool {
		v, err := strconv.ParseBool(strings.TrimSpace(getenv("OPENINFERENCE_" + name)))
		return err == nil && v
	}
	maxLen := span.DefaultBase64ImageMaxLength
	if n, err := strconv.Atoi(strings.TrimSpace(getenv("OPENINFERENCE_BASE64_IMAGE_MAX_LENGTH"))); err == nil && n > 0 {
		maxLen = n
	}
	return HideConfig{
		Inputs:               on("HIDE_INPUTS"),
		Outputs:              on("HIDE_OUTPUTS"),
		InputMessages:        on("HIDE_INPUT_MESSAGES"),
		OutputMessages:       on("HIDE_OUTPUT_MESSAGES"),
		InputText:            on("HIDE_INPUT_TEXT"),
		OutputText:           on("HIDE_OUTPUT_TEXT"),
		InputImages:          on("HIDE_INPUT_IMAGES"),
		InvocationParameters: on("HIDE_LLM_INVOCATION_PARAMETERS"),
		LLMTools:             on("HIDE_LLM_TOOLS"),
		Prompts:              on("HIDE_PROMPTS"),
		Choices:              on("HIDE_CHOICES"),
		Base64ImageMaxLength: maxLen,
	}
}

// outputsShown: answers' text may leave the machine, by capture_content
// and the OPENINFERENCE_HIDE_* variables for outputs.
func (c TraceConfig) outputsShown() bool {
	return c.CaptureContent && !c.Hide.Outputs && !c.Hide.OutputMessages && !c.Hide.OutputText
}

// optedOut: the client sent X-Mlx-Trace: 0, asking that its request
// leave no trace (no span, no text in the live stream).
func optedOut(r *http.Request) bool {
	return strings.TrimSpace(r.Header.Get(NoTraceHeader)) == "0"
}

// tracer makes the proxy's spans (proxy/span).
type tracer struct {
	cfg     TraceConfig
	spanCfg span.Config // what the spans share (proxy/span)
	source  *SpanSource
	outbox  *outbox[*Span]
	onPanic panicReporter

	// The worker that finishes the spans the scorer does not (requests
	// that are not scored): a queue of QueueSize, full is dropped.
	unscored chan *pendingSpan
	held     atomic.Int64 // request bytes pending spans keep (span.go, keep)
	mu       sync.Mutex
	stopped  bool
	done     chan struct{} // closed when the worker has ended; nil when not running
}

func newTracer(cfg TraceConfig, upstreamHost string, box *outbox[*Span]) *tracer {
	node := fleet.NodeName(cfg.Node)
	host, _ := os.Hostname()
	// A set: sorted by key, as the SDK's resource gave them.
	res := attribute.NewSet(
		attribute.String(spankey.ServiceName, ServiceName),
		attribute.String(spankey.HostName, host),
		attribute.String(spankey.ServiceInstanceId, node+":proxy"),
		attribute.String(spankey.MlxNodeName, node),
	)
	t := &tracer{cfg: cfg, spanCfg: span.Config{CaptureContent: cfg.CaptureContent, Hide: cfg.Hide, MaxContentBytes: cfg.MaxContentBytes, Node: node}, source: &SpanSource{Resource: res.ToSlice(), Scope: TracerName}, outbox: box,
		unscored: make(chan *pendingSpan, max(cfg.QueueSize, 1))}
	if h, p, ok := splitHostPort(upstreamHost); ok {
		t.spanCfg.Server = []attribute.KeyValue{attribute.String(spankey.ServerAddress, h), attribute.Int(spankey.ServerPort, p)}
	}
	return t
}

// startWorker runs the worker that finishes unscored spans, and the
// outbox's drain.
func (t *tracer) startWorker() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done == nil && !t.stopped {
		t.done = make(chan struct{})
		go t.run(t.done)
	}
	t.outbox.start()
}

// stopWorker finishes what is queued and ends the worker. Safe without
// start and more than once.
func (t *tracer) stopWorker() {
	t.mu.Lock()
	done := t.done
	first := !t.stopped
	t.stopped, t.done = true, nil
	t.mu.Unlock()
	if first {
		close(t.unscored)
	}
	if done != nil {
		<-done
	}
}

func (t *tracer) run(done chan<- struct{}) {
	defer close(done)
	for ps := range t.unscored {
		t.finish1(ps)
	}
}

// finish1 finishes one span; a panic loses that span only.
func (t *tracer) finish1(ps *pendingSpan) {
	defer func() {
		if r := recover(); r != nil {
			ps.drop()
			t.onPanic.report(panicSpan, r)
		}
	}()
	hook(panicSpan)
	ps.finish(nil, nil)
}

// finishLater queues an unscored span for the worker, or drops it.
func (ps *pendingSpan) finishLater() {
	t := ps.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		ps.drop()
		return
	}
	select {
	case t.unscored <- ps:
	default:
		ps.drop()
	}
}

func splitHostPort(hostport string) (string, int, bool) {
	i := strings.LastIndexByte(hostport, ':')
	if i < 0 {
		return hostport, 0, false
	}
	p, err := strconv.Atoi(hostport[i+1:])
	if err != nil {
		return hostport, 0, false
	}
	return strings.Trim(hostport[:i], "[]"), p, true
}

// on reports whether spans are wanted now: a pipeline takes them.
func (t *tracer) on() bool { return t != nil && t.outbox.attached() }

// parentOf reads the request's trace context: a valid traceparent is
// continued. traced is false when the client sent X-Mlx-Trace: 0.
func parentOf(r *http.Request) (parent context.Context, traced bool) {
	if optedOut(r) {
		return nil, false
	}
	ctx := context.Background()
	if r.Header.Get("Traceparent") != "" {
		ctx = propagation.TraceContext{}.Extract(ctx, propagation.HeaderCarrier(r.Header))
	}
	return ctx, true
}
