package diskqueue

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/queuetest"
)

// TestDedupBytesPerKey: a remembered key takes at most 128 bytes of the
// file's pages, with keys the size of the Handler's, in no order, stored by concurrent Puts.
func TestDedupBytesPerKey(t *testing.T) {
	if testing.Short() {
		t.Skip("stores 20,000 deliveries")
	}
	const n = 20000
	q := openDisk(t, t.TempDir(), Options{})
	defer q.Close()
	order := rand.New(rand.NewPCG(1, 2)).Perm(n) // keys arrive in no order
	var wg sync.WaitGroup
	for w := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 32 {
				d := &webhook.Delivery{Key: fmt.Sprintf("issue/%d/2026-11-27T13:30:36Z", 100000+order[i]), Body: []byte("{}")}
				assert.NoError(t, q.Put(context.Background(), d))
			}
		}()
	}
	wg.Wait()
	var bytes int
	require.NoError(t, q.view(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bKeys} {
			st := tx.Bucket(name).Stats()
			require.Equal(t, n, st.KeyN)
			bytes += (st.BranchPageN + st.BranchOverflowN + st.LeafPageN + st.LeafOverflowN) * tx.DB().Info().PageSize
		}
		return nil
	}))
	t.Logf("%d keys: %d bytes of pages, %d per key", n, bytes, bytes/n)
	assert.LessOrEqual(t, bytes/n, 128)
}

// TestExpiryIndexDropped: the index by expiry that earlier versions kept is
// dropped at open, and their keys still count.
func TestExpiryIndexDropped(t *testing.T) {
	dir := t.TempDir()
	q := openDisk(t, dir, Options{})
	queuetest.Put(t, q, "k1", "")
	require.NoError(t, q.update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket(bExpiry)
		if err != nil {
			return err
		}
		return b.Put(append(encodeKey("k1", 1<<62)[:8], "k1"...), nil)
	}))
	require.NoError(t, q.Close())
	q = openDisk(t, dir, Options{})
	defer q.Close()
	require.NoError(t, q.view(func(tx *bolt.Tx) error {
		assert.Nil(t, tx.Bucket(bExpiry))
		return nil
	}))
	assert.ErrorIs(t, q.Put(context.Background(), &webhook.Delivery{Key: "k1"}), webhook.ErrDuplicate)
}

// TestSweepWalksAllKeys: a sweep that takes several commits forgets every
// key past its window, and a damaged entry, and keeps the others.
func TestSweepWalksAllKeys(t *testing.T) {
	q := openDisk(t, t.TempDir(), Options{})
	defer q.Close()
	const n = 2*sweepChunk + 10
	now := time.Now().UnixNano()
	require.NoError(t, q.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bKeys)
		for i := range n {
			until := now - 1 // past
			if i%3 == 0 {
				until = now + int64(time.Hour)
			}
			if err := b.Put(fmt.Appendf(nil, "k%05d", i), encodeKey(fmt.Sprintf("k%05d", i), until)); err != nil {
				return err
			}
		}
		return b.Put([]byte("damaged"), []byte{1, 2, 3})
	}))
	commit := func() { require.NoError(t, q.write(context.Background(), func(*bolt.Tx) error { return nil }, nil)) }
	require.NoError(t, q.write(context.Background(), func(*bolt.Tx) error { q.nextSweep = time.Time{}; return nil }, nil))
	for range 3 {
		commit()
	}
	var left int
	require.NoError(t, q.view(func(tx *bolt.Tx) error {
		left = tx.Bucket(bKeys).Stats().KeyN
		assert.Nil(t, tx.Bucket(bKeys).Get([]byte("damaged")))
		return nil
	}))
	assert.Equal(t, (n+2)/3, left, "the keys within their window stay")
	for i := 0; i < n; i += 3 {
		seen, err := q.Seen(context.Background(), fmt.Sprintf("k%05d", i))
		require.NoError(t, err)
		require.True(t, seen)
	}
}
