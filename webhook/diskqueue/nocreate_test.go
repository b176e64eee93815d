package diskqueue

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab/webhook/queuetest"
)

// TestOpenHeld: a queue open in this or another process is refused with
// ErrHeld, naming its directory, whether the one open or the one opening
// has NoCreate: a queue opened with NoCreate writes too (a Take counts its
// attempt), and two writers would write their records over each other's.
// (A lock is held per open file: the same process counts.)
func TestOpenHeld(t *testing.T) {
	t.Parallel()
	for _, held := range []Options{{}, {NoCreate: true}} {
		dir := t.TempDir()
		openDisk(t, dir, Options{}).Close() // so that NoCreate finds a queue
		q := openDisk(t, dir, held)
		for _, o := range []Options{{}, {NoCreate: true}} {
			_, err := Open(dir, o)
			require.ErrorIs(t, err, ErrHeld, "held with %+v, opened with %+v", held, o)
			assert.ErrorContains(t, err, dir)
		}
		require.NoError(t, q.Close())
	}
}

// TestNoCreateWithoutQueue: with NoCreate, a directory that is missing,
// empty or holds only a bbolt queue.db is ErrNoQueue, naming what was
// looked for, and nothing is created.
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
		assert.ErrorContains(t, err, dir, "names where it looked")
		assert.ErrorContains(t, err, "log-*.seg", "names what it looked for")
	}
	_, err := os.Stat(missing)
	assert.ErrorIs(t, err, os.ErrNotExist, "no directory made")
	entries, err := os.ReadDir(empty)
	require.NoError(t, err)
	assert.Empty(t, entries, "no file made")
	fi, err := os.Stat(empty)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), fi.Mode().Perm(), "no chmod")
	entries, err = os.ReadDir(zero)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no file made")
	fi, err = os.Stat(filepath.Join(zero, "queue.db"))
	require.NoError(t, err)
	assert.Zero(t, fi.Size())
}

// TestNoCreateWritesNothingAtOpen: a queue with a damaged record and a torn
// tail, which a plain Open would change (a dead letter written, the tail
// cut off), is opened with NoCreate and left byte for byte as it was. The
// damaged delivery is counted until the Take that meets it dead-letters
// it, never handing it out.
func TestNoCreateWritesNothingAtOpen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	q := openDisk(t, dir, Options{})
	rotten := queuetest.Put(t, q, "k1", "")
	kept := []uint64{queuetest.Put(t, q, "k2", ""), queuetest.Put(t, q, "k3", "")}
	require.Equal(t, rotten, queuetest.Take(t, q).ID)
	require.NoError(t, q.Retry(ctx, rotten, time.Time{}, "x"))
	path, off, metaLen, _ := putRecord(t, q, rotten)
	_, end := logEnd(q)
	require.NoError(t, q.Close())
	flip(t, path, off+headerSize+metaLen/2)
	tearAt(t, path, end)

	before := dirState(t, dir)
	q = openDisk(t, dir, Options{NoCreate: true})
	defer q.Close()
	assert.Equal(t, 3, q.Len(), "the damaged one is counted until a Take meets it")
	assert.Equal(t, before, dirState(t, dir), "nothing written at open")
	for _, id := range kept {
		assert.Equal(t, id, queuetest.Take(t, q).ID)
	}
	dead, err := q.DeadLetters(ctx)
	require.NoError(t, err)
	require.Len(t, dead, 1)
	assert.Equal(t, rotten, dead[0].ID)
	assert.Equal(t, fmt.Sprintf("record %016x damaged: checksum mismatch", rotten), dead[0].LastError)
	require.NoError(t, q.Close())

	q = openDisk(t, dir, Options{})
	defer q.Close()
	assert.Equal(t, 2, q.Len(), "the Take's dead letter and attempts were written")
	assert.Zero(t, damaged(t, q), "no torn bytes left between the records")
	assert.Equal(t, 2, queuetest.Take(t, q).Attempt)
}

// tearAt writes the start of a record at off in the segment at path, as a
// write cut short by a crash leaves it.
func tearAt(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	rec := appendRecord(nil, tPut, 99, []byte("meta"), []byte("body"), 0)
	_, err = f.WriteAt(rec[:headerSize/2], off)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// dirState returns the name, mode, size and digest of each file in dir.
func dirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	state := map[string]string{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		fi, err := e.Info()
		require.NoError(t, err)
		state[e.Name()] = fmt.Sprintf("%v %d %x", fi.Mode(), len(data), sha256.Sum256(data))
	}
	return state
}
