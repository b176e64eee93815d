package diskqueue

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/queuetest"
)

// segments returns the names of the log's segment files, oldest first.
func segments(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "log-*.seg"))
	require.NoError(t, err)
	for i, n := range names {
		names[i] = filepath.Base(n)
	}
	return names // Glob sorts them, and segment names sort by number
}

// dirBytes returns the bytes of the files in dir.
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var n int64
	for _, e := range entries {
		fi, err := e.Info()
		require.NoError(t, err)
		n += fi.Size()
	}
	return n
}

// fill stores the deliveries made by delivery(0), ..., delivery(n-1), from
// 32 goroutines.
func fill(t *testing.T, q *Queue, n int, delivery func(i int) *webhook.Delivery) {
	ids := make(chan int)
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ids {
				assert.NoError(t, q.Put(context.Background(), delivery(i)))
			}
		}()
	}
	for i := range n {
		ids <- i
	}
	close(ids)
	wg.Wait()
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

// bigBody is a 64 KiB body that tells delivery i apart.
func bigBody(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 64<<10) }

// fate is what becomes of a delivery taken by settle.
type fate int

const (
	acked fate = iota
	deadLettered
	retried // retried in an hour: a restart makes it ready at once
)

// settle stores n deliveries of 64 KiB, each its own partition, in one
// goroutine and so in id order, takes them all and settles each as fate
// says. It returns their ids.
func settle(t *testing.T, q *Queue, n int, fate func(i int) fate) []uint64 {
	ctx := context.Background()
	ids := make([]uint64, n)
	for i := range n {
		d := &webhook.Delivery{Key: fmt.Sprint("k", i), Partition: fmt.Sprint("p", i), Body: bigBody(i)}
		require.NoError(t, q.Put(ctx, d))
		ids[i] = d.ID
	}
	for i := range n {
		d, err := q.Take(ctx)
		require.NoError(t, err)
		require.Equal(t, ids[i], d.ID)
	}
	for i, id := range ids {
		switch fate(i) {
		case deadLettered:
			require.NoError(t, q.DeadLetter(ctx, id, fmt.Sprint("reason ", i)))
		case retried:
			require.NoError(t, q.Retry(ctx, id, time.Now().Add(time.Hour), "try later"))
		default:
			require.NoError(t, q.Ack(ctx, id))
		}
	}
	return ids
}

// checkKept checks what settle left in q, and a checkpoint: the dead
// letters with their reasons and bodies, the retried delivery, every dedup
// key.
func checkKept(t *testing.T, q *Queue, ids []uint64, fate func(i int) fate) {
	ctx := context.Background()
	dead, err := q.DeadLetters(ctx)
	require.NoError(t, err)
	var want []int
	for i := range ids {
		if fate(i) == deadLettered {
			want = append(want, i)
		}
	}
	require.Len(t, dead, len(want))
	for j, i := range want {
		assert.Equal(t, ids[i], dead[j].ID)
		assert.Equal(t, fmt.Sprint("reason ", i), dead[j].LastError)
		assert.Equal(t, 1, dead[j].Attempt)
		assert.Equal(t, fmt.Sprint("k", i), dead[j].Key)
		assert.True(t, bytes.Equal(bigBody(i), dead[j].Body), "body of dead letter %d", i)
	}
	st, err := q.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Pending, "the retried delivery")
	assert.Equal(t, len(want), st.DeadLetters)
	for i := range ids {
		seen, err := q.Seen(ctx, fmt.Sprint("k", i))
		require.NoError(t, err)
		require.True(t, seen, "dedup key of delivery %d", i)
	}
	v, err := q.Checkpoint(ctx, "c")
	require.NoError(t, err)
	assert.Equal(t, "v", string(v))
}

// checkReopened reopens the queue in dir, checks what settle left there,
// and that the retried delivery is handed out at once, its attempts and
// reason kept.
func checkReopened(t *testing.T, dir string, ids []uint64, fate func(i int) fate) {
	q := openDisk(t, dir, Options{})
	defer q.Close()
	checkKept(t, q, ids, fate)
	d, err := q.Take(context.Background())
	require.NoError(t, err)
	i := 0
	for fate(i) != retried {
		i++
	}
	assert.Equal(t, ids[i], d.ID)
	assert.Equal(t, 2, d.Attempt, "one attempt before, one now")
	assert.Equal(t, "try later", d.LastError)
	assert.True(t, bytes.Equal(bigBody(i), d.Body))
	assert.ErrorIs(t, q.Put(context.Background(), &webhook.Delivery{Key: "k0"}), webhook.ErrDuplicate)
}

// TestCompact: dead letters and a retried delivery that make more than a
// quarter of the oldest segment keep it, and the handled segments after it
// (segments go oldest first). Compact copies them forward and removes every
// old segment; the directory then holds about what is live, and everything
// is intact, before and after a reopen. A closed queue cannot be compacted.
func TestCompact(t *testing.T) {
	if testing.Short() {
		t.Skip("writes megabytes")
	}
	const n = 300 // 64 KiB each: three segments
	// A third of the first 120 dead-lettered: 2.6 MB of an 8 MiB segment.
	fate := func(i int) fate {
		switch {
		case i == 1:
			return retried
		case i < 120 && i%3 == 0:
			return deadLettered
		}
		return acked
	}
	dir := t.TempDir()
	q := openDisk(t, dir, Options{})
	ids := settle(t, q, n, fate)
	require.NoError(t, q.SetCheckpoint(context.Background(), "c", []byte("v")))
	before, segs := dirBytes(t, dir), segments(t, dir)
	require.GreaterOrEqual(t, len(segs), 3, "the test fills several segments")
	assert.Equal(t, segName(1), segs[0], "kept by its dead letters and retried delivery")
	q.mu.Lock()
	oldHead := segName(q.head().num)
	q.mu.Unlock()

	require.NoError(t, q.Compact())
	after := segments(t, dir)
	_, written := logEnd(q)
	live := int64(41 * (64<<10 + 1024)) // the bodies, and at most 1 KiB of records each
	t.Logf("segments %v, %d bytes; compacted: segments %v, %d bytes, %d written in the head; live about %d bytes",
		segs, before, after, dirBytes(t, dir), written, live)
	require.NotEmpty(t, after)
	assert.LessOrEqual(t, len(after), 2, "the segment written to, and the one made ahead")
	assert.Greater(t, after[0], oldHead, "every old segment went; a new one holds the live deliveries")
	assert.Less(t, written, live, "the log holds about what is live")
	assert.Less(t, dirBytes(t, dir), before)
	checkKept(t, q, ids, fate)
	require.NoError(t, q.Close())
	assert.ErrorIs(t, q.Compact(), webhook.ErrQueueClosed, "a closed queue")

	checkReopened(t, dir, ids, fate)
}

// TestFewLeftCopiedForward: a few dead letters and a retried delivery in a
// mostly handled segment are copied forward by the queue itself, without
// Compact, so that the segment goes; everything is intact after a reopen.
func TestFewLeftCopiedForward(t *testing.T) {
	if testing.Short() {
		t.Skip("writes megabytes")
	}
	const n = 300
	fate := func(i int) fate {
		switch i {
		case 1:
			return retried
		case 0, 5, 130:
			return deadLettered
		}
		return acked
	}
	dir := t.TempDir()
	q := openDisk(t, dir, Options{})
	ids := settle(t, q, n, fate)
	require.NoError(t, q.SetCheckpoint(context.Background(), "c", []byte("v")))
	// The few left are copied once they have stood still for copyAfter.
	require.Eventually(t, func() bool {
		segs := segments(t, dir)
		return len(segs) > 0 && segs[0] != segName(1) && segs[0] != segName(2)
	}, 10*copyAfter, 10*time.Millisecond)
	segs := segments(t, dir)
	t.Logf("segments %v, %d bytes", segs, dirBytes(t, dir))
	require.NotEmpty(t, segs)
	assert.NotEqual(t, segName(1), segs[0], "the first segment went")
	assert.NotEqual(t, segName(2), segs[0], "the second segment went")
	assert.LessOrEqual(t, len(segs), 2, "the segment written to, and the one made ahead")
	assert.Less(t, dirBytes(t, dir), int64(2*segMax+64<<10), "and a few key files")
	checkKept(t, q, ids, fate)
	require.NoError(t, q.Close())

	checkReopened(t, dir, ids, fate)
}

// leasedInOldSegment stores two deliveries with keys leased and kept, has
// the queue begin a new segment, and takes the first. It returns their ids
// and the older segment, which holds them.
func leasedInOldSegment(t *testing.T, q *Queue, leased, kept string) (uint64, uint64, *segment) {
	t.Helper()
	a := queuetest.Put(t, q, leased, "")
	b := queuetest.Put(t, q, kept, "")
	_, err := q.roll() // the writer is idle: the two are in an older segment now
	require.NoError(t, err)
	q.mu.Lock()
	old := q.segs[0]
	q.mu.Unlock()
	require.Equal(t, a, queuetest.Take(t, q).ID)
	return a, b, old
}

// TestCopyNeverPassesAnOutcome: a delivery whose dead-lettering is being
// written is not copied forward; a copy written after it would bring the
// delivery back, pending, at the next open. The other delivery of the
// segment is copied, and comes back.
func TestCopyNeverPassesAnOutcome(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	q := openDisk(t, dir, Options{})
	dead, kept, old := leasedInOldSegment(t, q, "dead", "kept")

	stalled, release := make(chan struct{}), make(chan struct{})
	q.mu.Lock() // writes read beforeWrite under q.mu
	q.beforeWrite = func() error {
		close(stalled)
		<-release
		return nil
	}
	q.mu.Unlock()
	outcome := make(chan error, 1)
	go func() { outcome <- q.DeadLetter(ctx, dead, "bad") }()
	<-stalled // the dead-lettering is being written
	q.mu.Lock()
	q.beforeWrite = nil
	q.mu.Unlock()
	q.copyForward(old)
	close(release)
	require.NoError(t, <-outcome)
	require.NoError(t, q.Close()) // writes the copy

	q = openDisk(t, dir, Options{})
	defer q.Close()
	assert.Equal(t, 1, q.Len(), "the dead letter stays dead")
	d := queuetest.Take(t, q)
	assert.Equal(t, kept, d.ID)
	assert.Equal(t, "kept", d.Key)
}

// TestAckOfAMovingDelivery: a delivery acked while its copy forward waits
// to be written stays handled at the next open: the ack lands after the
// copy.
func TestAckOfAMovingDelivery(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	q := openDisk(t, dir, Options{})
	acked, kept, old := leasedInOldSegment(t, q, "acked", "kept")

	release := stallWriter(t, q) // the copies wait in the group being gathered
	q.copyForward(old)
	q.mu.Lock()
	copies := len(q.cur.ops)
	q.mu.Unlock()
	ackDone := make(chan error, 1)
	go func() { ackDone <- q.Ack(ctx, acked) }()
	require.Eventually(t, func() bool { // the ack is recorded, to be written
		q.mu.Lock()
		defer q.mu.Unlock()
		return len(q.cur.ops) > copies || len(q.acksKept) > 0
	}, time.Minute, time.Millisecond)
	release()
	require.NoError(t, <-ackDone)
	require.NoError(t, q.Close())

	q = openDisk(t, dir, Options{})
	defer q.Close()
	assert.Equal(t, 2, q.Len(), "the one stored by the stall, and the kept one")
	var ids []uint64
	for range 2 {
		ids = append(ids, queuetest.Take(t, q).ID)
	}
	assert.Contains(t, ids, kept)
	assert.NotContains(t, ids, acked, "the acked one is gone for good")
}
