// Package queuetest holds the tests every local webhook.Queue passes, run
// by the tests of each queue.
package queuetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab/webhook"
)

// Queue is what a local queue offers besides webhook.Queue.
type Queue interface {
	webhook.Queue
	Len() int
	WaitIdle(context.Context) error
}

// Maker makes the queues under test.
type Maker struct {
	// Open returns a new empty queue with MaxPending and MaxBytes set.
	Open func(t *testing.T, maxPending int, maxBytes int64) Queue
	// SetClock turns the queue's clock.
	SetClock func(q Queue, now func() time.Time)
}

// Run runs every test of the suite.
func Run(t *testing.T, m Maker) {
	t.Run("OrderLeasesAndDeadLetters", func(t *testing.T) { orderLeasesAndDeadLetters(t, m) })
	t.Run("DedupAndCheckpoints", func(t *testing.T) { dedupAndCheckpoints(t, m.Open(t, 0, 0)) })
	t.Run("Close", func(t *testing.T) { closing(t, m.Open(t, 0, 0)) })
	t.Run("Bound", func(t *testing.T) { bound(t, m.Open(t, 1, 0)) })
	t.Run("ConcurrentBounds", func(t *testing.T) { concurrentBounds(t, m) })
	t.Run("StatsAndCheck", func(t *testing.T) { statsAndCheck(t, m.Open(t, 2, 0)) })
}

// Put stores a small delivery and returns its id.
func Put(t *testing.T, q webhook.Queue, key, part string) uint64 {
	t.Helper()
	d := &webhook.Delivery{Key: key, Partition: part, Kind: webhook.KindIssue, ReceivedAt: time.Now(), Body: []byte(`{"k":"` + key + `"}`)}
	require.NoError(t, q.Put(context.Background(), d))
	require.NotZero(t, d.ID)
	return d.ID
}

// Take takes the next delivery, or fails when none is ready soon.
func Take(t *testing.T, q webhook.Queue) *webhook.Delivery {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := q.Take(ctx)
	require.NoError(t, err)
	return d
}

// NoneReady checks that nothing is handed out for a while.
func NoneReady(t *testing.T, q webhook.Queue) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	d, err := q.Take(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded, "handed out %+v", d)
}

func orderLeasesAndDeadLetters(t *testing.T, m Maker) {
	q := m.Open(t, 0, 0)
	ctx := context.Background()
	a1 := Put(t, q, "a1", "issue/1")
	a2 := Put(t, q, "a2", "issue/1")
	b1 := Put(t, q, "b1", "issue/2")
	n1 := Put(t, q, "n1", "")
	assert.Equal(t, 4, q.Len())

	d := Take(t, q)
	assert.Equal(t, a1, d.ID)
	assert.Equal(t, 1, d.Attempt)
	assert.Equal(t, []byte(`{"k":"a1"}`), d.Body)
	assert.Equal(t, b1, Take(t, q).ID, "a2 waits for a1")
	assert.Equal(t, n1, Take(t, q).ID)
	NoneReady(t, q)

	// A retry keeps a1 ahead of a2, and holds a2 back until it is due.
	require.NoError(t, q.Retry(ctx, a1, time.Now().Add(time.Hour), "boom"))
	NoneReady(t, q)
	assert.ErrorIs(t, q.Ack(ctx, a1), webhook.ErrNotLeased, "not leased while waiting")
	require.NoError(t, q.Ack(ctx, b1))
	require.NoError(t, q.Ack(ctx, n1))

	// Due now: a1 again, with its attempt and error.
	later := time.Now().Add(2 * time.Hour)
	m.SetClock(q, func() time.Time { return later })
	q2 := Take(t, q)
	require.Equal(t, a1, q2.ID)
	assert.Equal(t, 2, q2.Attempt)
	assert.Equal(t, "boom", q2.LastError)
	require.NoError(t, q.DeadLetter(ctx, a1, "gave up"))
	assert.Equal(t, a2, Take(t, q).ID, "a dead letter lets its partition go on")
	require.NoError(t, q.Ack(ctx, a2))
	require.NoError(t, q.WaitIdle(ctx))
	deadLetters(t, q, a2)
}

func deadLetters(t *testing.T, q Queue, last uint64) {
	ctx := context.Background()
	dead, err := q.DeadLetters(ctx)
	require.NoError(t, err)
	require.Len(t, dead, 1)
	assert.Equal(t, "a1", dead[0].Key)
	assert.Equal(t, "gave up", dead[0].LastError)
	require.NoError(t, q.Requeue(ctx, dead[0].ID))
	d := Take(t, q)
	assert.Equal(t, "a1", d.Key)
	assert.Equal(t, []byte(`{"k":"a1"}`), d.Body)
	assert.Greater(t, d.ID, last, "requeued behind the rest")
	assert.Equal(t, 1, d.Attempt, "attempts reset")
	require.NoError(t, q.DeadLetter(ctx, d.ID, "again"))
	require.NoError(t, q.Delete(ctx, d.ID))
	dead, err = q.DeadLetters(ctx)
	require.NoError(t, err)
	assert.Empty(t, dead)

	assert.ErrorIs(t, q.Delete(ctx, d.ID), webhook.ErrNotDeadLettered)
	assert.ErrorIs(t, q.Requeue(ctx, 12345), webhook.ErrNotDeadLettered)
	assert.ErrorIs(t, q.Ack(ctx, 12345), webhook.ErrNotLeased)
	assert.ErrorIs(t, q.Retry(ctx, 12345, time.Now(), ""), webhook.ErrNotLeased)
	assert.ErrorIs(t, q.DeadLetter(ctx, 12345, ""), webhook.ErrNotLeased)
	assert.Zero(t, q.Len())
}

func dedupAndCheckpoints(t *testing.T, q Queue) {
	ctx := context.Background()
	Put(t, q, "k", "")
	assert.ErrorIs(t, q.Put(ctx, &webhook.Delivery{Key: "k"}), webhook.ErrDuplicate)
	seen, err := q.Seen(ctx, "k")
	require.NoError(t, err)
	assert.True(t, seen)
	seen, err = q.Seen(ctx, "other")
	require.NoError(t, err)
	assert.False(t, seen)
	require.NoError(t, q.Ack(ctx, Take(t, q).ID))
	assert.ErrorIs(t, q.Put(ctx, &webhook.Delivery{Key: "k"}), webhook.ErrDuplicate, "still remembered once handled")

	v, err := q.Checkpoint(ctx, "catchup/7")
	require.NoError(t, err)
	assert.Nil(t, v)
	require.NoError(t, q.SetCheckpoint(ctx, "catchup/7", []byte("2016-06-21T09:14:07Z")))
	v, err = q.Checkpoint(ctx, "catchup/7")
	require.NoError(t, err)
	assert.Equal(t, "2016-06-21T09:14:07Z", string(v))
}

func closing(t *testing.T, q Queue) {
	taken := make(chan error)
	go func() {
		_, err := q.Take(context.Background())
		taken <- err
	}()
	require.NoError(t, q.Close())
	assert.ErrorIs(t, <-taken, webhook.ErrQueueClosed)
	assert.ErrorIs(t, q.Put(context.Background(), &webhook.Delivery{Key: "x"}), webhook.ErrQueueClosed)
	assert.ErrorIs(t, q.Check(context.Background()), webhook.ErrQueueClosed)
	require.NoError(t, q.Close(), "twice")
}

func bound(t *testing.T, q Queue) {
	ctx := context.Background()
	Put(t, q, "a", "")
	// A repeat of what is stored is a duplicate, answered 200, even at the
	// bound: it is kept, not dropped.
	assert.ErrorIs(t, q.Put(ctx, &webhook.Delivery{Key: "a"}), webhook.ErrDuplicate)
	assert.ErrorIs(t, q.Put(ctx, &webhook.Delivery{Key: "b"}), webhook.ErrQueueFull)
	seen, _ := q.Seen(ctx, "b")
	assert.False(t, seen, "a refused delivery's key is not recorded")
}

// concurrentBounds: hundreds of Puts at once never pass MaxPending or
// MaxBytes; each is stored or refused with ErrQueueFull.
func concurrentBounds(t *testing.T, m Maker) {
	const n, maxPending = 300, 10
	body := make([]byte, 1000)
	for _, c := range []struct {
		name      string
		pending   int
		bytes     int64
		wantStore int
	}{{"MaxPending", maxPending, 0, maxPending}, {"MaxBytes", 0, 25 * 1000, 25}} {
		q := m.Open(t, c.pending, c.bytes)
		var wg sync.WaitGroup
		var mu sync.Mutex
		got := map[string]int{}
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				err := q.Put(context.Background(), &webhook.Delivery{Key: fmt.Sprint("k", i), Body: body})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					got["stored"]++
				case assert.ErrorIs(t, err, webhook.ErrQueueFull):
					got["full"]++
				}
			}()
		}
		close(start)
		wg.Wait()
		t.Logf("%s: %d concurrent Puts: %v", c.name, n, got)
		assert.Equal(t, map[string]int{"stored": c.wantStore, "full": n - c.wantStore}, got, c.name)
		assert.Equal(t, c.wantStore, q.Len(), c.name)
	}
}

func statsAndCheck(t *testing.T, q Queue) {
	ctx := context.Background()
	st, err := q.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, webhook.QueueStats{}, st)
	require.NoError(t, q.Check(ctx))
	before := time.Now()
	Put(t, q, "a", "")
	Put(t, q, "b", "")
	require.ErrorIs(t, q.Check(ctx), webhook.ErrQueueFull, "at the bound")
	d := Take(t, q)
	require.NoError(t, q.DeadLetter(ctx, d.ID, "x"))
	st, err = q.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Pending)
	assert.Equal(t, 1, st.DeadLetters)
	assert.False(t, st.Oldest.Before(before.Add(-time.Second)), "oldest %v", st.Oldest)
	require.NoError(t, q.Check(ctx))
}
