package diskqueue

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/queuetest"
)

// flip changes one byte of the value stored under key in bucket, as rot
// on the disk would, leaving the file's structure intact.
func flip(t *testing.T, q *Queue, bucket, key []byte, at int) {
	t.Helper()
	require.NoError(t, q.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		v := bytes.Clone(b.Get(key))
		require.NotNil(t, v)
		v[at%len(v)] ^= 0x20
		return b.Put(key, v)
	}))
}

// TestDamagedBodyIsDeadLettered: a body changed on disk is never handed to
// a callback; it is dead-lettered with a reason naming the damage, logged
// and counted, and the later deliveries of its partition go on.
func TestDamagedBodyIsDeadLettered(t *testing.T) {
	var logs bytes.Buffer
	q := openDisk(t, t.TempDir(), Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	defer q.Close()
	id := queuetest.Put(t, q, "k1", "issue/1")
	next := queuetest.Put(t, q, "k2", "issue/1")
	flip(t, q, bBodies, idKey(id), 3)

	d := queuetest.Take(t, q)
	assert.Equal(t, next, d.ID, "the damaged one is skipped, and its partition goes on")
	dead, err := q.DeadLetters(context.Background())
	require.NoError(t, err)
	require.Len(t, dead, 1)
	assert.Equal(t, "k1", dead[0].Key)
	assert.Contains(t, dead[0].LastError, "body of delivery 1 damaged: checksum mismatch")
	assert.Contains(t, logs.String(), "damaged delivery dead-lettered")
	assert.Contains(t, logs.String(), "key=k1")
	assert.Contains(t, logs.String(), `kind="Issue Hook"`, "the kind of the record, which reads")
	assert.Contains(t, logs.String(), "attempt=0")
	assert.NotContains(t, logs.String(), `{"k"`, "no body in the log")
	st, err := q.Stats(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(1), st.Damaged)
	assert.Equal(t, 1, st.DeadLetters)

	// Requeued as it is, it is dead-lettered again, never handed out.
	require.NoError(t, q.Ack(context.Background(), next))
	require.NoError(t, q.Requeue(context.Background(), dead[0].ID))
	queuetest.NoneReady(t, q)
	assert.Zero(t, q.Len())
}

// TestDamagedRecordIsDeadLetteredAtOpen: a record changed on disk is found
// when the queue opens, and dead-lettered with what of it still reads.
func TestDamagedRecordIsDeadLetteredAtOpen(t *testing.T) {
	dir := t.TempDir()
	q := openDisk(t, dir, Options{})
	id := queuetest.Put(t, q, "k1", "issue/1")
	other := queuetest.Put(t, q, "k2", "issue/2")
	flip(t, q, bPending, idKey(id), 20)
	require.NoError(t, q.Close())

	var logs bytes.Buffer
	q = openDisk(t, dir, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	defer q.Close()
	assert.Equal(t, 1, q.Len())
	assert.Equal(t, other, queuetest.Take(t, q).ID)
	dead, err := q.DeadLetters(context.Background())
	require.NoError(t, err)
	require.Len(t, dead, 1)
	assert.Equal(t, id, dead[0].ID)
	assert.Equal(t, "record 0000000000000001 damaged: checksum mismatch", dead[0].LastError)
	assert.Equal(t, []byte(`{"k":"k1"}`), dead[0].Body, "the body is kept for inspection")
	assert.Contains(t, logs.String(), "level=ERROR")
	assert.Contains(t, logs.String(), `kind="" key="" attempt=0`, "the record does not read: the stable keys are there, empty")
	st, err := q.Stats(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(1), st.Damaged)
}

// TestDamagedDedupEntry: a dedup entry changed on disk is counted, logged
// and read as absent: a repeat is stored again (handled twice) rather than
// dropped (lost).
func TestDamagedDedupEntry(t *testing.T) {
	var logs bytes.Buffer
	q := openDisk(t, t.TempDir(), Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	defer q.Close()
	queuetest.Put(t, q, "k1", "")
	flip(t, q, bKeys, []byte("k1"), 2)
	seen, err := q.Seen(context.Background(), "k1")
	require.NoError(t, err)
	assert.False(t, seen)
	require.NoError(t, q.Put(context.Background(), &webhook.Delivery{Key: "k1", Body: []byte("{}")}), "stored again")
	assert.Contains(t, logs.String(), `damaged dedup entry ignored`)
	st, err := q.Stats(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(2), st.Damaged, "each read counts")
	seen, err = q.Seen(context.Background(), "k1")
	require.NoError(t, err)
	assert.True(t, seen, "the entry is whole again")
}

// TestLegacyRecordsStillRead: records and dedup entries written before
// checksums (plain JSON, 8-byte expiry) are read, unchecked.
func TestLegacyRecordsStillRead(t *testing.T) {
	q := openDisk(t, t.TempDir(), Options{})
	defer q.Close()
	require.NoError(t, q.write(context.Background(), func(tx *bolt.Tx) error {
		if err := tx.Bucket(bPending).Put(idKey(7), []byte(`{"id":7,"key":"old","kind":"Issue Hook","received_at":"2026-01-02T03:04:05Z","headers":null,"body":null,"attempt":0}`)); err != nil {
			return err
		}
		if err := tx.Bucket(bKeys).Put([]byte("old"), encodeKey("old", 1<<62)[:8]); err != nil {
			return err
		}
		return tx.Bucket(bBodies).Put(idKey(7), []byte(`{"legacy":true}`))
	}, func() { q.s.Add(7, "") }))
	d := queuetest.Take(t, q)
	assert.Equal(t, "old", d.Key)
	assert.Equal(t, []byte(`{"legacy":true}`), d.Body)
	assert.ErrorIs(t, q.Put(context.Background(), &webhook.Delivery{Key: "old"}), webhook.ErrDuplicate)
}

func TestDecodeRecordErrors(t *testing.T) {
	for _, v := range [][]byte{{9, 0, 0, 0, 0}, {1, 2}, {1, 0, 0, 0, 0, '{'}} {
		_, _, err := decodeRecord(idKey(1), v)
		assert.True(t, isDamage(err), "%v: %v", v, err)
	}
	js := []byte(`{"id":2}`)
	v := append([]byte{recordV1, 0, 0, 0, 0}, js...)
	sum := checksum(js)
	v[1], v[2], v[3], v[4] = byte(sum>>24), byte(sum>>16), byte(sum>>8), byte(sum)
	_, _, err := decodeRecord(idKey(1), v)
	assert.ErrorContains(t, err, "does not decode", "the id must match its key")
	_, err = decodeKey("k", []byte{1, 2, 3})
	assert.True(t, isDamage(err))
}
