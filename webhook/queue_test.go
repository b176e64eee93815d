package webhook_test

import (
	"context"
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
