package webhook

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

// localQueue is what both local queues offer.
type localQueue interface {
	Queue
	Len() int
	WaitIdle(context.Context) error
}

// eachQueue runs test on a new MemoryQueue and on a new DiskQueue.
func eachQueue(t *testing.T, test func(t *testing.T, q localQueue)) {
	t.Run("memory", func(t *testing.T) {
		q := NewMemoryQueue(MemoryQueueOptions{})
		defer q.Close()
		test(t, q)
	})
	t.Run("disk", func(t *testing.T) {
		q := openDisk(t, t.TempDir(), DiskQueueOptions{})
		defer q.Close()
		test(t, q)
	})
}

func openDisk(t *testing.T, dir string, o DiskQueueOptions) *DiskQueue {
	t.Helper()
	q, err := OpenDiskQueue(dir, o)
	require.NoError(t, err)
	return q
}

func put(t *testing.T, q Queue, key, part string) uint64 {
	t.Helper()
	d := &Delivery{Key: key, Partition: part, Kind: KindIssue, ReceivedAt: time.Now(), Body: []byte(`{"k":"` + key + `"}`)}
	require.NoError(t, q.Put(context.Background(), d))
	require.NotZero(t, d.ID)
	return d.ID
}

// take takes the next delivery, or fails when none is ready soon.
func take(t *testing.T, q Queue) *Delivery {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := q.Take(ctx)
	require.NoError(t, err)
	return d
}

// noneReady checks that nothing is handed out for a while.
func noneReady(t *testing.T, q Queue) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	d, err := q.Take(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded, "handed out %+v", d)
}

func TestQueueOrderLeasesAndDeadLetters(t *testing.T) {
	eachQueue(t, func(t *testing.T, q localQueue) {
		ctx := context.Background()
		a1 := put(t, q, "a1", "issue/1")
		a2 := put(t, q, "a2", "issue/1")
		b1 := put(t, q, "b1", "issue/2")
		n1 := put(t, q, "n1", "")
		assert.Equal(t, 4, q.Len())

		d := take(t, q)
		assert.Equal(t, a1, d.ID)
		assert.Equal(t, 1, d.Attempt)
		assert.Equal(t, []byte(`{"k":"a1"}`), d.Body)
		assert.Equal(t, b1, take(t, q).ID, "a2 waits for a1")
		assert.Equal(t, n1, take(t, q).ID)
		noneReady(t, q)

		// A retry keeps a1 ahead of a2, and holds a2 back until it is due.
		require.NoError(t, q.Retry(ctx, a1, time.Now().Add(time.Hour), "boom"))
		noneReady(t, q)
		assert.Error(t, q.Ack(ctx, a1), "not leased while waiting")
		require.NoError(t, q.Ack(ctx, b1))
		require.NoError(t, q.Ack(ctx, n1))

		// Due now: a1 again, with its attempt and error.
		q2 := retryNow(t, q, a1)
		assert.Equal(t, 2, q2.Attempt)
		assert.Equal(t, "boom", q2.LastError)
		require.NoError(t, q.DeadLetter(ctx, a1, "gave up"))
		assert.Equal(t, a2, take(t, q).ID, "a dead letter lets its partition go on")
		require.NoError(t, q.Ack(ctx, a2))
		require.NoError(t, q.WaitIdle(ctx))

		dead, err := q.DeadLetters(ctx)
		require.NoError(t, err)
		require.Len(t, dead, 1)
		assert.Equal(t, "a1", dead[0].Key)
		assert.Equal(t, "gave up", dead[0].LastError)
		require.NoError(t, q.Requeue(ctx, a1))
		d = take(t, q)
		assert.Equal(t, "a1", d.Key)
		assert.Greater(t, d.ID, a2, "requeued behind the rest")
		assert.Equal(t, 1, d.Attempt, "attempts reset")
		require.NoError(t, q.DeadLetter(ctx, d.ID, "again"))
		require.NoError(t, q.Delete(ctx, d.ID))
		dead, err = q.DeadLetters(ctx)
		require.NoError(t, err)
		assert.Empty(t, dead)

		var se *stateError
		assert.ErrorAs(t, q.Delete(ctx, d.ID), &se)
		assert.ErrorAs(t, q.Requeue(ctx, 12345), &se)
		assert.ErrorAs(t, q.Ack(ctx, 12345), &se)
		assert.ErrorAs(t, q.Retry(ctx, 12345, time.Now(), ""), &se)
		assert.ErrorAs(t, q.DeadLetter(ctx, 12345, ""), &se)
		assert.Zero(t, q.Len())
	})
}

// retryNow turns q's clock past the retry time of id and takes it.
func retryNow(t *testing.T, q Queue, id uint64) *Delivery {
	t.Helper()
	later := time.Now().Add(2 * time.Hour)
	var s *schedule
	var mu *sync.Mutex
	switch q := q.(type) {
	case *MemoryQueue:
		s, mu = &q.s, &q.mu
	case *DiskQueue:
		s, mu = &q.s, &q.mu
	}
	mu.Lock()
	s.now = func() time.Time { return later }
	s.wake()
	mu.Unlock()
	d := take(t, q)
	require.Equal(t, id, d.ID)
	return d
}

func TestQueueDedupAndCheckpoints(t *testing.T) {
	eachQueue(t, func(t *testing.T, q localQueue) {
		ctx := context.Background()
		put(t, q, "k", "")
		assert.ErrorIs(t, q.Put(ctx, &Delivery{Key: "k"}), ErrDuplicate)
		seen, err := q.Seen(ctx, "k")
		require.NoError(t, err)
		assert.True(t, seen)
		seen, err = q.Seen(ctx, "other")
		require.NoError(t, err)
		assert.False(t, seen)
		require.NoError(t, q.Ack(ctx, take(t, q).ID))
		assert.ErrorIs(t, q.Put(ctx, &Delivery{Key: "k"}), ErrDuplicate, "still remembered once handled")

		v, err := q.Checkpoint(ctx, "catchup/7")
		require.NoError(t, err)
		assert.Nil(t, v)
		require.NoError(t, q.SetCheckpoint(ctx, "catchup/7", []byte("2016-06-21T09:14:07Z")))
		v, err = q.Checkpoint(ctx, "catchup/7")
		require.NoError(t, err)
		assert.Equal(t, "2016-06-21T09:14:07Z", string(v))
	})
}

func TestQueueClose(t *testing.T) {
	eachQueue(t, func(t *testing.T, q localQueue) {
		taken := make(chan error)
		go func() {
			_, err := q.Take(context.Background())
			taken <- err
		}()
		require.NoError(t, q.Close())
		assert.ErrorIs(t, <-taken, ErrQueueClosed)
		assert.ErrorIs(t, q.Put(context.Background(), &Delivery{Key: "x"}), ErrQueueClosed)
		require.NoError(t, q.Close(), "twice")
	})
}

func TestQueueDedupWindowExpires(t *testing.T) {
	ctx := context.Background()
	mq := NewMemoryQueue(MemoryQueueOptions{DedupWindow: time.Millisecond})
	defer mq.Close()
	dq := openDisk(t, t.TempDir(), DiskQueueOptions{DedupWindow: time.Millisecond})
	defer dq.Close()
	for _, q := range []Queue{mq, dq} {
		put(t, q, "k", "")
		time.Sleep(5 * time.Millisecond)
		put(t, q, "k", "") // past the window: stored again
	}
	off := NewMemoryQueue(MemoryQueueOptions{DedupWindow: -1})
	defer off.Close()
	put(t, off, "k", "")
	put(t, off, "k", "")
	seen, err := off.Seen(ctx, "k")
	require.NoError(t, err)
	assert.False(t, seen)
}

func TestQueueBound(t *testing.T) {
	mem := NewMemoryQueue(MemoryQueueOptions{MaxPending: 1})
	defer mem.Close()
	disk := openDisk(t, t.TempDir(), DiskQueueOptions{MaxPending: 1})
	defer disk.Close()
	for _, q := range []Queue{mem, disk} {
		put(t, q, "a", "")
		// A repeat of what is stored is a duplicate, answered 200, even at
		// the bound: it is kept, not dropped.
		assert.ErrorIs(t, q.Put(context.Background(), &Delivery{Key: "a"}), ErrDuplicate, "%T", q)
		assert.ErrorIs(t, q.Put(context.Background(), &Delivery{Key: "b"}), ErrQueueFull, "%T", q)
		seen, _ := q.Seen(context.Background(), "b")
		assert.False(t, seen, "%T: a refused delivery's key is not recorded", q)
	}
}

// TestDiskQueueRecovery: what was pending, leased, dead-lettered, seen or
// checkpointed comes back after a reopen, in arrival order.
func TestDiskQueueRecovery(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	q := openDisk(t, dir, DiskQueueOptions{})
	var ids []uint64
	for i := range 6 {
		ids = append(ids, put(t, q, fmt.Sprint("k", i), fmt.Sprint("issue/", i%2)))
	}
	require.Equal(t, ids[0], take(t, q).ID)
	require.NoError(t, q.Ack(ctx, ids[0]))
	require.Equal(t, ids[1], take(t, q).ID) // leased at the "crash"
	require.Equal(t, ids[2], take(t, q).ID)
	require.NoError(t, q.DeadLetter(ctx, ids[2], "bad"))
	require.NoError(t, q.SetCheckpoint(ctx, "c", []byte("v")))
	require.NoError(t, q.Close())

	q = openDisk(t, dir, DiskQueueOptions{})
	defer q.Close()
	assert.Equal(t, 4, q.Len())
	var got []uint64
	for range 4 {
		d := take(t, q)
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
	assert.ErrorIs(t, q.Put(ctx, &Delivery{Key: "k0"}), ErrDuplicate)
	v, err := q.Checkpoint(ctx, "c")
	require.NoError(t, err)
	assert.Equal(t, "v", string(v))
	assert.Greater(t, put(t, q, "new", ""), ids[5], "ids keep growing")
}

func TestDiskQueuePermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "q")
	require.NoError(t, os.Mkdir(dir, 0o755))
	q := openDisk(t, dir, DiskQueueOptions{})
	defer q.Close()
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	fi, err = os.Stat(filepath.Join(dir, "queue.db"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

func TestDiskQueueOpenErrors(t *testing.T) {
	base := t.TempDir()

	file := filepath.Join(base, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err := OpenDiskQueue(filepath.Join(file, "q"), DiskQueueOptions{})
	assert.ErrorContains(t, err, "queue directory")

	garbage := filepath.Join(base, "garbage")
	require.NoError(t, os.Mkdir(garbage, 0o700))
	junk := []byte("this is not a queue file, but it is someone's data; keep it")
	junk = append(junk, make([]byte, 8192)...)
	require.NoError(t, os.WriteFile(filepath.Join(garbage, "queue.db"), junk, 0o600))
	_, err = OpenDiskQueue(garbage, DiskQueueOptions{})
	assert.ErrorContains(t, err, "damaged")
	after, rerr := os.ReadFile(filepath.Join(garbage, "queue.db"))
	require.NoError(t, rerr)
	assert.Equal(t, junk, after, "never reset")

	busy := filepath.Join(base, "busy")
	q := openDisk(t, busy, DiskQueueOptions{})
	defer q.Close()
	_, err = OpenDiskQueue(busy, DiskQueueOptions{})
	assert.ErrorContains(t, err, "open in another process")

	_, err = OpenDiskQueue(filepath.Join(base, "neg"), DiskQueueOptions{MaxPending: -1})
	assert.Error(t, err)
}

// TestDiskQueueDamagedPages: a queue file whose data pages were overwritten
// is refused at open, with an error and no panic.
func TestDiskQueueDamagedPages(t *testing.T) {
	dir := t.TempDir()
	q := openDisk(t, dir, DiskQueueOptions{})
	for i := range 200 {
		put(t, q, fmt.Sprint("key-", i), "")
	}
	require.NoError(t, q.Close())
	path := filepath.Join(dir, "queue.db")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	pageSize := os.Getpagesize()
	require.Greater(t, len(data), 6*pageSize)
	for i := 4 * pageSize; i < len(data); i++ { // keep the meta pages, scramble the rest
		data[i] ^= 0x5a
	}
	require.NoError(t, os.WriteFile(path, data, 0o600))
	_, err = OpenDiskQueue(dir, DiskQueueOptions{})
	assert.ErrorContains(t, err, "damaged")
}

// TestDiskQueueFull: past MaxBytes, Put answers ErrQueueFull and what is
// stored stays intact.
func TestDiskQueueFull(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	q := openDisk(t, dir, DiskQueueOptions{MaxBytes: 1 << 20})
	body := make([]byte, 16<<10)
	stored := 0
	var full error
	for i := range 200 {
		err := q.Put(ctx, &Delivery{Key: fmt.Sprint("big-", i), Body: body})
		if err != nil {
			full = err
			break
		}
		stored++
	}
	require.ErrorIs(t, full, ErrQueueFull)
	assert.Positive(t, stored)
	seen, err := q.Seen(ctx, fmt.Sprint("big-", stored))
	require.NoError(t, err)
	assert.False(t, seen, "the refused key is not recorded")
	require.NoError(t, q.Close())

	q = openDisk(t, dir, DiskQueueOptions{MaxBytes: 1 << 20})
	defer q.Close()
	assert.Equal(t, stored, q.Len())
	for range stored {
		require.NoError(t, q.Ack(ctx, take(t, q).ID))
	}

	// MaxPending too.
	p := openDisk(t, t.TempDir(), DiskQueueOptions{MaxPending: 2})
	defer p.Close()
	put(t, p, "a", "")
	put(t, p, "b", "")
	assert.ErrorIs(t, p.Put(ctx, &Delivery{Key: "c"}), ErrQueueFull)
}

// TestDiskQueueGroupCommit: concurrent Puts share transactions.
func TestDiskQueueGroupCommit(t *testing.T) {
	q := openDisk(t, t.TempDir(), DiskQueueOptions{})
	defer q.Close()
	before := txWrites(q)
	const n = 200
	errs := make(chan error, n)
	for i := range n {
		go func() { errs <- q.Put(context.Background(), &Delivery{Key: fmt.Sprint(i), Body: []byte("{}")}) }()
	}
	for range n {
		require.NoError(t, <-errs)
	}
	commits := txWrites(q) - before
	t.Logf("%d concurrent Puts in %d commits", n, commits)
	assert.Less(t, commits, int64(n), "writes are grouped")
	assert.Equal(t, n, q.Len())
	require.NoError(t, q.db.View(func(tx *bolt.Tx) error {
		if got := tx.Bucket(bPending).Stats().KeyN; got != n {
			return errors.New("pending count differs on disk")
		}
		return nil
	}))
}

func txWrites(q *DiskQueue) int64 {
	return q.commits.Load()
}

// TestDiskQueueSweepsExpiredKeys: keys past the window leave the file.
func TestDiskQueueSweepsExpiredKeys(t *testing.T) {
	q := openDisk(t, t.TempDir(), DiskQueueOptions{DedupWindow: time.Millisecond})
	defer q.Close()
	for i := range 3 {
		put(t, q, fmt.Sprint("k", i), "")
	}
	time.Sleep(5 * time.Millisecond)
	keys := func() (n int) {
		require.NoError(t, q.db.View(func(tx *bolt.Tx) error {
			n = tx.Bucket(bKeys).Stats().KeyN + tx.Bucket(bExpiry).Stats().KeyN
			return nil
		}))
		return n
	}
	assert.Equal(t, 6, keys())
	// The writer sweeps at the next commit once it is due.
	require.NoError(t, q.write(func(*bolt.Tx) error { q.nextSweep = time.Time{}; return nil }, nil))
	assert.Zero(t, keys())
}

// A taker that leases a delivery due for a retry wakes another, so that the
// next retry time has a taker waiting for it while the first one works.
func TestScheduleRetriesDueLaterAreNotStranded(t *testing.T) {
	s := newSchedule()
	defer s.close()
	var mu sync.Mutex
	s.add(1, "a")
	s.add(2, "b")
	e1, _ := s.next(time.Now())
	e2, _ := s.next(time.Now())
	require.Equal(t, []uint64{1, 2}, []uint64{e1.id, e2.id})
	<-s.signal // the token of the adds; the two takers below must sleep without one

	// Both takers look while nothing is due: they sleep with no timer.
	looked := make(chan struct{}, 2)
	s.now = func() time.Time { looked <- struct{}{}; return time.Now() }
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := make(chan uint64, 2)
	for range 2 {
		go func() {
			id, err := s.take(ctx, mu.Lock, mu.Unlock)
			if err != nil {
				id = 0
			}
			got <- id
		}()
	}
	<-looked
	<-looked
	mu.Lock()
	s.now = time.Now
	// Two retries made before either taker ran leave one token: one taker
	// wakes, and it alone waits for the earlier time.
	for _, e := range []*entry{e1, e2} {
		e.leased, e.at = false, time.Now().Add(time.Duration(e.id*e.id)*time.Millisecond)
		heap.Push(&s.later, e)
	}
	s.wake()
	mu.Unlock()
	assert.ElementsMatch(t, []uint64{1, 2}, []uint64{<-got, <-got})
}

// An ack the file refuses leaves the delivery pending on disk; it is handed
// out again rather than held under a lease that never ends, which would
// also hold back its partition.
func TestDiskQueueFailedAckHandsOutAgain(t *testing.T) {
	q := openDisk(t, t.TempDir(), DiskQueueOptions{})
	defer q.Close()
	id := put(t, q, "k1", "issue/1")
	put(t, q, "k2", "issue/1")
	require.Equal(t, id, take(t, q).ID)
	// A bucket where the body was makes the ack's delete fail.
	require.NoError(t, q.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bBodies)
		if err := b.Delete(idKey(id)); err != nil {
			return err
		}
		_, err := b.CreateBucket(idKey(id))
		return err
	}))
	require.Error(t, q.Ack(context.Background(), id))
	d := take(t, q)
	assert.Equal(t, id, d.ID, "handed out again, ahead of the later one of its partition")
	assert.Equal(t, 2, d.Attempt)
}

// A taker woken as its context ends passes the wake on, so that another
// waiting taker gets the delivery. Which taker the wake reaches is up to the
// runtime, so the race is played many times.
func TestScheduleStoppedTakerPassesTheWakeOn(t *testing.T) {
	for range 30 {
		s := newSchedule()
		var mu sync.Mutex
		looked := make(chan struct{}, 2)
		s.now = func() time.Time { looked <- struct{}{}; return time.Now() }
		stopped, stop := context.WithCancel(context.Background())
		waiting, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		first, second := make(chan uint64, 1), make(chan uint64, 1)
		take := func(ctx context.Context, got chan<- uint64) {
			id, _ := s.take(ctx, mu.Lock, mu.Unlock)
			got <- id
		}
		go take(stopped, first)
		<-looked
		go take(waiting, second)
		<-looked
		mu.Lock()
		s.now = time.Now
		s.add(1, "")
		stop()
		mu.Unlock()
		a := <-first
		if a == 1 {
			cancel() // it took the delivery before it saw the stop
		}
		b := <-second
		cancel()
		s.close()
		require.True(t, a == 1 || b == 1, "neither taker got the delivery: the waiting one was left asleep")
	}
}
