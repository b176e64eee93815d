package diskqueue

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// usage returns the size of the queue's file and the bytes the file system
// holds for it.
func usage(t *testing.T, dir string) (size, used int64) {
	fi, err := os.Stat(filepath.Join(dir, "queue.db"))
	require.NoError(t, err)
	return fi.Size(), fi.Sys().(*syscall.Stat_t).Blocks * 512
}

// ackSome takes and acks n deliveries from 32 goroutines.
func ackSome(t *testing.T, q *Queue, n int) {
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				d, err := q.Take(context.Background())
				if !assert.NoError(t, err) {
					return
				}
				assert.NoError(t, q.Ack(context.Background(), d.ID))
			}
		}()
	}
	wg.Wait()
}

// TestSpaceGivenBackWhileDraining: as deliveries are acked, the disk usage
// of the queue's file falls while the queue still holds deliveries and
// runs on: no compaction (the file keeps its size), no stop.
func TestSpaceGivenBackWhileDraining(t *testing.T) {
	if testing.Short() {
		t.Skip("writes megabytes")
	}
	const n = 4000
	dir := t.TempDir()
	q := openDisk(t, dir, Options{DedupWindow: -1})
	defer q.Close()
	body := readFile(t, "spec/issue.json")
	fill(t, q, dir, n, body)
	size, full := usage(t, dir)

	ackSome(t, q, 3*n/4)
	after, used := usage(t, dir)
	t.Logf("%d deliveries of %d bytes: file of %d bytes using %d; %d acked: file of %d bytes using %d", n, len(body), size, full, 3*n/4, after, used)
	require.Equal(t, n/4, q.Len())
	assert.GreaterOrEqual(t, after, size, "not compacted")
	assert.Less(t, used, full-int64(n/2*len(body)), "at least two thirds of the acked bodies' bytes came back")

	for range n / 4 {
		d, err := q.Take(context.Background())
		require.NoError(t, err)
		require.Equal(t, body, d.Body, "what is left reads whole")
		require.NoError(t, q.Ack(context.Background(), d.ID))
	}
}

// TestGiveBackBrokenQueue: a queue whose file could not be reopened after a
// compaction gives nothing back, and does not fail for it.
func TestGiveBackBrokenQueue(t *testing.T) {
	q := openDisk(t, t.TempDir(), Options{})
	require.NoError(t, q.Close())
	q.maybeGiveBack()
	assert.ErrorIs(t, q.giveBack(), errBroken)
}
