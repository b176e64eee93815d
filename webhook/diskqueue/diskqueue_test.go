package diskqueue

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

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

func TestDiskQueuePermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "q")
	require.NoError(t, os.Mkdir(dir, 0o755))
	q := openDisk(t, dir, Options{})
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
	_, err := Open(filepath.Join(file, "q"), Options{})
	assert.ErrorContains(t, err, "queue directory")

	garbage := filepath.Join(base, "garbage")
	require.NoError(t, os.Mkdir(garbage, 0o700))
	junk := []byte("this is not a queue file, but it is someone's data; keep it")
	junk = append(junk, make([]byte, 8192)...)
	require.NoError(t, os.WriteFile(filepath.Join(garbage, "queue.db"), junk, 0o600))
	_, err = Open(garbage, Options{})
	assert.ErrorContains(t, err, "damaged")
	after, rerr := os.ReadFile(filepath.Join(garbage, "queue.db"))
	require.NoError(t, rerr)
	assert.Equal(t, junk, after, "never reset")

	busy := filepath.Join(base, "busy")
	q := openDisk(t, busy, Options{})
	defer q.Close()
	_, err = Open(busy, Options{})
	assert.ErrorContains(t, err, "open in another process")

	_, err = Open(filepath.Join(base, "neg"), Options{MaxPending: -1})
	assert.Error(t, err)
}

// TestDiskQueueDamagedPages: a queue file whose data pages were overwritten
// is refused at open, with an error and no panic.
func TestDiskQueueDamagedPages(t *testing.T) {
	dir := t.TempDir()
	q := openDisk(t, dir, Options{})
	for i := range 200 {
		queuetest.Put(t, q, fmt.Sprint("key-", i), "")
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
	_, err = Open(dir, Options{})
	assert.ErrorContains(t, err, "damaged")
}

// TestDiskQueueFull: past MaxBytes, Put answers webhook.ErrQueueFull and what is
// stored stays intact.
func TestDiskQueueFull(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	q := openDisk(t, dir, Options{MaxBytes: 1 << 20})
	body := make([]byte, 16<<10)
	stored := 0
	var full error
	for i := range 200 {
		err := q.Put(ctx, &webhook.Delivery{Key: fmt.Sprint("big-", i), Body: body})
		if err != nil {
			full = err
			break
		}
		stored++
	}
	require.ErrorIs(t, full, webhook.ErrQueueFull)
	assert.Positive(t, stored)
	seen, err := q.Seen(ctx, fmt.Sprint("big-", stored))
	require.NoError(t, err)
	assert.False(t, seen, "the refused key is not recorded")
	require.NoError(t, q.Close())

	q = openDisk(t, dir, Options{MaxBytes: 1 << 20})
	defer q.Close()
	assert.Equal(t, stored, q.Len())
	for range stored {
		require.NoError(t, q.Ack(ctx, queuetest.Take(t, q).ID))
	}

	// MaxPending too.
	p := openDisk(t, t.TempDir(), Options{MaxPending: 2})
	defer p.Close()
	queuetest.Put(t, p, "a", "")
	queuetest.Put(t, p, "b", "")
	assert.ErrorIs(t, p.Put(ctx, &webhook.Delivery{Key: "c"}), webhook.ErrQueueFull)
}

// TestDiskQueueGroupCommit: concurrent Puts share transactions.
func TestDiskQueueGroupCommit(t *testing.T) {
	q := openDisk(t, t.TempDir(), Options{})
	defer q.Close()
	before := txWrites(q)
	const n = 200
	errs := make(chan error, n)
	for i := range n {
		go func() { errs <- q.Put(context.Background(), &webhook.Delivery{Key: fmt.Sprint(i), Body: []byte("{}")}) }()
	}
	for range n {
		require.NoError(t, <-errs)
	}
	commits := txWrites(q) - before
	t.Logf("%d concurrent Puts in %d commits", n, commits)
	assert.Less(t, commits, int64(n), "writes are grouped")
	assert.Equal(t, n, q.Len())
	require.NoError(t, q.view(func(tx *bolt.Tx) error {
		if got := tx.Bucket(bPending).Stats().KeyN; got != n {
			return errors.New("pending count differs on disk")
		}
		return nil
	}))
}

func txWrites(q *Queue) int64 {
	return q.commits.Load()
}

// TestDiskQueueSweepsExpiredKeys: keys past the window leave the file.
func TestDiskQueueSweepsExpiredKeys(t *testing.T) {
	q := openDisk(t, t.TempDir(), Options{DedupWindow: time.Millisecond})
	defer q.Close()
	// The first commit sweeps, finds nothing due and puts the next sweep a
	// minute away; without it, a slow first Put could see its key expire.
	require.NoError(t, q.write(context.Background(), func(*bolt.Tx) error { return nil }, nil))
	for i := range 3 {
		queuetest.Put(t, q, fmt.Sprint("k", i), "")
	}
	time.Sleep(5 * time.Millisecond)
	keys := func() (n int) {
		require.NoError(t, q.view(func(tx *bolt.Tx) error {
			n = tx.Bucket(bKeys).Stats().KeyN
			return nil
		}))
		return n
	}
	assert.Equal(t, 3, keys())
	// The writer sweeps at the next commit once it is due.
	require.NoError(t, q.write(context.Background(), func(*bolt.Tx) error { q.nextSweep = time.Time{}; return nil }, nil))
	assert.Zero(t, keys())
}

// An ack the file refuses leaves the delivery pending on disk; it is handed
// out again rather than held under a lease that never ends, which would
// also hold back its partition.
func TestDiskQueueFailedAckHandsOutAgain(t *testing.T) {
	q := openDisk(t, t.TempDir(), Options{})
	defer q.Close()
	id := queuetest.Put(t, q, "k1", "issue/1")
	queuetest.Put(t, q, "k2", "issue/1")
	require.Equal(t, id, queuetest.Take(t, q).ID)
	// A bucket where the body was makes the ack's delete fail.
	require.NoError(t, q.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bBodies)
		if err := b.Delete(idKey(id)); err != nil {
			return err
		}
		_, err := b.CreateBucket(idKey(id))
		return err
	}))
	require.Error(t, q.Ack(context.Background(), id))
	require.NoError(t, q.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bBodies)
		if err := b.DeleteBucket(idKey(id)); err != nil {
			return err
		}
		return b.Put(idKey(id), []byte(`{"k":"k1"}`))
	}))
	d := queuetest.Take(t, q)
	assert.Equal(t, id, d.ID, "handed out again, ahead of the later one of its partition")
	assert.Equal(t, 2, d.Attempt)
}
