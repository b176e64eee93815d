package webhook_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/queuetest"
)

var _ webhook.IdleWaiter = (*webhook.MemoryQueue)(nil)

func TestMemoryQueue(t *testing.T) {
	queuetest.Run(t, queuetest.Maker{
		Open: func(t *testing.T, maxPending int, maxBytes int64) queuetest.Queue {
			q := webhook.NewMemoryQueue(webhook.MemoryQueueOptions{MaxPending: maxPending, MaxBytes: maxBytes})
			t.Cleanup(func() { _ = q.Close() })
			return q
		},
		SetClock: func(q queuetest.Queue, now func() time.Time) {
			webhook.SetMemoryClock(q.(*webhook.MemoryQueue), now)
		},
	})
}

func TestMemoryQueueDedupWindow(t *testing.T) {
	ctx := context.Background()
	q := webhook.NewMemoryQueue(webhook.MemoryQueueOptions{DedupWindow: time.Millisecond})
	defer q.Close()
	queuetest.Put(t, q, "k", "")
	time.Sleep(5 * time.Millisecond)
	queuetest.Put(t, q, "k", "") // past the window: stored again

	off := webhook.NewMemoryQueue(webhook.MemoryQueueOptions{DedupWindow: -1})
	defer off.Close()
	queuetest.Put(t, off, "k", "")
	queuetest.Put(t, off, "k", "")
	seen, err := off.Seen(ctx, "k")
	require.NoError(t, err)
	assert.False(t, seen)
}

// TestWaitIdleDrains: the drain before a planned stop. With the deliveries
// stored and their callbacks running, WaitIdle waits for them, returns once
// each is handled, and Shutdown then finds a queue with nothing to lose.
func TestWaitIdleDrains(t *testing.T) {
	const n = 10
	q := webhook.NewMemoryQueue(webhook.MemoryQueueOptions{})
	release := make(chan struct{})
	var handled atomic.Int64
	h, err := webhook.NewHandler(webhook.Options{Queue: q, OnIssue: func(context.Context, *webhook.IssueEvent) error {
		<-release
		handled.Add(1)
		return nil
	}})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	body, err := os.ReadFile("testdata/spec/issue.json")
	require.NoError(t, err)
	for i := range n {
		r := httptest.NewRequest(http.MethodPost, "/hook",
			strings.NewReader(strings.Replace(string(body), `"id":4417`, `"id":`+strconv.Itoa(i+1), 1)))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set(webhook.HeaderEvent, string(webhook.KindIssue))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		require.Equal(t, http.StatusOK, w.Code)
	}

	short, stop := context.WithTimeout(ctx, 20*time.Millisecond)
	defer stop()
	require.ErrorIs(t, h.WaitIdle(short), context.DeadlineExceeded, "the callbacks are blocked")
	close(release)
	require.NoError(t, h.WaitIdle(ctx))
	assert.Equal(t, int64(n), handled.Load())
	assert.Zero(t, q.Len())
	require.NoError(t, h.Shutdown(ctx))
	require.NoError(t, <-done)
}
