package webhook

import (
	"context"
	"encoding/json"
	"errors"
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
