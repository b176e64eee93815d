package otelcollab

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/collabsvc/collab"
)

// durationBuckets are the HTTP conventions' advice for request durations.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

type clientInstruments struct {
	duration metric.Float64Histogram
	retries  metric.Int64Counter
	waited   metric.Float64Counter
}

func (ci *clientInstruments) init(m metric.Meter) (err error) {
	ci.duration, err = m.Float64Histogram("http.client.request.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of API calls, retries and waits included."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	if err == nil {
		ci.retries, err = m.Int64Counter("collab.client.retries", metric.WithUnit("{retry}"),
			metric.WithDescription("Requests sent again after a failed attempt."))
	}
	if err == nil {
		ci.waited, err = m.Float64Counter("collab.client.limit_wait", metric.WithUnit("s"),
			metric.WithDescription("Time API calls spent waiting for a rate or concurrency limit, or a pause the server asked for."))
	}
	return err
}

// call is the context of an observed call: what CallEvent and CallEnded
// need, in the one allocation that also carries the span.
type call struct {
	context.Context
	route   *route
	start   time.Time
	span    trace.Span
	metrics bool // the duration is recorded
}

type callKey struct{}

// Value implements context.Context.
func (c *call) Value(key any) any {
	if key == (callKey{}) {
		return c
	}
	return c.Context.Value(key)
}

// CallStarted implements collab.Observer: it starts the call's span, a
// child of any span in ctx. When neither the span nor the metrics would
// record anything (no provider set), it keeps nothing more, so that an
// observer nobody reads costs next to nothing.
func (o *Observer) CallStarted(ctx context.Context, ci collab.CallInfo) context.Context {
	metrics := o.client.duration.Enabled(ctx)
	r := o.routes.get(ci)
	ctx, span := o.tracer.Start(ctx, r.name, r.start...)
	if !span.IsRecording() && !metrics {
		return ctx
	}
	return &call{Context: ctx, route: r, start: time.Now(), span: span, metrics: metrics}
}

// CallEvent implements collab.Observer: a retry or a wait becomes an event
// of the call's span and counts in the retry or wait metric.
func (o *Observer) CallEvent(ctx context.Context, ev collab.CallEvent) {
	c, _ := ctx.Value(callKey{}).(*call)
	if c == nil {
		return
	}
	route := metric.WithAttributes(c.route.method, c.route.template)
	switch ev.Kind {
	case collab.EventRetry:
		if o.client.retries.Enabled(ctx) {
			o.client.retries.Add(ctx, 1, route, metric.WithAttributes(attrStatusClass.String(statusClass(ev.Status))))
		}
	case collab.EventLimitWait:
		if o.client.waited.Enabled(ctx) {
			o.client.waited.Add(ctx, ev.Wait.Seconds(), route)
		}
	}
	if !c.span.IsRecording() {
		return
	}
	attrs := []attribute.KeyValue{attrAttempt.Int(ev.Attempt), attrWait.Float64(ev.Wait.Seconds())}
	if ev.Status != 0 {
		attrs = append(attrs, attrStatus.Int(ev.Status))
	}
	if ev.Err != nil {
		attrs = append(attrs, attrErrorType.String(errorType(ev.Err)))
	}
	c.span.AddEvent(string(ev.Kind), trace.WithAttributes(attrs...))
}

// CallEnded implements collab.Observer: it ends the span and records the
// call's duration.
func (o *Observer) CallEnded(ctx context.Context, end collab.CallEnd) {
	c, _ := ctx.Value(callKey{}).(*call)
	if c == nil {
		return
	}
	et := callErrorType(end)
	if c.metrics {
		o.client.duration.Record(ctx, time.Since(c.start).Seconds(), c.route.durationSet(statusClass(end.Status), et)...)
	}
	if !c.span.IsRecording() {
		return
	}
	attrs := make([]attribute.KeyValue, 0, 3)
	attrs = append(attrs, attrAttempts.Int(end.Attempts))
	if end.Status != 0 {
		attrs = append(attrs, attrStatus.Int(end.Status))
	}
	if et != "" {
		attrs = append(attrs, attrErrorType.String(et))
		c.span.SetStatus(codes.Error, et)
	}
	c.span.SetAttributes(attrs...)
	c.span.End()
}

// callErrorType names what went wrong with a call, after the conventions:
// the status for an error answer, else the kind of error; "" on success.
func callErrorType(end collab.CallEnd) string {
	switch {
	case end.Status >= 400:
		return strconv.Itoa(end.Status)
	case end.Err != nil:
		return errorType(end.Err)
	}
	return ""
}

// errorType names an error by its kind, never by its message, which could
// carry a URL or a value from the server.
func errorType(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	}
	return fmt.Sprintf("%T", err)
}
