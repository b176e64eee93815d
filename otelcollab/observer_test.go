package otelcollab_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/otelcollab"
	"github.com/collabsvc/collab/webhook"
)

// The observer's methods, called as the client and the handler call them,
// record what the package documents; the tests against a real client and
// handler are in integration_test.go.

func TestCallSpanAndMetrics(t *testing.T) {
	r := newRecorder(t)
	ci := collab.CallInfo{Method: "GET", Route: "/projects/:id/issues", Host: "127.0.0.1:8080"}
	ctx := r.obs.CallStarted(context.Background(), ci)
	r.obs.CallEvent(ctx, collab.CallEvent{Kind: collab.EventLimitWait, Attempt: 1, Wait: 250 * time.Millisecond})
	r.obs.CallEvent(ctx, collab.CallEvent{Kind: collab.EventRetry, Attempt: 2, Wait: time.Second, Status: 503})
	r.obs.CallEvent(ctx, collab.CallEvent{Kind: collab.EventRetry, Attempt: 3, Wait: time.Second, Err: errors.New("connection reset")})
	r.obs.CallEnded(ctx, collab.CallEnd{Status: 200, Attempts: 3, Waited: 2250 * time.Millisecond})

	spans := r.ended("GET /projects/:id/issues")
	require.Len(t, spans, 1)
	s := spans[0]
	assert.Equal(t, trace.SpanKindClient, s.SpanKind)
	assert.Equal(t, map[string]any{
		"http.request.method": "GET", "url.template": "/projects/:id/issues", "server.address": "127.0.0.1",
		"server.port": int64(8080), "http.response.status_code": int64(200), "collab.attempts": int64(3),
	}, attrs(s.Attributes))
	require.Len(t, s.Events, 3)
	assert.Equal(t, "limit_wait", s.Events[0].Name)
	assert.Equal(t, map[string]any{"collab.attempt": int64(1), "collab.wait_seconds": 0.25}, attrs(s.Events[0].Attributes))
	assert.Equal(t, "retry", s.Events[1].Name)
	assert.Equal(t, map[string]any{"collab.attempt": int64(2), "collab.wait_seconds": 1.0, "http.response.status_code": int64(503)}, attrs(s.Events[1].Attributes))
	assert.Equal(t, map[string]any{"collab.attempt": int64(3), "collab.wait_seconds": 1.0, "error.type": "*errors.errorString"}, attrs(s.Events[2].Attributes))
	assert.Equal(t, codes.Unset, s.Status.Code)

	m := r.metrics(t)
	n, _ := histogramCount[float64](t, m["http.client.request.duration"], map[string]any{
		"http.request.method": "GET", "url.template": "/projects/:id/issues", "http.response.status_class": "2xx", "server.address": "127.0.0.1",
		"server.port": int64(8080)})
	assert.Equal(t, uint64(1), n)
	assert.Equal(t, int64(1), sum[int64](t, m["collab.client.retries"], map[string]any{"http.response.status_class": "5xx"}))
	assert.Equal(t, int64(1), sum[int64](t, m["collab.client.retries"], map[string]any{"http.response.status_class": "none"}))
	assert.Equal(t, 0.25, sum[float64](t, m["collab.client.limit_wait"], map[string]any{"url.template": "/projects/:id/issues"}))
}

func TestCallErrorTypes(t *testing.T) {
	r := newRecorder(t)
	for _, end := range []collab.CallEnd{
		{Status: 404, Attempts: 1, Err: errors.New("404 Not Found")},
		{Attempts: 1, Err: context.DeadlineExceeded},
		{Attempts: 1, Err: context.Canceled},
	} {
		ctx := r.obs.CallStarted(context.Background(), collab.CallInfo{Method: "DELETE", Route: "/projects/:id", Host: "h"})
		r.obs.CallEnded(ctx, end)
	}
	spans := r.ended("DELETE /projects/:id")
	require.Len(t, spans, 3)
	for i, want := range []string{"404", "timeout", "canceled"} {
		assert.Equal(t, codes.Error, spans[i].Status.Code)
		assert.Equal(t, want, attrs(spans[i].Attributes)["error.type"])
	}
	_, ok := attrs(spans[1].Attributes)["http.response.status_code"]
	assert.False(t, ok, "no status without an answer")
	n, _ := histogramCount[float64](t, r.metrics(t)["http.client.request.duration"], map[string]any{"error.type": "404", "http.response.status_class": "4xx"})
	assert.Equal(t, uint64(1), n)
}

// A context that CallStarted did not return is ignored, not a panic.
func TestCallWithoutStart(t *testing.T) {
	r := newRecorder(t)
	r.obs.CallEvent(context.Background(), collab.CallEvent{Kind: collab.EventRetry})
	r.obs.CallEnded(context.Background(), collab.CallEnd{Status: 200})
	assert.Empty(t, r.spans.GetSpans())
}

func TestDeliverySpansAreLinked(t *testing.T) {
	r := newRecorder(t)
	req, err := http.NewRequest(http.MethodPost, "http://receiver/hook", nil)
	require.NoError(t, err)
	// A sender's own trace context is neither followed nor kept.
	req.Header.Set("Traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	ctx := r.obs.DeliveryReceived(context.Background(), req)
	stored := req.Header.Clone()
	r.obs.Inject(ctx, stored)
	r.obs.DeliveryAdmitted(ctx, webhook.KindIssue, webhook.OutcomeAccepted)

	recv := r.ended("webhook receive")
	require.Len(t, recv, 1)
	assert.False(t, recv[0].Parent.IsValid())
	assert.Equal(t, trace.SpanKindServer, recv[0].SpanKind)
	assert.Equal(t, map[string]any{"http.request.method": "POST", "collab.webhook.kind": "Issue Hook", "collab.webhook.outcome": "accepted"}, attrs(recv[0].Attributes))
	assert.NotContains(t, stored.Get("Traceparent"), "0af7651916cd43dd8448eb211c80319c")

	d := &webhook.Delivery{ID: 7, Kind: webhook.KindIssue, Header: stored, Attempt: 2}
	hctx := r.obs.HandlingStarted(context.Background(), d)
	call := r.obs.CallStarted(hctx, collab.CallInfo{Method: "POST", Route: "/projects/:id/issues/:issue_id/notes", Host: "h"})
	r.obs.CallEnded(call, collab.CallEnd{Status: 201, Attempts: 1})
	r.obs.HandlingEnded(hctx, d, webhook.HandleDone, 30*time.Millisecond, nil)

	handle := r.ended("webhook handle")
	require.Len(t, handle, 1)
	h := handle[0]
	assert.Equal(t, trace.SpanKindConsumer, h.SpanKind)
	require.Len(t, h.Links, 1)
	assert.Equal(t, recv[0].SpanContext.SpanID(), h.Links[0].SpanContext.SpanID())
	assert.Equal(t, recv[0].SpanContext.TraceID(), h.Links[0].SpanContext.TraceID())
	assert.Equal(t, map[string]any{"collab.webhook.kind": "Issue Hook", "collab.webhook.delivery_id": int64(7), "collab.attempt": int64(2), "collab.webhook.outcome": "done"}, attrs(h.Attributes))
	child := r.ended("POST /projects/:id/issues/:issue_id/notes")
	require.Len(t, child, 1)
	assert.Equal(t, h.SpanContext.SpanID(), child[0].Parent.SpanID())

	m := r.metrics(t)
	assert.Equal(t, int64(1), sum[int64](t, m["collab.webhook.received"], map[string]any{"collab.webhook.kind": "Issue Hook"}))
	assert.Equal(t, int64(1), sum[int64](t, m["collab.webhook.admitted"], map[string]any{"collab.webhook.kind": "Issue Hook", "collab.webhook.outcome": "accepted"}))
	n, total := histogramCount[float64](t, m["collab.webhook.handling.duration"], map[string]any{"collab.webhook.outcome": "done"})
	assert.Equal(t, uint64(1), n)
	assert.InDelta(t, 0.03, total, 1e-9)
	n, attempts := histogramCount[int64](t, m["collab.webhook.handling.attempts"], map[string]any{"collab.webhook.outcome": "done"})
	assert.Equal(t, uint64(1), n)
	assert.Equal(t, int64(2), attempts)
}

// A kind that no sender should send is "other", so that senders cannot
// make the metrics unbounded.
func TestUnknownKindIsOther(t *testing.T) {
	r := newRecorder(t)
	req, err := http.NewRequest(http.MethodPost, "http://receiver/hook", nil)
	require.NoError(t, err)
	ctx := r.obs.DeliveryReceived(context.Background(), req)
	r.obs.DeliveryAdmitted(ctx, "Made Up Hook 12345", webhook.OutcomeRejected)
	m := r.metrics(t)
	assert.Equal(t, int64(1), sum[int64](t, m["collab.webhook.admitted"], map[string]any{"collab.webhook.kind": "other", "collab.webhook.outcome": "rejected"}))
	assert.Equal(t, codes.Error, r.ended("webhook receive")[0].Status.Code)
}

func TestDeadLetterAndCatchUp(t *testing.T) {
	r := newRecorder(t)
	d := &webhook.Delivery{ID: 3, Kind: webhook.KindBuild, Attempt: 5, Synthesized: true}
	ctx := r.obs.HandlingStarted(context.Background(), d)
	r.obs.HandlingEnded(ctx, d, webhook.HandleDeadLetter, time.Millisecond, errors.New("token abc in a message"))
	r.obs.CatchUpEnded(context.Background(), webhook.CatchUpReport{Project: "team/app", Changes: 4, Lag: 90 * time.Second})
	r.obs.CatchUpEnded(context.Background(), webhook.CatchUpReport{Project: "team/app", Err: errors.New("503")})

	s := r.ended("webhook handle")[0]
	assert.Equal(t, true, attrs(s.Attributes)["collab.webhook.synthesized"])
	assert.Equal(t, "*errors.errorString", s.Status.Description, "the kind of error, never its message")
	assert.Empty(t, s.Links)
	m := r.metrics(t)
	assert.Equal(t, int64(1), sum[int64](t, m["collab.webhook.dead_letters"], map[string]any{"collab.webhook.kind": "Build Hook"}))
	assert.Equal(t, int64(1), sum[int64](t, m["collab.webhook.catchup.runs"], map[string]any{"collab.webhook.catchup.result": "ok"}))
	assert.Equal(t, int64(1), sum[int64](t, m["collab.webhook.catchup.runs"], map[string]any{"collab.webhook.catchup.result": "error"}))
	assert.Equal(t, int64(4), sum[int64](t, m["collab.webhook.catchup.changes"], map[string]any{"collab.webhook.project": "team/app"}))
	assert.Equal(t, 0.0, gauge[float64](t, m["collab.webhook.catchup.lag"], map[string]any{"collab.webhook.project": "team/app"}))
}

func TestObserveQueue(t *testing.T) {
	r := newRecorder(t)
	stats := webhook.QueueStats{Pending: 12, Oldest: time.Now().Add(-time.Minute), DeadLetters: 2}
	var fail error
	unregister, err := r.obs.ObserveQueue(func(context.Context) (webhook.QueueStats, error) { return stats, fail })
	require.NoError(t, err)
	m := r.metrics(t)
	assert.Equal(t, int64(12), gauge[int64](t, m["collab.webhook.queue.depth"], nil))
	assert.Equal(t, int64(2), gauge[int64](t, m["collab.webhook.queue.dead_letters"], nil))
	assert.InDelta(t, 60, gauge[float64](t, m["collab.webhook.queue.oldest_age"], nil), 5)

	stats = webhook.QueueStats{}
	assert.Equal(t, 0.0, gauge[float64](t, r.metrics(t)["collab.webhook.queue.oldest_age"], nil), "no pending delivery has no age")
	require.NoError(t, unregister())
	_, ok := r.metrics(t)["collab.webhook.queue.depth"]
	assert.False(t, ok, "nothing is read once unregistered")
}

func TestNewRefusesNilPropagator(t *testing.T) {
	_, err := otelcollab.New(otelcollab.WithPropagator(nil))
	require.Error(t, err)
	_, err = otelcollab.New(otelcollab.WithPropagator(propagation.TraceContext{}))
	require.NoError(t, err)
}

// With providers that record nothing, the observer keeps nothing: a call
// costs what starting a no-op span costs, and a span of the caller's in
// the context is never touched.
func TestNoProviderCostsNextToNothing(t *testing.T) {
	obs, err := otelcollab.New(otelcollab.WithTracerProvider(tracenoop.NewTracerProvider()), otelcollab.WithMeterProvider(metricnoop.NewMeterProvider()))
	require.NoError(t, err)
	ci := collab.CallInfo{Method: "GET", Route: "/projects/:id/issues", Host: "h"}
	allocs := testing.AllocsPerRun(100, func() {
		obs.CallEnded(obs.CallStarted(context.Background(), ci), collab.CallEnd{Status: 200, Attempts: 1})
	})
	assert.LessOrEqual(t, allocs, 4.0, "allocations of an unobserved call")

	r := newRecorder(t)
	ctx, callers := r.tp.Tracer("caller").Start(context.Background(), "caller's request")
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://receiver/hook", nil)
	require.NoError(t, err)
	obs.DeliveryAdmitted(obs.DeliveryReceived(ctx, req), webhook.KindIssue, webhook.OutcomeAccepted)
	d := &webhook.Delivery{Kind: webhook.KindIssue}
	obs.HandlingEnded(obs.HandlingStarted(ctx, d), d, webhook.HandleDone, time.Millisecond, nil)
	assert.True(t, callers.IsRecording(), "the caller's span was ended")
	callers.End()
}
