package diskqueue

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
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

// logSink collects a queue's log lines; the writer logs from its own
// goroutine.
type logSink struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// logged returns Options that log to a new sink, and the sink.
func logged() (Options, *logSink) {
	l := &logSink{}
	return Options{Logger: slog.New(slog.NewTextHandler(l, nil))}, l
}

// putRecord returns where the put record of delivery id is: its segment
// file, its offset there, and the lengths of its meta and of the whole
// record.
func putRecord(t *testing.T, q *Queue, id uint64) (path string, off, metaLen, size int64) {
	t.Helper()
	q.mu.Lock()
	defer q.mu.Unlock()
	it := q.items[id]
	require.NotNil(t, it, "delivery %d", id)
	return filepath.Join(q.dir, segName(it.seg.num)), it.off, it.size - headerSize - it.bodyLen, it.size
}

// flip changes one byte of the file at path, in place, as rot on the disk
// would.
func flip(t *testing.T, path string, at int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	b := make([]byte, 1)
	_, err = f.ReadAt(b, at)
	require.NoError(t, err)
	b[0] ^= 0x20
	_, err = f.WriteAt(b, at)
	require.NoError(t, err)
}

// evict drops the copy of delivery id kept for its first Take, so that the
// Take reads it back from disk.
func evict(q *Queue, id uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.uncache(q.items[id])
}

func damaged(t *testing.T, q *Queue) int64 {
	t.Helper()
	st, err := q.Stats(context.Background())
	require.NoError(t, err)
	return st.Damaged
}

// TestDamagedBodyIsDeadLettered: a body changed on disk is never handed to
// a callback; it is dead-lettered with a reason naming the damage, logged
// and counted, and the later deliveries of its partition go on. The rot is
// found whether it happens while the queue is open or closed.
func TestDamagedBodyIsDeadLettered(t *testing.T) {
	for _, closed := range []bool{false, true} {
		t.Run(fmt.Sprint("closed=", closed), func(t *testing.T) {
			dir := t.TempDir()
			o, logs := logged()
			q := openDisk(t, dir, o)
			id := queuetest.Put(t, q, "k1", "issue/1")
			next := queuetest.Put(t, q, "k2", "issue/1")
			path, off, metaLen, _ := putRecord(t, q, id)
			if closed {
				require.NoError(t, q.Close())
				flip(t, path, off+headerSize+metaLen+3)
				q = openDisk(t, dir, o)
			} else {
				evict(q, id)
				flip(t, path, off+headerSize+metaLen+3)
			}
			defer q.Close()
			checkBodyDamage(t, q, logs, id, next)
		})
	}
}

func checkBodyDamage(t *testing.T, q *Queue, logs *logSink, id, next uint64) {
	ctx := context.Background()
	d := queuetest.Take(t, q)
	assert.Equal(t, next, d.ID, "the damaged one is skipped, and its partition goes on")
	dead, err := q.DeadLetters(ctx)
	require.NoError(t, err)
	require.Len(t, dead, 1)
	assert.Equal(t, "k1", dead[0].Key)
	assert.Contains(t, dead[0].LastError, fmt.Sprintf("body of delivery %d damaged: checksum mismatch", id))
	assert.Contains(t, logs.String(), "damaged delivery dead-lettered")
	assert.Contains(t, logs.String(), "key=k1")
	assert.Contains(t, logs.String(), `kind="Issue Hook"`, "the kind of the record, which reads")
	assert.Contains(t, logs.String(), "attempt=0")
	assert.NotContains(t, logs.String(), `{"k"`, "no body in the log")
	assert.Equal(t, int64(1), damaged(t, q))
	st, err := q.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, st.DeadLetters)

	// Requeued as it is, it is dead-lettered again, never handed out.
	require.NoError(t, q.Ack(ctx, next))
	require.NoError(t, q.Requeue(ctx, dead[0].ID))
	queuetest.NoneReady(t, q)
	assert.Zero(t, q.Len())
	dead, err = q.DeadLetters(ctx)
	require.NoError(t, err)
	require.Len(t, dead, 1)
	assert.Contains(t, dead[0].LastError, "damaged: checksum mismatch")
}

// TestDamagedRecordIsDeadLetteredAtOpen: a record whose fields changed on
// disk is found when the queue opens, and dead-lettered, for good, with its
// body kept for inspection.
func TestDamagedRecordIsDeadLetteredAtOpen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	q := openDisk(t, dir, Options{})
	id := queuetest.Put(t, q, "k1", "issue/1")
	other := queuetest.Put(t, q, "k2", "issue/2")
	path, off, metaLen, _ := putRecord(t, q, id)
	require.NoError(t, q.Close())
	flip(t, path, off+headerSize+metaLen/2)

	o, logs := logged()
	q = openDisk(t, dir, o)
	assert.Equal(t, 1, q.Len())
	require.Equal(t, other, queuetest.Take(t, q).ID)
	require.NoError(t, q.Ack(ctx, other))
	dead, err := q.DeadLetters(ctx)
	require.NoError(t, err)
	require.Len(t, dead, 1)
	assert.Equal(t, id, dead[0].ID)
	assert.Equal(t, fmt.Sprintf("record %016x damaged: checksum mismatch", id), dead[0].LastError)
	assert.Equal(t, []byte(`{"k":"k1"}`), dead[0].Body, "the body is kept for inspection")
	assert.Contains(t, logs.String(), "level=ERROR")
	assert.Contains(t, logs.String(), `kind="" key="" attempt=0`, "the record does not read: the stable keys are there, empty")
	assert.Equal(t, int64(1), damaged(t, q))
	require.NoError(t, q.Close())

	q = openDisk(t, dir, Options{})
	defer q.Close()
	dead, err = q.DeadLetters(ctx)
	require.NoError(t, err)
	require.Len(t, dead, 1, "still a dead letter after a reopen")
	assert.Equal(t, fmt.Sprintf("record %016x damaged: checksum mismatch", id), dead[0].LastError)
	assert.Zero(t, q.Len())
}

// TestDamagedDedupEntry: a dedup entry changed on disk (in the key file
// that keeps the keys of a removed segment) is counted, logged and read as
// absent: a repeat is stored again (handled twice) rather than dropped
// (lost). The entries before it still read.
func TestDamagedDedupEntry(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	q := openDisk(t, dir, Options{})
	// Past drainedRoll, the drained queue begins a new segment and removes
	// this one, keeping its keys in a key file.
	require.NoError(t, q.Put(ctx, &webhook.Delivery{Key: "k1", Body: make([]byte, drainedRoll)}))
	queuetest.Put(t, q, "k2", "")
	for range 2 {
		require.NoError(t, q.Ack(ctx, queuetest.Take(t, q).ID))
	}
	require.NoError(t, q.Close())
	require.NoFileExists(t, filepath.Join(dir, segName(1)))
	path := filepath.Join(dir, keyFileName(1))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	at := bytes.LastIndex(data, []byte("k2"))
	require.Positive(t, at, "k2 is kept in %s", path)
	flip(t, path, int64(at))

	o, logs := logged()
	q = openDisk(t, dir, o)
	defer q.Close()
	seen, err := q.Seen(ctx, "k2")
	require.NoError(t, err)
	assert.False(t, seen)
	seen, err = q.Seen(ctx, "k1")
	require.NoError(t, err)
	assert.True(t, seen, "the entry before the damaged one reads")
	assert.Contains(t, logs.String(), `damaged dedup entry ignored`)
	assert.Equal(t, int64(1), damaged(t, q))
	require.NoError(t, q.Put(ctx, &webhook.Delivery{Key: "k2", Body: []byte("{}")}), "stored again")
	seen, err = q.Seen(ctx, "k2")
	require.NoError(t, err)
	assert.True(t, seen, "the repeat is remembered")
	assert.ErrorIs(t, q.Put(ctx, &webhook.Delivery{Key: "k2"}), webhook.ErrDuplicate)
}

// TestDamagedKeyFile: a key file that is not one, or whose last entry is
// cut short, is counted and logged, and does not keep the queue from
// opening; the entries before the damage still read.
func TestDamagedKeyFile(t *testing.T) {
	dir := t.TempDir()
	until := time.Now().Add(time.Hour).UnixNano()
	entry := appendKey([]byte(keyMagic), keyRef{"whole", until})
	cut := appendKey(bytes.Clone(entry), keyRef{"cut", until})
	require.NoError(t, os.WriteFile(filepath.Join(dir, keyFileName(1)), cut[:len(cut)-3], 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, keyFileName(2)), []byte("not keys at all"), 0o600))

	o, logs := logged()
	q := openDisk(t, dir, o)
	defer q.Close()
	for key, want := range map[string]bool{"whole": true, "cut": false} {
		seen, err := q.Seen(context.Background(), key)
		require.NoError(t, err)
		assert.Equal(t, want, seen, key)
	}
	assert.Equal(t, int64(2), damaged(t, q))
	assert.Equal(t, 2, strings.Count(logs.String(), "damaged dedup entry ignored"))
}

// TestDamagedHeaderCutsTheLog: a record header changed on disk in the
// middle of a segment (a byte flipped, or zeros where a block was lost)
// ends what can be read of the segment: nothing after it is looked for, as
// a body could hold what reads as a record. The records before it come
// back, and the cut is logged with where it is and how many bytes went.
func TestDamagedHeaderCutsTheLog(t *testing.T) {
	rots := map[string]func(path string, off, size int64){
		"byte flipped":  func(path string, off, _ int64) { flip(t, path, off+8) },
		"header zeroed": func(path string, off, _ int64) { zeroFile(t, path, off, off+headerSize) },
		"record zeroed": func(path string, off, size int64) { zeroFile(t, path, off, off+size) },
	}
	for name, rot := range rots {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			q := openDisk(t, dir, Options{})
			var ids []uint64
			for i := range 3 {
				ids = append(ids, queuetest.Put(t, q, fmt.Sprint("k", i), "issue/1"))
			}
			path, off, _, size := putRecord(t, q, ids[1])
			_, end := logEnd(q)
			require.NoError(t, q.Close())
			rot(path, off, size)

			o, logs := logged()
			q = openDisk(t, dir, o)
			defer q.Close()
			require.Equal(t, 1, q.Len(), "nothing after the damage is read")
			d := queuetest.Take(t, q)
			assert.Equal(t, ids[0], d.ID)
			assert.Equal(t, `{"k":"k0"}`, string(d.Body))
			assert.Contains(t, logs.String(), "level=WARN msg=\"diskqueue: cut off the end of a segment")
			assert.Contains(t, logs.String(), fmt.Sprintf("offset=%d bytes=%d", off, end-off), "the bytes up to the zeros the segment was filled with")
		})
	}
}

// zeroFile clears the bytes of the file at path from from to to.
func zeroFile(t *testing.T, path string, from, to int64) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, zero(data, from, to), 0o600))
}

// TestTornTailIsCutOff: a record cut short at the end of the last segment,
// as a crash during a write leaves it (the rest of the record never
// written: the zeros the segment was filled with, or the end of the file
// for a record that grew it past them), is no damage: it is cut off
// silently, and the records written next follow the last whole one.
func TestTornTailIsCutOff(t *testing.T) {
	tears := map[string]struct {
		body int // of the torn record
		tear func(data []byte, off, size int64) []byte
	}{
		"in the header": {2, func(data []byte, off, size int64) []byte { return zero(data, off+headerSize/2, off+size) }},
		"in the meta":   {2, func(data []byte, off, size int64) []byte { return zero(data, off+headerSize+2, off+size) }},
		"in the body":   {2, func(data []byte, off, size int64) []byte { return zero(data, off+size-3, off+size) }},
		"whole":         {2, func(data []byte, off, size int64) []byte { return zero(data, off, off+size) }},
		"file end":      {segMax, func(data []byte, off, size int64) []byte { return data[:off+size-3] }},
	}
	for name, c := range tears {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			q := openDisk(t, dir, Options{})
			first := queuetest.Put(t, q, "k1", "")
			torn := &webhook.Delivery{Key: "k2", Body: bytes.Repeat([]byte("x"), c.body)}
			require.NoError(t, q.Put(ctx, torn))
			path, off, _, size := putRecord(t, q, torn.ID)
			require.NoError(t, q.Close())
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			require.True(t, onlyZeros(data[off+size:]), "k2 is the last record")
			require.NoError(t, os.WriteFile(path, c.tear(data, off, size), 0o600))

			o, logs := logged()
			q = openDisk(t, dir, o)
			assert.Equal(t, 1, q.Len())
			assert.Zero(t, damaged(t, q))
			data, err = os.ReadFile(path)
			require.NoError(t, err)
			assert.True(t, onlyZeros(data[off:]), "cut off after the last whole record")
			third := queuetest.Put(t, q, "k3", "")
			require.NoError(t, q.Close())

			q = openDisk(t, dir, o)
			defer q.Close()
			for _, id := range []uint64{first, third} {
				d := queuetest.Take(t, q)
				assert.Equal(t, id, d.ID)
				require.NoError(t, q.Ack(ctx, d.ID))
			}
			assert.Zero(t, damaged(t, q))
			assert.NotContains(t, logs.String(), "level=ERROR")
		})
	}
}

func onlyZeros(b []byte) bool { return bytes.Count(b, []byte{0}) == len(b) }

// zero clears data[from:to], as a write that never reached the disk.
func zero(data []byte, from, to int64) []byte {
	clear(data[from:to])
	return data
}

// TestDecodeRecordErrors: a record header or a put's fields that are cut
// short or garbage never panic; they read as damage.
func TestDecodeRecordErrors(t *testing.T) {
	d := &webhook.Delivery{Key: "k", StateKey: "s", Partition: "p", Kind: webhook.KindIssue, LastError: "e",
		ReceivedAt: time.Unix(1e9, 5), Header: http.Header{"A": {"1", "2"}}, Synthesized: true, Record: []byte("r"), Attempt: 3}
	meta := appendMeta(nil, d, 42)
	rec := appendRecord(nil, tPut, 7, meta, []byte("body"), checksum([]byte("body")))

	h, err := decodeHeader(rec)
	require.NoError(t, err)
	assert.Equal(t, header{metaLen: uint32(len(meta)), bodyLen: 4, id: 7, metaSum: checksum(meta), bodySum: checksum([]byte("body")), typ: tPut}, h)
	got, stored, err := decodeMeta(7, meta)
	require.NoError(t, err)
	d.ID = 7
	assert.Equal(t, d, got)
	assert.Equal(t, int64(42), stored)

	for n := range headerSize {
		_, err := decodeHeader(rec[:n])
		assert.ErrorIs(t, err, errTorn, "header cut to %d bytes", n)
	}
	for n := range len(meta) {
		_, _, err := decodeMeta(7, meta[:n])
		assert.True(t, isDamage(err), "meta cut to %d bytes: %v", n, err)
	}
	// Headers whose checksum holds but whose fields are out of bounds.
	for _, bad := range []struct {
		typ        byte
		meta, body uint32
	}{{0, 1, 1}, {tMark + 1, 1, 1}, {tPut, maxMeta + 1, 1}, {tPut, 1, maxBody + 1}} {
		b := binary.LittleEndian.AppendUint32(nil, bad.meta)
		b = binary.LittleEndian.AppendUint32(b, bad.body)
		b = append(b, make([]byte, 16)...)
		b = append(b, bad.typ, 0, 0, 0)
		b = binary.LittleEndian.AppendUint32(b, checksum(b))
		_, err := decodeHeader(b)
		assert.ErrorIs(t, err, errTorn, "%+v", bad)
	}
	_, _, err = decodeMeta(7, append([]byte{9}, meta[1:]...))
	assert.ErrorContains(t, err, "unknown format")
	_, _, err = decodeMeta(7, append(bytes.Clone(meta), 0))
	assert.ErrorContains(t, err, "does not decode", "trailing bytes")
	huge := binary.AppendUvarint([]byte{metaV1, 0, 0, 0, 0}, 1<<62) // a key of 2^62 bytes
	_, _, err = decodeMeta(7, huge)
	assert.True(t, isDamage(err), "%v", err)

	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		b := make([]byte, 1+r.IntN(64))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		if _, err := decodeHeader(b); err != nil {
			assert.ErrorIs(t, err, errTorn)
		}
		b[0] = metaV1 // past the format byte, garbage
		if _, _, err := decodeMeta(7, b); err != nil {
			assert.True(t, isDamage(err), "%x: %v", b, err)
		}
	}
}
