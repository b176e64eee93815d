package otelcollab

import (
	"context"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/collabsvc/collab/webhook"
)

// kinds are the event kinds a metric or span names; any other kind a
// sender claims is "other", so that a sender cannot make them unbounded.
var kinds = map[webhook.Kind]bool{
	webhook.KindPush: true, webhook.KindTagPush: true, webhook.KindIssue: true, webhook.KindMergeRequest: true,
	webhook.KindNote: true, webhook.KindBuild: true, webhook.KindWikiPage: true,
}

func kindAttr(k webhook.Kind) attribute.KeyValue {
	if !kinds[k] {
		k = "other"
	}
	return attrKind.String(string(k))
}

// labels are the metric attributes of a kind, and of a kind with each
// outcome, built once: a delivery records its metrics without building
// attribute sets.
type labels struct {
	kind     options
	outcomes map[string]options
}

func newLabels() map[webhook.Kind]*labels {
	outcomes := []string{
		string(webhook.OutcomeAccepted), string(webhook.OutcomeDuplicate), string(webhook.OutcomeIgnored),
		string(webhook.OutcomeRejected), string(webhook.OutcomeAskedAgain), string(webhook.OutcomeRefused),
		string(webhook.HandleDone), string(webhook.HandleRetry), string(webhook.HandleDeadLetter),
	}
	out := map[webhook.Kind]*labels{}
	for k := range kinds {
		out[k] = kindLabels(k, outcomes)
	}
	out["other"] = kindLabels("other", outcomes)
	return out
}

func kindLabels(k webhook.Kind, outcomes []string) *labels {
	ka := attrKind.String(string(k))
	l := &labels{kind: optionsOf(ka), outcomes: map[string]options{}}
	for _, o := range outcomes {
		l.outcomes[o] = optionsOf(ka, attrOutcome.String(o))
	}
	return l
}

// labelsOf returns the labels of a kind, and of that kind with an outcome.
func (ri *receiverInstruments) labelsOf(k webhook.Kind, outcome string) (kind, withOutcome options) {
	l := ri.labels[k]
	if l == nil {
		l = ri.labels["other"]
	}
	withOutcome, ok := l.outcomes[outcome]
	if !ok { // an outcome this package does not know yet
		withOutcome = optionsOf(attrKind.String(string(k)), attrOutcome.String(outcome))
	}
	return l.kind, withOutcome
}

type receiverInstruments struct {
	received, admitted, dead metric.Int64Counter
	duration                 metric.Float64Histogram
	attempts                 metric.Int64Histogram
	runs, changes            metric.Int64Counter
	lag                      metric.Float64Gauge
	labels                   map[webhook.Kind]*labels
}

func (ri *receiverInstruments) init(m metric.Meter) (err error) {
	ri.labels = newLabels()
	counter := func(dst *metric.Int64Counter, name, unit, desc string) {
		if err == nil {
			*dst, err = m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		}
	}
	counter(&ri.received, "collab.webhook.received", "{delivery}", "Deliveries that reached the handler.")
	counter(&ri.admitted, "collab.webhook.admitted", "{delivery}", "Deliveries by what admission made of them.")
	counter(&ri.dead, "collab.webhook.dead_letters", "{delivery}", "Deliveries dead-lettered.")
	counter(&ri.runs, "collab.webhook.catchup.runs", "{run}", "Catch-up runs over one project.")
	counter(&ri.changes, "collab.webhook.catchup.changes", "{change}", "Changes catch-up found and stored as events.")
	if err == nil {
		ri.duration, err = m.Float64Histogram("collab.webhook.handling.duration", metric.WithUnit("s"),
			metric.WithDescription("Duration of one handling of a delivery."), metric.WithExplicitBucketBoundaries(durationBuckets...))
	}
	if err == nil {
		ri.attempts, err = m.Int64Histogram("collab.webhook.handling.attempts", metric.WithUnit("{attempt}"),
			metric.WithDescription("Attempts a delivery took, when it left the queue."), metric.WithExplicitBucketBoundaries(1, 2, 3, 5, 8, 13))
	}
	if err == nil {
		ri.lag, err = m.Float64Gauge("collab.webhook.catchup.lag", metric.WithUnit("s"),
			metric.WithDescription("How far behind the newest change a project's checkpoint was when catch-up began."))
	}
	return err
}

// DeliveryReceived implements webhook.Observer: it starts the admission's
// span, a new trace whatever trace headers the sender put in. The returned
// context carries this span even when it does not record, so that
// DeliveryAdmitted never ends a span of the caller's.
func (o *Observer) DeliveryReceived(ctx context.Context, r *http.Request) context.Context {
	start := receivePost
	if r.Method != http.MethodPost {
		start = receiveOptions(r.Method)
	}
	ctx, _ = o.tracer.Start(ctx, "webhook receive", start...)
	return ctx
}

// receivePost starts the span of a POST, which nearly every delivery is.
var receivePost = receiveOptions(http.MethodPost)

func receiveOptions(method string) []trace.SpanStartOption {
	return []trace.SpanStartOption{
		trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrMethod.String(method)),
	}
}

// DeliveryAdmitted implements webhook.Observer: it counts the delivery and
// ends the admission's span.
func (o *Observer) DeliveryAdmitted(ctx context.Context, kind webhook.Kind, outcome webhook.Outcome) {
	byKind, byOutcome := o.recv.labelsOf(kind, string(outcome))
	if o.recv.received.Enabled(ctx) {
		o.recv.received.Add(ctx, 1, byKind.add...)
	}
	if o.recv.admitted.Enabled(ctx) {
		o.recv.admitted.Add(ctx, 1, byOutcome.add...)
	}
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(kindAttr(kind), attrOutcome.String(string(outcome)))
	if outcome == webhook.OutcomeRejected || outcome == webhook.OutcomeRefused {
		span.SetStatus(codes.Error, string(outcome))
	}
	span.End()
}

// Inject implements webhook.Observer: it stores the admission's trace
// context in h, and never a trace context the sender sent.
func (o *Observer) Inject(ctx context.Context, h http.Header) {
	for _, f := range o.fields {
		h.Del(f)
	}
	if trace.SpanFromContext(ctx).IsRecording() {
		o.prop.Inject(ctx, propagation.HeaderCarrier(h))
	}
}

// HandlingStarted implements webhook.Observer: it starts the handling's
// span, linked to the admission's span stored with the delivery. API calls
// made with the returned context are its children.
func (o *Observer) HandlingStarted(ctx context.Context, d *webhook.Delivery) context.Context {
	ctx, span := o.tracer.Start(ctx, "webhook handle", handleOptions...)
	if !span.IsRecording() {
		return ctx
	}
	attrs := make([]attribute.KeyValue, 0, 4)
	attrs = append(attrs, kindAttr(d.Kind), attrDeliveryID.Int64(int64(d.ID)), attrAttempt.Int(d.Attempt))
	if d.Synthesized {
		attrs = append(attrs, attrSynthesized.Bool(true))
	}
	span.SetAttributes(attrs...)
	if d.Header != nil {
		admitted := trace.SpanContextFromContext(o.prop.Extract(context.Background(), propagation.HeaderCarrier(d.Header)))
		if admitted.IsValid() {
			span.AddLink(trace.Link{SpanContext: admitted})
		}
	}
	return ctx
}

var handleOptions = []trace.SpanStartOption{trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindConsumer)}

// HandlingEnded implements webhook.Observer: it ends the handling's span and
// records its duration, and the attempts of a delivery that left the queue.
func (o *Observer) HandlingEnded(ctx context.Context, d *webhook.Delivery, outcome webhook.HandleOutcome, took time.Duration, err error) {
	byKind, byOutcome := o.recv.labelsOf(d.Kind, string(outcome))
	if o.recv.duration.Enabled(ctx) {
		o.recv.duration.Record(ctx, took.Seconds(), byOutcome.record...)
	}
	if outcome == webhook.HandleDeadLetter && o.recv.dead.Enabled(ctx) {
		o.recv.dead.Add(ctx, 1, byKind.add...)
	}
	if outcome != webhook.HandleRetry && o.recv.attempts.Enabled(ctx) {
		o.recv.attempts.Record(ctx, int64(d.Attempt), byOutcome.record...)
	}
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attrOutcome.String(string(outcome)))
	if err != nil {
		// The error's kind only: a callback's message may hold anything.
		span.SetStatus(codes.Error, errorType(err))
		span.SetAttributes(attrErrorType.String(errorType(err)))
	}
	span.End()
}

// CatchUpEnded implements webhook.Observer: it counts the run and the
// changes it found, and records the project's lag.
func (o *Observer) CatchUpEnded(ctx context.Context, r webhook.CatchUpReport) {
	project := attrProject.String(r.Project)
	result := "ok"
	if r.Err != nil {
		result = "error"
	}
	o.recv.runs.Add(ctx, 1, metric.WithAttributes(project, attrResult.String(result)))
	o.recv.changes.Add(ctx, int64(r.Changes), metric.WithAttributes(project))
	o.recv.lag.Record(ctx, r.Lag.Seconds(), metric.WithAttributes(project))
}
