package diskqueue

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/queuetest"
)

func TestQueue(t *testing.T) {
	queuetest.Run(t, queuetest.Maker{
		Open: func(t *testing.T, maxPending int, maxBytes int64) queuetest.Queue {
			q := openDisk(t, t.TempDir(), Options{MaxPending: maxPending, MaxBytes: maxBytes})
			t.Cleanup(func() { _ = q.Close() })
			return q
		},
		SetClock: func(q queuetest.Queue, now func() time.Time) {
			d := q.(*Queue)
			d.mu.Lock()
			defer d.mu.Unlock()
			d.s.SetClock(now)
		},
	})
}

func TestDedupWindowExpires(t *testing.T) {
	q := openDisk(t, t.TempDir(), Options{DedupWindow: time.Millisecond})
	defer q.Close()
	queuetest.Put(t, q, "k", "")
	time.Sleep(5 * time.Millisecond)
	queuetest.Put(t, q, "k", "") // past the window: stored again
}

// TestDiskQueueRecovery: what was pending, leased, dead-lettered, seen or
// checkpointed comes back after a reopen, in arrival order.
func TestDiskQueueRecovery(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	q := openDisk(t, dir, Options{})
	var ids []uint64
	for i := range 6 {
		ids = append(ids, queuetest.Put(t, q, fmt.Sprint("k", i), fmt.Sprint("issue/", i%2)))
	}
	require.Equal(t, ids[0], queuetest.Take(t, q).ID)
	require.NoError(t, q.Ack(ctx, ids[0]))
	require.Equal(t, ids[1], queuetest.Take(t, q).ID) // leased at the "crash"
	require.Equal(t, ids[2], queuetest.Take(t, q).ID)
	require.NoError(t, q.DeadLetter(ctx, ids[2], "bad"))
	require.NoError(t, q.SetCheckpoint(ctx, "c", []byte("v")))
	require.NoError(t, q.Close())

	q = openDisk(t, dir, Options{})
	defer q.Close()
	assert.Equal(t, 4, q.Len())
	var got []uint64
	for range 4 {
		d := queuetest.Take(t, q)
		got = append(got, d.ID)
		if d.ID == ids[1] {
			assert.Equal(t, 2, d.Attempt, "the attempt cut short counts")
		}
		require.NoError(t, q.Ack(ctx, d.ID))
	}
	assert.Equal(t, []uint64{ids[1], ids[3], ids[4], ids[5]}, got)
	dead, err := q.DeadLetters(ctx)
	require.NoError(t, err)
	require.Len(t, dead, 1)
	assert.Equal(t, ids[2], dead[0].ID)
	assert.ErrorIs(t, q.Put(ctx, &webhook.Delivery{Key: "k0"}), webhook.ErrDuplicate)
	v, err := q.Checkpoint(ctx, "c")
	require.NoError(t, err)
	assert.Equal(t, "v", string(v))
	assert.Greater(t, queuetest.Put(t, q, "new", ""), ids[5], "ids keep growing")
}

