//go:build unix

package diskqueue

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/queuetest"
)

// usage returns the bytes of the files in dir, and the bytes the file
// system holds for them.
func usage(t *testing.T, dir string) (size, used int64) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		fi, err := e.Info()
		require.NoError(t, err)
		size += fi.Size()
		used += fi.Sys().(*syscall.Stat_t).Blocks * 512
	}
	return size, used
}

// appendedSince returns the record bytes appended to the log since it
// ended in segment num at size.
func appendedSince(q *Queue, num uint64, size int64) int64 {
	q.wmu.Lock() // the writer and the records written at once change sizes under it
	defer q.wmu.Unlock()
	n := segHeaderSize - size
	for _, s := range q.segs {
		if s.num >= num {
			n += s.size - segHeaderSize
		}
	}
	return n
}

// TestSpaceGivenBackWhileDraining: as deliveries are acked, the segments
// that held them are removed, oldest first, and the directory's size and
// disk usage fall by the acked bodies' bytes, less two segments (the
// oldest, partly handled, and the one made ahead), while the queue still
// holds deliveries and runs on: no Compact, no stop. Once drained, the
// queue keeps none of the segments that held them.
func TestSpaceGivenBackWhileDraining(t *testing.T) {
	if testing.Short() {
		t.Skip("writes megabytes")
	}
	const n = 2600
	body := bytes.Repeat(readFile(t, "spec/issue.json"), 10) // 15 KiB: five segments in all
	dir := t.TempDir()
	q := openDisk(t, dir, Options{DedupWindow: -1})
	defer q.Close()
	fill(t, q, n, func(i int) *webhook.Delivery { return &webhook.Delivery{Key: fmt.Sprint("k", i), Body: body} })
	full := segments(t, dir)
	size, used := usage(t, dir)
	require.GreaterOrEqual(t, len(full), 4, "the test fills several segments")
	endNum, endSize := logEnd(q)

	ackSome(t, q, 3*n/4)
	q.flush() // what the writer does within lazySync
	left := segments(t, dir)
	headLeft, _ := logEnd(q)
	sizeAfter, usedAfter := usage(t, dir)
	copied := appendedSince(q, endNum, endSize) - 3*n/4*(2*headerSize+1) // but the leases and acks
	t.Logf("%d deliveries of %d bytes: %d segments, %d bytes using %d; %d acked: %d segments, %d bytes using %d; %d bytes copied forward meanwhile",
		n, len(body), len(full), size, used, 3*n/4, len(left), sizeAfter, usedAfter, copied)
	require.Equal(t, n/4, q.Len())
	// Segments go whole, and are filled with zeros when made: the bytes that
	// come back are those of the acked bodies, less a partly handled
	// segment and the one made ahead.
	given := int64(3*n/4*len(body)) - 2*segMax
	assert.LessOrEqual(t, sizeAfter, size-given, "the directory's size fell by the acked bodies' bytes, less two segments")
	assert.LessOrEqual(t, usedAfter, used-given, "its disk usage too")
	require.NotEmpty(t, left)
	for _, s := range full {
		assert.Equal(t, s >= left[0], slices.Contains(left, s), "%s: segments go oldest first", s)
	}

	for range n / 4 {
		d, err := q.Take(context.Background())
		require.NoError(t, err)
		require.Equal(t, body, d.Body, "what is left reads whole")
		require.NoError(t, q.Ack(context.Background(), d.ID))
	}
	q.flush() // what the writer does within lazySync
	drained := segments(t, dir)
	sizeDrained, usedDrained := usage(t, dir)
	t.Logf("drained: segments %v, %d bytes using %d", drained, sizeDrained, usedDrained)
	assert.LessOrEqual(t, len(drained), 2, "the segment written to, and the one made ahead")
	assert.GreaterOrEqual(t, drained[0], segName(headLeft), "the segments before the one written to are gone")
}

// TestDrainedQueueBeginsNewSegment: when the last delivery handled is in an
// older segment than the one written to, and that segment is past
// drainedRoll, the drained queue still begins a new segment, so that no
// handled delivery is left on disk.
func TestDrainedQueueBeginsNewSegment(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	q := openDisk(t, dir, Options{DedupWindow: -1})
	defer q.Close()
	big := make([]byte, segMax*3/4) // one per segment
	var ids []uint64
	for _, key := range []string{"a", "b"} {
		d := &webhook.Delivery{Key: key, Body: big}
		require.NoError(t, q.Put(ctx, d))
		ids = append(ids, d.ID)
	}
	held := segments(t, dir)
	for range ids {
		_, err := q.Take(ctx)
		require.NoError(t, err)
	}
	require.NoError(t, q.Ack(ctx, ids[1]))
	require.NoError(t, q.Ack(ctx, ids[0]))
	q.flush() // what the writer does within lazySync
	head, size := logEnd(q)
	t.Logf("segments %v while stored; drained: %v, the one written to %s with %d bytes written", held, segments(t, dir), segName(head), size)
	assert.LessOrEqual(t, size, int64(drainedRoll), "the segment written to holds no handled body")
	assert.Greater(t, segName(head), held[1], "a new segment begun")
}

// TestNewSegmentRightAfterOpen: a write that begins a new segment right
// after the queue is opened, while the segment after the last one is being
// made ahead of time, is stored like any other. Ten opens, so that the
// two meet.
func TestNewSegmentRightAfterOpen(t *testing.T) {
	if testing.Short() {
		t.Skip("writes megabytes")
	}
	ctx := context.Background()
	body := bytes.Repeat([]byte("b"), 256<<10)
	for round := range 10 {
		dir := t.TempDir()
		q := openDisk(t, dir, Options{DedupWindow: -1})
		require.NoError(t, q.Put(ctx, &webhook.Delivery{Key: "big", Body: make([]byte, segMax-64<<10)}))
		require.NoError(t, q.Close())

		q = openDisk(t, dir, Options{DedupWindow: -1})
		err := q.Put(ctx, &webhook.Delivery{Key: "next", Body: body}) // past segMax: a new segment
		require.NoError(t, q.Close())
		require.NoError(t, err, "round %d", round)

		q = openDisk(t, dir, Options{DedupWindow: -1})
		require.Equal(t, 2, q.Len(), "round %d", round)
		queuetest.Take(t, q)
		d := queuetest.Take(t, q)
		assert.Equal(t, body, d.Body)
		require.NoError(t, q.Close())
	}
}

// TestFullHeadRollsWithoutPuts: records written at once (attempts and
// outcomes, as a long drain writes) fill the segment written to; the writer
// begins a new one, as a group of deliveries would, rather than growing it
// past its size.
func TestFullHeadRollsWithoutPuts(t *testing.T) {
	ctx := context.Background()
	q := openDisk(t, t.TempDir(), Options{})
	defer q.Close()
	id := queuetest.Put(t, q, "k", "")
	first, _ := logEnd(q)
	reason := strings.Repeat("x", 1<<20)
	for range segMax / len(reason) {
		require.Equal(t, id, queuetest.Take(t, q).ID)
		require.NoError(t, q.Retry(ctx, id, time.Now(), reason))
	}
	q.flush() // what the writer does within lazySync
	head, _ := logEnd(q)
	assert.Greater(t, head, first, "a new segment begun")
	q.mu.Lock()
	oldest := q.segs[0]
	q.mu.Unlock()
	old := q.written(oldest)
	assert.Less(t, old, int64(segMax+len(reason)+headerSize+segHeaderSize), "the full one grew by one record at most past its size")
}
