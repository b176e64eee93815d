package diskqueue

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
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
			d.sched.SetClock(now)
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

// TestDiskQueuePermissions: bodies can hold private data; the directory and
// every file in it are its owner's only, also for a directory that existed.
func TestDiskQueuePermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "q")
	require.NoError(t, os.Mkdir(dir, 0o755))
	q := openDisk(t, dir, Options{})
	defer q.Close()
	queuetest.Put(t, q, "k", "")
	require.NoError(t, q.SetCheckpoint(context.Background(), "c", []byte("v")))
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	for _, name := range []string{segName(1), checkpointFile} {
		fi, err = os.Stat(filepath.Join(dir, name))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), name)
	}
}

func TestDiskQueueOpenErrors(t *testing.T) {
	base := t.TempDir()

	file := filepath.Join(base, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err := Open(filepath.Join(file, "q"), Options{})
	assert.ErrorContains(t, err, "queue directory")

	junk := []byte("this is not a queue file, but it is someone's data; keep it")
	junk = append(junk, make([]byte, 8192)...)
	for name, data := range map[string][]byte{"junk": junk, "short": []byte("collab")} {
		dir := filepath.Join(base, name)
		require.NoError(t, os.Mkdir(dir, 0o700))
		path := filepath.Join(dir, segName(1))
		require.NoError(t, os.WriteFile(path, data, 0o600))
		_, err = Open(dir, Options{})
		assert.ErrorContains(t, err, "damaged", name)
		assert.ErrorContains(t, err, path, name)
		after, rerr := os.ReadFile(path)
		require.NoError(t, rerr)
		assert.Equal(t, data, after, "never reset")
	}

	busy := filepath.Join(base, "busy")
	q := openDisk(t, busy, Options{})
	defer q.Close()
	_, err = Open(busy, Options{})
	assert.ErrorContains(t, err, "open in another process")

	_, err = Open(filepath.Join(base, "neg"), Options{MaxPending: -1})
	assert.Error(t, err)
	_, err = Open(filepath.Join(base, "neg"), Options{MaxBytes: -1})
	assert.Error(t, err)
}

// TestDiskQueueScrambledSegment: a segment whose second half was
// overwritten opens, without a panic; the records before the damage come
// back, and the cut is logged.
func TestDiskQueueScrambledSegment(t *testing.T) {
	dir := t.TempDir()
	q := openDisk(t, dir, Options{})
	var ids []uint64
	for i := range 200 {
		ids = append(ids, queuetest.Put(t, q, fmt.Sprint("key-", i), ""))
	}
	_, end := logEnd(q)
	intact := 0 // the records wholly before the middle
	for _, id := range ids {
		if _, off, _, size := putRecord(t, q, id); off+size > end/2 {
			break
		}
		intact++
	}
	require.NoError(t, q.Close())
	path := filepath.Join(dir, segName(1))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	for i := end / 2; i < end; i++ {
		data[i] ^= 0x5a
	}
	require.NoError(t, os.WriteFile(path, data, 0o600))

	o, logs := logged()
	q = openDisk(t, dir, o)
	defer q.Close()
	require.GreaterOrEqual(t, q.Len(), intact)
	for i := range intact {
		d := queuetest.Take(t, q)
		assert.Equal(t, ids[i], d.ID)
		assert.Equal(t, fmt.Sprintf(`{"k":"key-%d"}`, i), string(d.Body))
	}
	assert.Contains(t, logs.String(), "cut off the end of a segment", "%d deliveries stored are lost: that is logged", len(ids)-intact)
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
	assert.Equal(t, 1<<20/len(body), stored)
	seen, err := q.Seen(ctx, fmt.Sprint("big-", stored))
	require.NoError(t, err)
	assert.False(t, seen, "the refused key is not recorded")
	require.NoError(t, q.Close())

	q = openDisk(t, dir, Options{MaxBytes: 1 << 20})
	defer q.Close()
	assert.Equal(t, stored, q.Len())
	assert.ErrorIs(t, q.Put(ctx, &webhook.Delivery{Key: "one-more", Body: body}), webhook.ErrQueueFull, "the bound holds after a reopen")
	for range stored {
		d := queuetest.Take(t, q)
		assert.Equal(t, body, d.Body)
		require.NoError(t, q.Ack(ctx, d.ID))
	}

	// MaxPending too.
	p := openDisk(t, t.TempDir(), Options{MaxPending: 2})
	defer p.Close()
	queuetest.Put(t, p, "a", "")
	queuetest.Put(t, p, "b", "")
	assert.ErrorIs(t, p.Put(ctx, &webhook.Delivery{Key: "c"}), webhook.ErrQueueFull)
}

// TestDiskQueueGroupCommit: concurrent Puts share syncs, and each is on
// disk when its Put returns.
func TestDiskQueueGroupCommit(t *testing.T) {
	dir := t.TempDir()
	q := openDisk(t, dir, Options{})
	before := q.syncs.Load()
	const n = 200
	errs := make(chan error, n)
	for i := range n {
		go func() { errs <- q.Put(context.Background(), &webhook.Delivery{Key: fmt.Sprint(i), Body: []byte("{}")}) }()
	}
	for range n {
		require.NoError(t, <-errs)
	}
	syncs := q.syncs.Load() - before
	t.Logf("%d concurrent Puts in %d syncs", n, syncs)
	assert.Less(t, syncs, int64(n), "writes are grouped")
	assert.Equal(t, n, q.Len())
	require.NoError(t, q.Close())

	q = openDisk(t, dir, Options{})
	defer q.Close()
	assert.Equal(t, n, q.Len(), "all on disk")
}

// TestDiskQueueSweepsExpiredKeys: keys past the window are forgotten at the
// next write, so that memory does not grow with the keys ever seen.
func TestDiskQueueSweepsExpiredKeys(t *testing.T) {
	q := openDisk(t, t.TempDir(), Options{})
	defer q.Close()
	for i := range 3 {
		queuetest.Put(t, q, fmt.Sprint("k", i), "")
	}
	q.mu.Lock()
	require.Len(t, q.keys.m, 3)
	past := time.Now().Add(-time.Second).UnixNano() // as if the window had passed
	for h := range q.keys.m {
		q.keys.m[h] = past
	}
	for i := range q.keys.order {
		q.keys.order[i].until = past
	}
	q.mu.Unlock()

	queuetest.Put(t, q, "next", "")
	q.mu.Lock()
	defer q.mu.Unlock()
	assert.Len(t, q.keys.m, 1, "only the key within its window is left")
	assert.True(t, q.keys.seen("next", time.Now().UnixNano()))
}

// An outcome whose write fails leaves the delivery pending on disk; it is
// handed out again rather than held under a lease that never ends, which
// would also hold back its partition.
func TestDiskQueueFailedOutcomeHandsOutAgain(t *testing.T) {
	ctx := context.Background()
	q := openDisk(t, t.TempDir(), Options{})
	defer q.Close()
	id := queuetest.Put(t, q, "k1", "issue/1")
	next := queuetest.Put(t, q, "k2", "issue/1")
	require.Equal(t, id, queuetest.Take(t, q).ID)
	var fail atomic.Bool
	fail.Store(true)
	q.mu.Lock() // writes read beforeWrite under q.mu
	q.beforeWrite = func() error {
		if fail.CompareAndSwap(true, false) {
			return errors.New("disk says no")
		}
		return nil
	}
	q.mu.Unlock()
	require.ErrorContains(t, q.DeadLetter(ctx, id, "bad"), "disk says no")
	d := queuetest.Take(t, q)
	assert.Equal(t, id, d.ID, "handed out again, ahead of the later one of its partition")
	assert.Equal(t, 2, d.Attempt)
	require.NoError(t, q.Ack(ctx, id), "the log takes writes again")
	assert.Equal(t, next, queuetest.Take(t, q).ID)
}

// TestAckWrittenLater: an ack is kept for the next write, or the writer's
// sync within lazySync, or Close; either way it is on disk at the next
// open.
func TestAckWrittenLater(t *testing.T) {
	ctx := context.Background()
	for _, how := range []string{"next write", "lazy sync", "close"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			q := openDisk(t, dir, Options{})
			acked := queuetest.Put(t, q, "acked", "")
			kept := queuetest.Put(t, q, "kept", "")
			require.Equal(t, acked, queuetest.Take(t, q).ID)
			require.NoError(t, q.Ack(ctx, acked))
			q.mu.Lock()
			assert.NotEmpty(t, q.acksKept, "kept for the next write")
			q.mu.Unlock()
			switch how {
			case "next write":
				require.Equal(t, kept, queuetest.Take(t, q).ID) // its lease is written at once
			case "lazy sync":
				require.Eventually(t, func() bool {
					q.mu.Lock()
					defer q.mu.Unlock()
					return len(q.acksKept) == 0 && !q.unsynced
				}, time.Minute, time.Millisecond)
			}
			q.mu.Lock()
			assert.Equal(t, how == "close", len(q.acksKept) > 0)
			q.mu.Unlock()
			require.NoError(t, q.Close())
			q = openDisk(t, dir, Options{})
			defer q.Close()
			assert.Equal(t, 1, q.Len())
			assert.Equal(t, kept, queuetest.Take(t, q).ID)
		})
	}
}
