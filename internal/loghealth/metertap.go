package loghealth

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/metric"
)

// The exporter helper's own instruments that a sink reads. Their names are
// the helper's documented internal telemetry (exporterhelper
// documentation.md); the helper reports through them exactly when a queue
// offer fails, when it gives up on a request, and what its queue holds.
const (
	instEnqueueFailed = "otelcol_exporter_enqueue_failed_log_records"
	instSendFailed    = "otelcol_exporter_send_failed_log_records"
	instQueueSize     = "otelcol_exporter_queue_size"
)

// meterTap is a MeterProvider handed to the exporter helper in place of the
// collector's. Everything passes through to the real provider, so the
// collector's own telemetry (otelcol_exporter_*) is unchanged; on the way,
// the tap adds the helper's drop counts to the sink's and keeps the queue
// size callback so the health receiver can read the queue at any time, even
// when the collector's telemetry level is none.
type meterTap struct {
	metric.MeterProvider
	onEnqueueFailed func(int64)
	onSendFailed    func(int64)

	mu         sync.Mutex
	queueGauge *tapGauge
	queueCB    metric.Callback
}

func (t *meterTap) Meter(name string, opts ...metric.MeterOption) metric.Meter {
	return &tapMeter{Meter: t.MeterProvider.Meter(name, opts...), tap: t}
}

// queueSize calls the helper's queue size callback; false until the queue
// has registered it (it does so when it starts).
func (t *meterTap) queueSize() (int64, bool) {
	t.mu.Lock()
	cb, g := t.queueCB, t.queueGauge
	t.mu.Unlock()
	if cb == nil {
		return 0, false
	}
	o := &readObserver{want: g}
	if err := cb(context.Background(), o); err != nil {
		return 0, false
	}
	return o.value, o.seen
}

type tapMeter struct {
	metric.Meter
	tap *meterTap
}

func (m *tapMeter) Int64Counter(name string, opts ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	c, err := m.Meter.Int64Counter(name, opts...)
	if err != nil {
		return c, err
	}
	switch name {
	case instEnqueueFailed:
		return tapCounter{Int64Counter: c, add: m.tap.onEnqueueFailed}, nil
	case instSendFailed:
		return tapCounter{Int64Counter: c, add: m.tap.onSendFailed}, nil
	}
	return c, nil
}

// Int64ObservableGauge wraps the queue size gauge in a value of our own, so
// the callback registered for it can be told apart from the others (the
// no-op provider's instruments are all equal).
func (m *tapMeter) Int64ObservableGauge(name string, opts ...metric.Int64ObservableGaugeOption) (metric.Int64ObservableGauge, error) {
	g, err := m.Meter.Int64ObservableGauge(name, opts...)
	if err != nil || name != instQueueSize {
		return g, err
	}
	return &tapGauge{Int64ObservableGauge: g}, nil
}

func (m *tapMeter) RegisterCallback(f metric.Callback, insts ...metric.Observable) (metric.Registration, error) {
	var mine *tapGauge
	real := make([]metric.Observable, len(insts))
	for i, inst := range insts {
		real[i] = inst
		if g, ok := inst.(*tapGauge); ok {
			mine, real[i] = g, g.Int64ObservableGauge
		}
	}
	if mine == nil {
		return m.Meter.RegisterCallback(f, insts...)
	}
	reg, err := m.Meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		return f(ctx, unwrapObserver{Observer: o})
	}, real...)
	if err != nil {
		return nil, err
	}
	m.tap.mu.Lock()
	m.tap.queueGauge, m.tap.queueCB = mine, f
	m.tap.mu.Unlock()
	return tapRegistration{Registration: reg, tap: m.tap, gauge: mine}, nil
}

type tapCounter struct {
	metric.Int64Counter
	add func(int64)
}

func (c tapCounter) Add(ctx context.Context, v int64, opts ...metric.AddOption) {
	c.add(v)
	c.Int64Counter.Add(ctx, v, opts...)
}

type tapGauge struct{ metric.Int64ObservableGauge }

// unwrapObserver hands the real instrument to the real provider's observer.
type unwrapObserver struct{ metric.Observer }

func (o unwrapObserver) ObserveInt64(inst metric.Int64Observable, v int64, opts ...metric.ObserveOption) {
	if g, ok := inst.(*tapGauge); ok {
		inst = g.Int64ObservableGauge
	}
	o.Observer.ObserveInt64(inst, v, opts...)
}

// readObserver receives one call of the queue size callback.
type readObserver struct {
	metric.Observer // never called: both methods are overridden
	want            *tapGauge
	value           int64
	seen            bool
}

func (o *readObserver) ObserveInt64(inst metric.Int64Observable, v int64, _ ...metric.ObserveOption) {
	if g, ok := inst.(*tapGauge); ok && g == o.want {
		o.value, o.seen = v, true
	}
}

func (o *readObserver) ObserveFloat64(metric.Float64Observable, float64, ...metric.ObserveOption) {}

type tapRegistration struct {
	metric.Registration
	tap   *meterTap
	gauge *tapGauge
}

func (r tapRegistration) Unregister() error {
	r.tap.mu.Lock()
	if r.tap.queueGauge == r.gauge {
		r.tap.queueGauge, r.tap.queueCB = nil, nil
	}
	r.tap.mu.Unlock()
	return r.Registration.Unregister()
}
