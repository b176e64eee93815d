package otelcollab_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/catchup"
)

// A real Handler, fed by the fake server's webhooks, reporting to the
// recorder.

// receiver is a Handler observed by the fixture's recorder, with a hook of
// the fake server pointing at it.
func (f *fixture) receiver(t *testing.T, opts webhook.Options) *webhook.Handler {
	opts.Observer = f.rec.obs
	opts.RetryMin, opts.RetryMax = time.Millisecond, time.Millisecond
	if opts.Queue == nil {
		opts.Queue = webhook.NewMemoryQueue(webhook.MemoryQueueOptions{})
	}
	h, err := webhook.NewHandler(opts)
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- h.Run(ctx) }()
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		stop()
		require.NoError(t, <-stopped)
	})
	_, _, err = f.c.Hooks.Add(context.Background(), f.pid, &collab.AddHookOptions{URL: srv.URL, IssuesEvents: collab.Ptr(true), PushEvents: collab.Ptr(false)})
	require.NoError(t, err)
	return h
}

func TestDeliveryHandledOnSecondAttempt(t *testing.T) {
	f := newFixture(t)
	var attempts atomic.Int32
	done := make(chan struct{})
	f.receiver(t, webhook.Options{OnIssue: func(ctx context.Context, e *webhook.IssueEvent) error {
		if attempts.Add(1) == 1 {
			return errors.New("not yet")
		}
		defer close(done)
		_, _, err := f.c.Notes.CreateIssueNote(ctx, f.pid, e.ObjectAttributes.ID, &collab.CreateNoteOptions{Body: "seen"})
		return err
	}})
	_, _, err := f.c.Issues.Create(context.Background(), f.pid, &collab.CreateIssueOptions{Title: "traced"})
	require.NoError(t, err)
	waitFor(t, done)

	recv := f.rec.ended("webhook receive")
	require.Len(t, recv, 1)
	assert.Equal(t, trace.SpanKindServer, recv[0].SpanKind)
	assert.Equal(t, "accepted", attrs(recv[0].Attributes)["collab.webhook.outcome"])
	handles := eventually(t, f.rec, "webhook handle", 2)
	for i, h := range handles {
		require.Len(t, h.Links, 1, "handling %d links to its admission", i+1)
		assert.Equal(t, recv[0].SpanContext.SpanID(), h.Links[0].SpanContext.SpanID())
		assert.Equal(t, int64(i+1), attrs(h.Attributes)["collab.attempt"])
	}
	assert.Equal(t, "retry", attrs(handles[0].Attributes)["collab.webhook.outcome"])
	assert.Equal(t, codes.Error, handles[0].Status.Code)
	assert.Equal(t, "done", attrs(handles[1].Attributes)["collab.webhook.outcome"])
	notes := f.rec.ended("POST /projects/:id/issues/:issue_id/notes")
	require.Len(t, notes, 1)
	assert.Equal(t, handles[1].SpanContext.SpanID(), notes[0].Parent.SpanID(), "the callback's API call is a child of its handling")
	assert.Equal(t, handles[1].SpanContext.TraceID(), notes[0].SpanContext.TraceID())

	m := f.rec.metrics(t)
	issue := map[string]any{"collab.webhook.kind": "Issue Hook"}
	assert.Equal(t, int64(1), sum[int64](t, m["collab.webhook.received"], issue))
	assert.Equal(t, int64(1), sum[int64](t, m["collab.webhook.admitted"], merge(issue, map[string]any{"collab.webhook.outcome": "accepted"})))
	for _, outcome := range []string{"retry", "done"} {
		n, _ := histogramCount[float64](t, m["collab.webhook.handling.duration"], merge(issue, map[string]any{"collab.webhook.outcome": outcome}))
		assert.Equal(t, uint64(1), n, outcome)
	}
	n, total := histogramCount[int64](t, m["collab.webhook.handling.attempts"], issue)
	assert.Equal(t, uint64(1), n)
	assert.Equal(t, int64(2), total)
}

func TestDeadLetter(t *testing.T) {
	f := newFixture(t)
	q := webhook.NewMemoryQueue(webhook.MemoryQueueOptions{})
	failed := make(chan struct{}, 1)
	h := f.receiver(t, webhook.Options{Queue: q, MaxAttempts: 1, OnIssue: func(context.Context, *webhook.IssueEvent) error {
		failed <- struct{}{}
		return errors.New("always")
	}})
	_, err := f.rec.obs.ObserveQueue(q.Stats)
	require.NoError(t, err)
	_, _, err = f.c.Issues.Create(context.Background(), f.pid, &collab.CreateIssueOptions{Title: "doomed"})
	require.NoError(t, err)
	waitFor(t, failed)
	handles := eventually(t, f.rec, "webhook handle", 1)
	assert.Equal(t, "dead_letter", attrs(handles[0].Attributes)["collab.webhook.outcome"])
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, h.WaitIdle(ctx))

	m := f.rec.metrics(t)
	assert.Equal(t, int64(1), sum[int64](t, m["collab.webhook.dead_letters"], map[string]any{"collab.webhook.kind": "Issue Hook"}))
	assert.Equal(t, int64(1), gauge[int64](t, m["collab.webhook.queue.dead_letters"], nil))
	assert.Equal(t, int64(0), gauge[int64](t, m["collab.webhook.queue.depth"], nil))
}

func TestCatchUp(t *testing.T) {
	f := newFixture(t)
	// Changes made before the receiver's hook existed: no webhook tells of
	// them, and catch-up finds them.
	f.srv.Seed.Issue(f.p, f.srv.Admin, "missed one")
	f.srv.Seed.Issue(f.p, f.srv.Admin, "missed two")
	require.NoError(t, f.srv.Err())
	handled := make(chan *webhook.Delivery, 8)
	h := f.receiver(t, webhook.Options{OnIssue: func(ctx context.Context, _ *webhook.IssueEvent) error {
		handled <- webhook.DeliveryFrom(ctx)
		return nil
	}})
	ctx, walk := f.rec.tp.Tracer("test").Start(context.Background(), "catch-up")
	st, err := catchup.Run(ctx, h, f.c, catchup.Options{Projects: catchup.IDs(f.pid), Since: time.Now().Add(-time.Hour)})
	walk.End()
	require.NoError(t, err)
	require.Equal(t, 2, st.Admitted[webhook.KindIssue])
	for range 2 {
		select {
		case d := <-handled:
			assert.True(t, d.Synthesized)
		case <-time.After(10 * time.Second):
			t.Fatal("a synthesized event was not handled")
		}
	}
	for _, s := range eventually(t, f.rec, "webhook handle", 2) {
		a := attrs(s.Attributes)
		assert.Equal(t, true, a["collab.webhook.synthesized"], "a synthesized event says so")
		assert.Equal(t, "done", a["collab.webhook.outcome"])
	}
	calls := f.rec.ended("GET /projects/:id/issues")
	require.NotEmpty(t, calls, "catch-up's API calls are traced")
	for _, c := range calls {
		assert.Equal(t, walk.SpanContext().SpanID(), c.Parent.SpanID(), "as children of the caller's span")
	}
	m := f.rec.metrics(t)
	n, _ := histogramCount[float64](t, m["collab.webhook.handling.duration"], map[string]any{"collab.webhook.outcome": "done"})
	assert.Equal(t, uint64(2), n)
	assert.Equal(t, int64(1), sum[int64](t, m["collab.webhook.catchup.runs"], map[string]any{"collab.webhook.catchup.result": "ok"}))
	assert.Equal(t, int64(2), sum[int64](t, m["collab.webhook.catchup.changes"], nil))
}
