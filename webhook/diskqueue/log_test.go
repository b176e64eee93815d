package diskqueue

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/collabsvc/collab/webhook"
)

// logged stores n deliveries while the writer is held, so that they are in
// the put log only, and returns a copy of the queue's directory taken then:
// what a crash would leave.
func logged(t *testing.T, n int) (crashed string) {
	t.Helper()
	dir := t.TempDir()
	q := openDisk(t, dir, Options{})
	defer q.Close()
	hold, held := make(chan struct{}), make(chan struct{})
	go func() {
		_ = q.write(context.Background(), func(*bolt.Tx) error { close(held); <-hold; return nil }, nil)
	}()
	<-held
	defer close(hold)
	for i := range n {
		d := &webhook.Delivery{Key: fmt.Sprint("k", i), Partition: "p", Body: fmt.Appendf(nil, `{"n":%d}`, i)}
		require.NoError(t, q.Put(context.Background(), d))
	}
	crashed = t.TempDir()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(crashed, e.Name()), b, 0o600))
	}
	return crashed
}

func logNames(t *testing.T, dir string) []string {
	names, err := filepath.Glob(filepath.Join(dir, "put-*.log"))
	require.NoError(t, err)
	return names
}

// TestLogReplay: deliveries answered but not yet moved into queue.db at a
// crash are moved in at the next open, in order, with their bodies and
// their dedup keys; the log files then go. A torn frame at the end of a log
// file, as a crash during a write leaves, is logged and skipped.
func TestLogReplay(t *testing.T) {
	const n = 50
	dir := logged(t, n)
	names := logNames(t, dir)
	require.NotEmpty(t, names)
	f, err := os.OpenFile(names[len(names)-1], os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.Write([]byte{0, 0, 1, 0, 9, 9}) // the start of a frame
	require.NoError(t, err)
	require.NoError(t, f.Close())

	var logs bytes.Buffer
	q := openDisk(t, dir, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	defer q.Close()
	assert.Contains(t, logs.String(), "the put log ends in a damaged or torn frame")
	assert.Empty(t, logNames(t, dir), "moved in, the log files go")
	require.Equal(t, n, q.Len())
	for i := range n {
		d, err := q.Take(context.Background())
		require.NoError(t, err)
		require.Equal(t, fmt.Sprint("k", i), d.Key, "in order")
		require.Equal(t, fmt.Appendf(nil, `{"n":%d}`, i), d.Body)
		require.NoError(t, q.Ack(context.Background(), d.ID))
	}
	assert.ErrorIs(t, q.Put(context.Background(), &webhook.Delivery{Key: "k0"}), webhook.ErrDuplicate)
	d := &webhook.Delivery{Key: "new"}
	require.NoError(t, q.Put(context.Background(), d))
	assert.Greater(t, d.ID, uint64(n), "ids keep growing")
}

// TestLogReplayNoCreate: with NoCreate the logged deliveries are counted
// and handed out, and no file changes at open.
func TestLogReplayNoCreate(t *testing.T) {
	dir := logged(t, 5)
	before := snapshot(t, dir)
	q := openDisk(t, dir, Options{NoCreate: true})
	defer q.Close()
	assert.Equal(t, 5, q.Len())
	assert.Equal(t, before, snapshot(t, dir), "nothing written at open")
	seen, err := q.Seen(context.Background(), "k3")
	require.NoError(t, err)
	assert.True(t, seen)
	d, err := q.Take(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "k0", d.Key)
}

// snapshot reads every file of dir.
func snapshot(t *testing.T, dir string) map[string][]byte {
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	files := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		files[e.Name()] = b
	}
	return files
}

// TestRepeatWaitsForTheLog: a repeat of a delivery whose log write is under
// way is not answered as a duplicate before that write ends: it would be
// lost if the write failed.
func TestRepeatWaitsForTheLog(t *testing.T) {
	q := openDisk(t, t.TempDir(), Options{})
	defer q.Close()
	hold, held := make(chan struct{}), make(chan struct{}, 1)
	q.stallLog = func() {
		select {
		case held <- struct{}{}:
		default:
		}
		<-hold
	}
	first := make(chan error, 1)
	go func() { first <- q.Put(context.Background(), &webhook.Delivery{Key: "k"}) }()
	<-held
	ctx, cancel := context.WithCancel(context.Background())
	repeat := make(chan error, 1)
	go func() { repeat <- q.Put(ctx, &webhook.Delivery{Key: "k"}) }()
	cancel()
	assert.ErrorIs(t, <-repeat, context.Canceled, "the repeat waited, and gave up with its context")
	close(hold)
	require.NoError(t, <-first)
	assert.ErrorIs(t, q.Put(context.Background(), &webhook.Delivery{Key: "k"}), webhook.ErrDuplicate)
}

// TestLogFilesGoAway: the log moves on to a new file past logFileMax, and a
// file whose deliveries are all in queue.db is deleted while the queue
// runs.
func TestLogFilesGoAway(t *testing.T) {
	if testing.Short() {
		t.Skip("writes megabytes")
	}
	dir := t.TempDir()
	q := openDisk(t, dir, Options{DedupWindow: -1})
	defer q.Close()
	body := make([]byte, 64<<10)
	for range 2 * logFileMax / len(body) {
		require.NoError(t, q.Put(context.Background(), &webhook.Delivery{Body: body}))
	}
	require.NoError(t, q.SetCheckpoint(context.Background(), "c", nil)) // a commit after the last Put
	names := logNames(t, dir)
	assert.Equal(t, []string{logName(dir, 2)}, names, "the first is gone")
}

// TestUnmovedBound: while the writer cannot move logged deliveries into
// queue.db, Puts fail once maxUnmoved wait, and go on once it can.
func TestUnmovedBound(t *testing.T) {
	q := openDisk(t, t.TempDir(), Options{})
	defer q.Close()
	hold, held := make(chan struct{}), make(chan struct{})
	go func() {
		_ = q.write(context.Background(), func(*bolt.Tx) error { close(held); <-hold; return nil }, nil)
	}()
	<-held
	for i := range maxUnmoved {
		require.NoError(t, q.Put(context.Background(), &webhook.Delivery{Key: fmt.Sprint(i)}))
	}
	err := q.Put(context.Background(), &webhook.Delivery{Key: "one more"})
	assert.ErrorContains(t, err, "store stalled")
	assert.NotErrorIs(t, err, webhook.ErrQueueFull, "no bound of the user's")
	close(hold)
	require.NoError(t, q.settle())
	require.NoError(t, q.Put(context.Background(), &webhook.Delivery{Key: "one more"}))
	assert.Equal(t, maxUnmoved+1, q.Len())
}
