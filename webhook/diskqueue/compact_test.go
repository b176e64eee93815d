package diskqueue

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab/webhook"
)

var drained = flag.Int("drained", 3000, "deliveries stored and drained by TestSpaceComesBack")

func fileSize(t *testing.T, dir string) int64 {
	fi, err := os.Stat(filepath.Join(dir, "queue.db"))
	require.NoError(t, err)
	return fi.Size()
}

// fill stores n deliveries of body from 32 goroutines, taking and acking
// them as they come, and returns the file's largest size meanwhile.
func fill(t *testing.T, q *Queue, dir string, n int, body []byte) int64 {
	ids := make(chan int)
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ids {
				assert.NoError(t, q.Put(context.Background(), &webhook.Delivery{Key: fmt.Sprint("k", i), Body: body}))
			}
		}()
	}
	peak := int64(0)
	for i := range n {
		ids <- i
		if i%1000 == 999 {
			peak = max(peak, fileSize(t, dir))
		}
	}
	close(ids)
	wg.Wait()
	return max(peak, fileSize(t, dir))
}

// TestSpaceComesBack: once the deliveries are drained, the queue gives the
// file's space back by itself; Compact does it on demand. Run with
// -drained=100000 for the measure the README quotes.
func TestSpaceComesBack(t *testing.T) {
	if testing.Short() {
		t.Skip("writes megabytes")
	}
	dir := t.TempDir()
	q := openDisk(t, dir, Options{DedupWindow: -1})
	defer q.Close()
	body := readFile(t, "spec/issue.json")
	peak := fill(t, q, dir, *drained, body)
	drain(t, q)
	// The writer compacts after the commit that drained the queue.
	require.NoError(t, q.SetCheckpoint(context.Background(), "c", []byte("v")))
	after := fileSize(t, dir)
	t.Logf("%d deliveries of %d bytes: file at most %d bytes while stored, %d bytes once drained", *drained, len(body), peak, after)
	assert.Less(t, after, int64(compactMin), "compacted once drained")
	assert.Greater(t, peak, int64(compactMin), "the test stored enough to need it")

	require.NoError(t, q.Compact(), "on demand")
	v, err := q.Checkpoint(context.Background(), "c")
	require.NoError(t, err)
	assert.Equal(t, "v", string(v), "the content survives")
	queueAgain := openDisk(t, t.TempDir(), Options{})
	require.NoError(t, queueAgain.Close())
	assert.ErrorIs(t, queueAgain.Compact(), errBroken, "a closed queue")
}

// drain acks every delivery from 32 goroutines.
func drain(t *testing.T, q *Queue) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				d, err := q.Take(ctx)
				if err != nil {
					return
				}
				assert.NoError(t, q.Ack(ctx, d.ID))
			}
		}()
	}
	require.NoError(t, q.WaitIdle(context.Background()))
	cancel()
	wg.Wait()
}

func take(t *testing.T, q *Queue) uint64 {
	d, err := q.Take(context.Background())
	require.NoError(t, err)
	return d.ID
}

// TestCompactOnOpen: a file mostly free is compacted when opened, and keeps
// what it holds.
func TestCompactOnOpen(t *testing.T) {
	if testing.Short() {
		t.Skip("writes megabytes")
	}
	dir := t.TempDir()
	q := openDisk(t, dir, Options{DedupWindow: -1})
	body := make([]byte, 64<<10)
	for i := range 200 {
		require.NoError(t, q.Put(context.Background(), &webhook.Delivery{Key: fmt.Sprint(i), Partition: "p", Body: body}))
	}
	for range 199 {
		require.NoError(t, q.Ack(context.Background(), take(t, q)))
	}
	before := fileSize(t, dir)
	require.NoError(t, q.Close())
	q = openDisk(t, dir, Options{})
	defer q.Close()
	after := fileSize(t, dir)
	t.Logf("open: %d bytes before, %d after", before, after)
	assert.Less(t, after, before/4)
	assert.Equal(t, 1, q.Len())
	d, err := q.Take(context.Background())
	require.NoError(t, err)
	assert.Equal(t, body, d.Body)
	assert.Equal(t, "199", d.Key)
}
