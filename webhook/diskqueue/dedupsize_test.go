package diskqueue

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab/webhook"
)

// issueDelivery is issue i as the Handler stores it: a dedup key with the
// body's hash, and the state key.
func issueDelivery(i int) *webhook.Delivery {
	state := issueKey(100000 + i)
	return &webhook.Delivery{Key: fmt.Sprintf("%s/%016x", state, uint64(i)*0x9e3779b97f4a7c15), StateKey: state, Body: []byte("{}")}
}

// heapBytes returns the bytes of the live heap.
func heapBytes() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestDedupBytesPerKey: a remembered key takes at most 128 bytes of memory
// (100,000 keys the size of the Handler's), and at most 128 bytes of disk
// once the segments of its deliveries are gone; the keys kept on disk are
// remembered after a reopen.
func TestDedupBytesPerKey(t *testing.T) {
	if testing.Short() {
		t.Skip("stores 10,000 deliveries")
	}
	t.Run("memory", keysInMemory)
	t.Run("disk", keysOnDisk)
}

// keysInMemory measures the heap that 100,000 keys take in the queue's
// dedup.
func keysInMemory(t *testing.T) {
	q := openDisk(t, t.TempDir(), Options{})
	defer q.Close()
	before := heapBytes()
	now := time.Now().UnixNano()
	q.mu.Lock()
	for i := range 50000 {
		q.keys.rememberAll(issueDelivery(i), now)
	}
	keys := len(q.keys.m)
	q.mu.Unlock()
	grown := heapBytes() - before
	t.Logf("%d keys in memory: heap grew %d bytes, %d per key", keys, grown, grown/int64(keys))
	require.Equal(t, 100000, keys)
	assert.LessOrEqual(t, grown/int64(keys), int64(128))
	runtime.KeepAlive(q)
}

// keyFiles returns the number of key files in dir, and their bytes.
func keyFiles(t *testing.T, dir string) (n int, bytes int64) {
	files, err := filepath.Glob(filepath.Join(dir, "keys-*.seg"))
	require.NoError(t, err)
	for _, f := range files {
		fi, err := os.Stat(f)
		require.NoError(t, err)
		bytes += fi.Size()
	}
	return len(files), bytes
}

// keysOnDisk measures the bytes of the key files that keep the keys of
// 10,000 deliveries (two each) once their segments are gone, and the heap
// they took meanwhile.
func keysOnDisk(t *testing.T) {
	const n = 10000
	dir := t.TempDir()
	q := openDisk(t, dir, Options{})
	before := heapBytes()
	fill(t, q, n, issueDelivery)
	ackSome(t, q, n)
	live := heapBytes() - before
	require.NoError(t, q.Compact(), "so that every segment that held them goes")
	gone := heapBytes() - before
	t.Logf("%d keys stored and handled: heap grew %d bytes, %d per key, while their segment is kept; %d, %d per key, once it is gone (the deliveries' bookkeeping included)",
		2*n, live, live/(2*n), gone, gone/(2*n))
	require.NoError(t, q.Close())
	files, bytes := keyFiles(t, dir)
	t.Logf("%d keys on disk: %d key files of %d bytes, %d per key", 2*n, files, bytes, bytes/(2*n))
	require.NotZero(t, files)
	assert.LessOrEqual(t, bytes/(2*n), int64(128))

	q = openDisk(t, dir, Options{})
	defer q.Close()
	assert.Equal(t, 2*n, len(q.keys.m), "every key is remembered after a reopen")
	for _, i := range []int{0, n / 2, n - 1} {
		d := issueDelivery(i)
		assert.ErrorIs(t, q.Put(context.Background(), d), webhook.ErrDuplicate, "delivery %d", i)
		seen, err := q.Seen(context.Background(), d.StateKey)
		require.NoError(t, err)
		assert.True(t, seen, "state key of delivery %d", i)
	}
}

// TestSweepForgetsEveryExpiredKey: a sweep forgets every key past its
// window, however many, over sweeps made at any times, and keeps the
// others; a key remembered again for longer outlives its first window.
func TestSweepForgetsEveryExpiredKey(t *testing.T) {
	const n = 10000
	k := newDedup(time.Hour)
	key := func(i int) string { return issueKey(i) }
	base := time.Now().UnixNano()
	for i := range n {
		k.add(key(i), base+int64(i))
	}
	k.add(key(7), base+n+1) // remembered again, for longer
	for _, at := range []int{-1, 0, 1, 1500, 1501, 5000, n - 1} {
		k.sweep(base + int64(at))
		for i := range n {
			_, kept := k.m[k.hash(key(i))]
			require.Equal(t, i > at || i == 7, kept, "key %d after a sweep at %d", i, at)
		}
	}
	assert.Len(t, k.m, 1)
	k.sweep(base + n + 1)
	assert.Empty(t, k.m)
}

// TestQueueForgetsExpiredKeys: the queue sweeps as it writes: past their
// window, the keys of thousands of deliveries are all forgotten.
func TestQueueForgetsExpiredKeys(t *testing.T) {
	const window = 50 * time.Millisecond
	q := openDisk(t, t.TempDir(), Options{DedupWindow: window})
	defer q.Close()
	fill(t, q, 5000, issueDelivery)
	time.Sleep(2 * window) // every key stored is past its window
	require.NoError(t, q.Put(context.Background(), &webhook.Delivery{Key: "last"}))
	q.mu.Lock()
	left := len(q.keys.m)
	q.mu.Unlock()
	assert.LessOrEqual(t, left, 1, "only the last delivery's key may be left")
}
