package diskqueue

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/queuetest"
)

// TestPowerCuts runs the crash harness over three workloads and checks
// every promise on every image (see checkImage): over 10,000 images, no
// failure (a tenth of them under the race detector).
func TestPowerCuts(t *testing.T) {
	workloads, perCut, least := uint64(3), 8, 10_000
	if raceOn {
		workloads, perCut, least = 1, 2, 500
	}
	total := 0
	start := time.Now()
	for seed := range workloads {
		h := newHarness(seed, noFault)
		if err := h.workload(150); err != nil {
			t.Fatalf("workload %d: %v", seed, err)
		}
		for _, kind := range []string{"log", "keys", "checkpoints"} {
			if h.fs.made[kind] == 0 || kind == "log" && h.fs.removed[kind] == 0 {
				t.Errorf("workload %d made %d %s files and removed %d", seed, h.fs.made[kind], kind, h.fs.removed[kind])
			}
		}
		n, failures := h.checkImages(perCut, seed)
		total += n
		for i, f := range failures {
			if i == 3 {
				t.Errorf("workload %d: %d failures in all", seed, len(failures))
				break
			}
			t.Errorf("workload %d: %s", seed, f)
		}
		t.Logf("workload %d: %d cuts, %d images, %d failures; %d deliveries, %d forged; files made %v, removed %v",
			seed, len(h.cuts), n, len(failures), h.keys, h.forged, h.fs.made, h.fs.removed)
	}
	if total < least {
		t.Errorf("%d images, fewer than %d", total, least)
	}
	t.Logf("%d images in %v", total, time.Since(start).Round(time.Millisecond))
}

// TestPowerCutsCatchBrokenQueues: the harness fails a queue whose syncs do
// nothing, whose directory syncs do nothing, or whose syncs each come
// before their write.
func TestPowerCutsCatchBrokenQueues(t *testing.T) {
	for _, f := range []fault{noopSync, noDirSync, syncBeforeWrite} {
		t.Run(f.String(), func(t *testing.T) {
			h := newHarness(1, f)
			if err := h.workload(60); err != nil {
				t.Fatalf("workload: %v", err)
			}
			n, failures := h.checkImages(4, 1)
			if len(failures) == 0 {
				t.Fatalf("%d images of a queue with %s, and no failure found", n, f)
			}
			t.Logf("%d of %d images fail; the first: %.300s", len(failures), n, failures[0])
		})
	}
}

// TestIDsAfterDrainedRollAndReopen: a drained queue that rolls to the
// segment made ahead of time, removes the old one, and is closed and opened
// again gives the next id, not 1 again.
func TestIDsAfterDrainedRollAndReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	q := openDisk(t, dir, Options{})
	for range 12 {
		require.NoError(t, q.Put(ctx, &webhook.Delivery{Body: make([]byte, 100<<10)}))
	}
	for range 12 {
		require.NoError(t, q.Ack(ctx, queuetest.Take(t, q).ID))
	}
	q.flush()
	require.NoFileExists(t, filepath.Join(dir, segName(1)), "the drained segment is gone")
	require.NoError(t, q.Close())

	for want := uint64(13); want < 15; want++ {
		q = openDisk(t, dir, Options{})
		d := &webhook.Delivery{Body: []byte("{}")}
		require.NoError(t, q.Put(ctx, d))
		assert.Equal(t, want, d.ID)
		require.NoError(t, q.Close())
	}
}

// groupOf puts the deliveries keyed keys so that they share one group: the
// writer is held on the group before them until all are gathered.
func groupOf(t *testing.T, q *Queue, keys ...string) []*webhook.Delivery {
	t.Helper()
	release := make(chan struct{})
	held := make(chan struct{}, 1)
	q.mu.Lock()
	q.beforeWrite = func() error {
		select {
		case held <- struct{}{}:
			<-release
		default:
		}
		return nil
	}
	q.mu.Unlock()
	go func() { _ = q.Put(context.Background(), &webhook.Delivery{Key: "before", Body: []byte("{}")}) }()
	<-held
	ds := make([]*webhook.Delivery, len(keys))
	errs := make(chan error, len(keys))
	for i, key := range keys {
		ds[i] = &webhook.Delivery{Key: key, Kind: webhook.KindIssue, Body: bytes.Repeat([]byte(key), 400)}
		go func() { errs <- q.Put(context.Background(), ds[i]) }()
	}
	require.Eventually(t, func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return len(q.cur.ops) == len(keys)
	}, 10*time.Second, time.Millisecond)
	close(release)
	for range keys {
		require.NoError(t, <-errs)
	}
	return ds
}

// TestTornRecordBeforeAWholeOne: two puts written in one group, the sync
// of which a power cut prevented, the second whole on the disk and one
// sector of the first lost. Neither Put returned: both are cut off at the
// next open, their dedup keys forgotten, and a repeat of the first is
// stored, not answered as a duplicate nor dead-lettered.
func TestTornRecordBeforeAWholeOne(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	q := openDisk(t, dir, Options{})
	ds := groupOf(t, q, "k1", "k2")
	path, off, metaLen, _ := putRecord(t, q, ds[0].ID)
	require.NoError(t, q.Close())
	zeroFile(t, path, (off+headerSize+metaLen)/sector*sector+sector, (off+headerSize+metaLen)/sector*sector+2*sector)

	o, logs := logged()
	q = openDisk(t, dir, o)
	defer q.Close()
	for _, key := range []string{"k1", "k2"} {
		seen, err := q.Seen(ctx, key)
		require.NoError(t, err)
		assert.False(t, seen, key)
	}
	assert.Equal(t, 1, q.Len(), "only the delivery before the group")
	assert.Zero(t, damaged(t, q), "a torn write is no damage")
	assert.Contains(t, logs.String(), "cut off the end of a segment")
	assert.Contains(t, logs.String(), "a record no sync covered fails its checksum")
	require.NoError(t, q.Put(ctx, &webhook.Delivery{Key: "k1", Body: ds[0].Body}), "the repeat is stored")
	dead, err := q.DeadLetters(ctx)
	require.NoError(t, err)
	assert.Empty(t, dead)
}

// TestRotBeforeAMarkIsDamage: the same sector lost in a put that a later
// group's mark vouches was synced is damage on the disk: the delivery is
// dead-lettered, the records after it read, and its key is forgotten, so
// that the sender's repeat brings the event whole.
func TestRotBeforeAMarkIsDamage(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	q := openDisk(t, dir, Options{})
	k1 := &webhook.Delivery{Key: "k1", Body: bytes.Repeat([]byte("k1"), 800)}
	require.NoError(t, q.Put(ctx, k1))
	k2 := queuetest.Put(t, q, "k2", "")
	path, off, metaLen, _ := putRecord(t, q, k1.ID)
	require.NoError(t, q.Close())
	zeroFile(t, path, (off+headerSize+metaLen)/sector*sector+sector, (off+headerSize+metaLen)/sector*sector+2*sector)

	q = openDisk(t, dir, Options{})
	defer q.Close()
	assert.Equal(t, k2, queuetest.Take(t, q).ID)
	dead, err := q.DeadLetters(ctx)
	require.NoError(t, err)
	require.Len(t, dead, 1)
	assert.Equal(t, k1.ID, dead[0].ID)
	assert.Contains(t, dead[0].LastError, "damaged")
	seen, err := q.Seen(ctx, "k1")
	require.NoError(t, err)
	assert.False(t, seen, "the key of a delivery that cannot be handed out is not remembered")
	require.NoError(t, q.Put(ctx, &webhook.Delivery{Key: "k1", Body: k1.Body}))
}

// TestTornCopyForward: a dead letter copied forward by Compact, the copy's
// write torn by a power cut (kept, dropped, with holes, torn at a sector)
// while the original is still on disk: at every step of the Compact, every
// image keeps the dead letter whole, with its reason, and finds no damage.
func TestTornCopyForward(t *testing.T) {
	ctx := context.Background()
	fs := newCrashFS(1)
	sz := harnessSizes
	sz.copyAfter = time.Hour // only Compact copies forward
	q, err := openOn(fs, harnessDir, Options{}, sz)
	require.NoError(t, err)
	body := bytes.Repeat([]byte("dead letter "), 200)
	require.NoError(t, q.Put(ctx, &webhook.Delivery{Key: "dl", Body: body}))
	d := queuetest.Take(t, q)
	require.NoError(t, q.DeadLetter(ctx, d.ID, "given up"))
	for i := range 8 { // past segMax: the log rolls
		queuetest.Put(t, q, fmt.Sprint("k", i), "")
		require.NoError(t, q.Ack(ctx, queuetest.Take(t, q).ID))
	}
	q.flush()

	var cuts []*snapshot
	fs.mu.Lock()
	fs.everyStep = true
	fs.onCut = func(s *snapshot) { cuts = append(cuts, s) }
	fs.mu.Unlock()
	require.NoError(t, q.Compact())
	fs.mu.Lock()
	fs.onCut = nil
	fs.mu.Unlock()
	require.NoError(t, q.Close())
	require.NotEmpty(t, cuts)

	rng := rand.New(rand.NewPCG(1, 2))
	torn := 0
	for i, s := range cuts {
		for files := range fileModes {
			for range 4 {
				img := s.image(cutMode{files: files, dirs: rng.IntN(3)}, rng)
				o, logs := logged()
				q, err := openOn(img, harnessDir, o, sz)
				require.NoError(t, err, "cut %d", i)
				dead, err := q.DeadLetters(ctx)
				require.NoError(t, err)
				require.Len(t, dead, 1, "cut %d", i)
				assert.Equal(t, d.ID, dead[0].ID)
				assert.Equal(t, body, dead[0].Body, "cut %d: the body whole", i)
				assert.Equal(t, "given up", dead[0].LastError)
				assert.Zero(t, damaged(t, q), "cut %d: %s", i, logs)
				assert.Equal(t, 0, q.Len(), "cut %d: still a dead letter, not pending", i)
				if strings.Contains(logs.String(), "cut off the end of a segment") {
					torn++
				}
				require.NoError(t, q.Close())
			}
		}
	}
	assert.Positive(t, torn, "some image tore the copy")
}

// TestForgedRecordsNeverHandedOut: bodies built as records of the queue's
// own format (marks vouching for more than was synced, puts and retries of
// other deliveries, each with its checksums, at every alignment), stored
// in groups while power cuts tear, drop and hole every write around them:
// no image hands out, dead-letters or remembers a delivery of theirs, and
// every other promise holds.
func TestForgedRecordsNeverHandedOut(t *testing.T) {
	h := newHarness(5, noFault)
	h.fs.everyStep = true
	require.NoError(t, h.open())
	for i := range 12 {
		var wg sync.WaitGroup
		for j := range 3 {
			h.keys++
			key := fmt.Sprint("k", h.keys)
			body := forgedBody(h.rng, fmt.Sprintf("forged-%d-%d", i, j))
			h.model.note(event{key: key, phase: phPutting, body: body})
			wg.Add(1)
			go func() {
				defer wg.Done()
				d := &webhook.Delivery{Key: key, Body: body}
				if assert.NoError(t, h.q.Put(context.Background(), d)) {
					h.model.note(event{key: key, phase: phStored, id: d.ID})
				}
			}()
		}
		wg.Wait()
		if i%4 == 3 {
			require.NoError(t, h.handle(context.Background()))
		}
	}
	require.NoError(t, h.q.Close())
	n, failures := h.checkImages(10, 5)
	assert.Empty(t, failures)
	assert.Greater(t, n, 500)

	// The forged keys, on the last image of each kind.
	for files := range fileModes {
		img := h.cuts[len(h.cuts)-1].image(cutMode{files: files}, h.rng)
		q, err := openOn(img, harnessDir, Options{}, harnessSizes)
		require.NoError(t, err)
		for i := range 12 {
			seen, err := q.Seen(context.Background(), fmt.Sprintf("forged-%d-0", i))
			require.NoError(t, err)
			assert.False(t, seen)
		}
		require.NoError(t, q.Close())
	}
}
