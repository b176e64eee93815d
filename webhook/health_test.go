package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func healthOf(t *testing.T, h *Handler) (int, Health) {
	t.Helper()
	w := httptest.NewRecorder()
	h.HealthHandler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	var hs Health
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &hs), w.Body.String())
	assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
	return w.Code, hs
}

func TestHealthReadyAndProgressing(t *testing.T) {
	started, release := make(chan int, 2), make(chan struct{})
	q := NewMemoryQueue(MemoryQueueOptions{MaxPending: 1})
	defer q.Close()
	h := newHandler(t, Options{Queue: q, Workers: 1, ProgressTimeout: 50 * time.Millisecond, OnIssue: blockingIssues(started, release)})
	code, hs := healthOf(t, h)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.True(t, hs.Ready)
	assert.False(t, hs.Progressing, "Run was not called")
	assert.Contains(t, hs.Problems, "not running: Run was not called")

	stop := running(t, h)
	require.Eventually(t, h.started.Load, 10*time.Second, time.Millisecond)
	code, hs = healthOf(t, h)
	assert.Equal(t, http.StatusOK, code, "%+v", hs)
	assert.True(t, hs.Ready && hs.Progressing)

	assert.Equal(t, http.StatusOK, serve(h, issueDelivery(t, 1)).Code)
	<-started
	code, hs = healthOf(t, h)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.False(t, hs.Ready, "the bound is reached")
	assert.Equal(t, 1, hs.Queue.Pending)
	assert.Contains(t, hs.Problems[0], "queue full")

	// The callback hangs: after ProgressTimeout, no progress.
	require.Eventually(t, func() bool { return !h.Health(context.Background()).Progressing }, 10*time.Second, 5*time.Millisecond)
	close(release)
	waitIdle(t, h)
	hs = h.Health(context.Background())
	assert.True(t, hs.Ready && hs.Progressing, "%+v", hs)

	require.NoError(t, stop())
	hs = h.Health(context.Background())
	assert.False(t, hs.Progressing, "Run returned")
	require.NoError(t, q.Close())
	assert.False(t, h.Health(context.Background()).Ready, "the queue is closed")
}

// lossyQueue is a MemoryQueue whose engine reports losses on demand.
type lossyQueue struct {
	*MemoryQueue
	losses chan time.Time
}

func (q *lossyQueue) Losses() <-chan time.Time { return q.losses }

// TestLossIsCaughtUp: a loss the queue reports is counted, makes the
// handler unhealthy, and is answered with OnLoss from the last good time,
// again until it succeeds; then the handler is healthy again.
func TestLossIsCaughtUp(t *testing.T) {
	q := &lossyQueue{MemoryQueue: NewMemoryQueue(MemoryQueueOptions{}), losses: make(chan time.Time)}
	defer q.Close()
	good := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	var calls atomic.Int32
	proceed := make(chan struct{})
	h := newHandler(t, Options{Queue: q, RetryMin: time.Millisecond, OnIssue: func(context.Context, *IssueEvent) error { return nil },
		OnLoss: func(ctx context.Context, _ *Handler, since time.Time) error {
			assert.Equal(t, good, since)
			if calls.Add(1) == 1 {
				<-proceed
				return errors.New("the API is down")
			}
			return nil
		}})
	running(t, h)
	q.losses <- good
	code, hs := healthOf(t, h)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.False(t, hs.Ready)
	require.NotNil(t, hs.LossSince)
	assert.True(t, good.Equal(*hs.LossSince))
	assert.Equal(t, int64(1), h.Stats().Losses)
	close(proceed)
	require.Eventually(t, func() bool { return h.Health(context.Background()).Ready }, 10*time.Second, time.Millisecond)
	assert.Equal(t, int32(2), calls.Load(), "called again after it failed")
}

func TestLossWithoutOnLossStaysReported(t *testing.T) {
	q := &lossyQueue{MemoryQueue: NewMemoryQueue(MemoryQueueOptions{}), losses: make(chan time.Time)}
	defer q.Close()
	h := newHandler(t, Options{Queue: q, OnIssue: func(context.Context, *IssueEvent) error { return nil }})
	running(t, h)
	q.losses <- time.Now()
	q.losses <- time.Now() // the first was handled
	require.Eventually(t, func() bool { return h.Stats().Losses == 2 }, 10*time.Second, time.Millisecond)
	hs := h.Health(context.Background())
	assert.False(t, hs.Ready)
	assert.NotNil(t, hs.LossSince)
}

// TestFailingDeliveries: a delivery counts as stuck from its StuckAttempts-th
// failed attempt until it is handled; one whose next attempt is overdue
// past the grace was handled elsewhere, and is forgotten.
func TestFailingDeliveries(t *testing.T) {
	var s healthState
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	d := &Delivery{ID: 7, Kind: KindIssue, Partition: "issue/1"}
	for d.Attempt = 1; d.Attempt <= 2; d.Attempt++ {
		s.failed(d, now, now.Add(time.Second))
	}
	assert.Empty(t, s.stuck(3, now, time.Minute), "two failed attempts")
	d.Attempt = 3
	s.failed(d, now.Add(time.Second), now.Add(2*time.Second))
	want := FailingDelivery{ID: 7, Kind: KindIssue, Partition: "issue/1", Attempts: 3, Since: now, Next: now.Add(2 * time.Second)}
	assert.Equal(t, []FailingDelivery{want}, s.stuck(3, now.Add(time.Second), time.Minute))
	assert.Equal(t, []FailingDelivery{want}, s.stuck(3, now.Add(2*time.Second+time.Minute), time.Minute), "overdue by the grace")
	assert.Empty(t, s.stuck(3, now.Add(3*time.Second+time.Minute), time.Minute), "overdue past the grace")
	assert.Empty(t, s.failing, "forgotten")

	s.failed(d, now, now.Add(time.Second))
	s.failed(&Delivery{ID: 3, Kind: KindPush, Attempt: 4}, now, now.Add(time.Second))
	got := s.stuck(3, now, time.Minute)
	require.Len(t, got, 2)
	assert.Equal(t, []uint64{3, 7}, []uint64{got[0].ID, got[1].ID}, "oldest first")
	assert.Equal(t, "delivery 3 (Push Hook) failed 4 attempts in a row since 2026-12-01T09:00:00Z; its errors are logged with id=3",
		got[0].problem(), "no partition held back")
	s.settled(7)
	s.settled(3)
	assert.Empty(t, s.stuck(1, now, time.Minute), "handled")
}

// TestDeadLetteredIsNoLongerFailing: a delivery reported stuck stops being
// reported once it is dead-lettered; the dead letter is the operator's now.
func TestDeadLetteredIsNoLongerFailing(t *testing.T) {
	second, release := make(chan struct{}), make(chan struct{})
	h := newHandler(t, Options{StuckAttempts: 1, MaxAttempts: 2, RetryMin: time.Millisecond, RetryMax: time.Millisecond,
		Logger: slog.New(slog.DiscardHandler),
		OnIssue: func(ctx context.Context, _ *IssueEvent) error {
			if DeliveryFrom(ctx).Attempt == 2 {
				close(second)
				<-release
			}
			return errors.New("boom")
		}})
	running(t, h)
	assert.Equal(t, http.StatusOK, serve(h, issueDelivery(t, 1)).Code)
	<-second
	hs := h.Health(context.Background())
	assert.False(t, hs.Progressing)
	require.Len(t, hs.Failing, 1, "%+v", hs)
	assert.Equal(t, 1, hs.Failing[0].Attempts)
	close(release)
	waitIdle(t, h)
	hs = h.Health(context.Background())
	assert.True(t, hs.Ready && hs.Progressing, "%+v", hs)
	assert.Empty(t, hs.Failing)
	assert.Equal(t, 1, hs.Queue.DeadLetters)
}
