package diskqueue

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/collabsvc/collab/webhook"
)

// TestOpenHeld: a queue open in this or another process is refused with
// ErrHeld, naming its file.
func TestOpenHeld(t *testing.T) {
	dir := t.TempDir()
	q := openDisk(t, dir, Options{})
	defer q.Close()
	for _, o := range []Options{{}, {NoCreate: true}} {
		_, err := Open(dir, o)
		require.ErrorIs(t, err, ErrHeld)
		assert.ErrorContains(t, err, filepath.Join(dir, "queue.db"))
	}
}

// TestNoCreateWithoutQueue: with NoCreate, a directory that is missing,
// empty or holds an empty file is ErrNoQueue, and nothing is created.
func TestNoCreateWithoutQueue(t *testing.T) {
	base := t.TempDir()
	missing := filepath.Join(base, "missing")
	empty := filepath.Join(base, "empty")
	require.NoError(t, os.Mkdir(empty, 0o755))
	zero := filepath.Join(base, "zero")
	require.NoError(t, os.Mkdir(zero, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(zero, "queue.db"), nil, 0o644))
	for _, dir := range []string{missing, empty, zero} {
		_, err := Open(dir, Options{NoCreate: true})
		require.ErrorIs(t, err, ErrNoQueue, dir)
		assert.ErrorContains(t, err, filepath.Join(dir, "queue.db"), "names what it looked for")
	}
	_, err := os.Stat(missing)
	assert.ErrorIs(t, err, os.ErrNotExist, "no directory made")
	entries, err := os.ReadDir(empty)
	require.NoError(t, err)
	assert.Empty(t, entries, "no file made")
	fi, err := os.Stat(empty)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), fi.Mode().Perm(), "no chmod")
	fi, err = os.Stat(filepath.Join(zero, "queue.db"))
	require.NoError(t, err)
	assert.Zero(t, fi.Size())
}

// TestNoCreateWritesNothingAtOpen: a queue with a damaged record and a
// mostly free file, which a plain Open would rewrite (dead letter,
// compaction), is opened with NoCreate and left byte for byte as it was;
// the damaged delivery is counted, never handed out, and dead-lettered by
// the Take that meets it.
func TestNoCreateWritesNothingAtOpen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	q := openDisk(t, dir, Options{DedupWindow: -1})
	body := make([]byte, 64<<10)
	for i := range 100 {
		require.NoError(t, q.Put(ctx, &webhook.Delivery{Key: string(rune('a' + i%26)), Body: body}))
	}
	for range 97 {
		require.NoError(t, q.Ack(ctx, take(t, q)))
	}
	damaged, kept := take(t, q), take(t, q)
	require.NoError(t, q.Retry(ctx, damaged, time.Time{}, "x"))
	require.NoError(t, q.Retry(ctx, kept, time.Time{}, "x"))
	flip(t, q, bPending, idKey(damaged), 20)
	require.NoError(t, q.Close())
	path := filepath.Join(dir, "queue.db")
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	q = openDisk(t, dir, Options{NoCreate: true})
	assert.Equal(t, 3, q.Len(), "the damaged one is counted until a Take meets it")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, before, after, "nothing written at open")

	got := []uint64{take(t, q), take(t, q)}
	assert.NotContains(t, got, damaged)
	dead, err := q.DeadLetters(ctx)
	require.NoError(t, err)
	require.Len(t, dead, 1)
	assert.Equal(t, damaged, dead[0].ID)
	require.NoError(t, q.Close())
}

// TestNoCreateMissingBucket: a file without the queue's buckets, which a
// plain Open would add, is an error with NoCreate, and is left as it was.
func TestNoCreateMissingBucket(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "queue.db")
	db, err := bolt.Open(path, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucket(bPending)
		return err
	}))
	require.NoError(t, db.Close())
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	_, err = Open(dir, Options{NoCreate: true})
	assert.ErrorContains(t, err, "bucket dead missing")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, before, after)

	q := openDisk(t, dir, Options{}) // a plain Open adds them
	require.NoError(t, q.Close())
	q = openDisk(t, dir, Options{NoCreate: true})
	require.NoError(t, q.Close())
}
