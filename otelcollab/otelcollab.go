package otelcollab

import (
	"errors"
	"strconv"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// scope names the instrumentation in every span and metric.
const scope = "github.com/collabsvc/collab/otelcollab"

// Option configures an Observer in New.
type Option func(*config)

type config struct {
	tp   trace.TracerProvider
	mp   metric.MeterProvider
	prop propagation.TextMapPropagator
}

// WithTracerProvider sets where spans go; the default is the global
// provider (otel.GetTracerProvider) at the time New is called.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tp = tp }
}

// WithMeterProvider sets where metrics go; the default is the global
// provider (otel.GetMeterProvider) at the time New is called.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.mp = mp }
}

// WithPropagator sets how a delivery's trace context is stored with it and
// read back for the handling; the default is W3C Trace Context.
func WithPropagator(p propagation.TextMapPropagator) Option {
	return func(c *config) { c.prop = p }
}

// Observer records traces and metrics for a collab.Client (as its
// collab.Observer) and a webhook.Handler (as its webhook.Observer). One
// Observer may serve both, and many clients and handlers at once.
type Observer struct {
	tracer trace.Tracer
	meter  metric.Meter
	prop   propagation.TextMapPropagator
	fields []string // the headers prop writes
	client clientInstruments
	recv   receiverInstruments
	routes routes
}

// New returns an Observer that records through the given providers, or the
// global ones.
func New(opts ...Option) (*Observer, error) {
	c := config{prop: propagation.TraceContext{}}
	for _, opt := range opts {
		opt(&c)
	}
	if c.tp == nil {
		c.tp = otel.GetTracerProvider()
	}
	if c.mp == nil {
		c.mp = otel.GetMeterProvider()
	}
	if c.prop == nil {
		return nil, errors.New("otelcollab: WithPropagator(nil)")
	}
	o := &Observer{
		tracer: c.tp.Tracer(scope),
		meter:  c.mp.Meter(scope),
		prop:   c.prop,
		fields: c.prop.Fields(),
	}
	if err := o.client.init(o.meter); err != nil {
		return nil, err
	}
	if err := o.recv.init(o.meter); err != nil {
		return nil, err
	}
	return o, nil
}

// statusClass names a status by its class, "2xx" to "5xx", so that metrics
// stay few; "none" when no response came.
func statusClass(status int) string {
	if status < 100 || status > 599 {
		return "none"
	}
	return strconv.Itoa(status/100) + "xx"
}
