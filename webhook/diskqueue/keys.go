package diskqueue

import (
	"bytes"
	"context"
	"log/slog"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/collabsvc/collab/webhook"
)

// remembered reports whether key was stored within the dedup window. A
// damaged entry is counted, logged and read as not remembered: a repeat is
// then handled again rather than lost.
func (q *Queue) remembered(tx *bolt.Tx, key string, now time.Time) bool {
	if q.opts.DedupWindow <= 0 || key == "" {
		return false
	}
	v := tx.Bucket(bKeys).Get([]byte(key))
	if v == nil {
		return false
	}
	until, err := decodeKey(key, v)
	if err != nil {
		q.damaged.Add(1)
		q.log(slog.LevelError, "diskqueue: damaged dedup entry ignored; a repeat of its delivery is stored again", "key", key, "reason", err.Error())
		return false
	}
	return until > now.UnixNano()
}

// rememberAll records the dedup keys of d for the window from now.
func (q *Queue) rememberAll(tx *bolt.Tx, d *webhook.Delivery, now time.Time) error {
	if q.opts.DedupWindow <= 0 {
		return nil
	}
	for _, k := range d.DedupKeys() {
		if err := q.remember(tx, k, now.Add(q.opts.DedupWindow)); err != nil {
			return err
		}
	}
	return nil
}

func (q *Queue) remember(tx *bolt.Tx, key string, until time.Time) error {
	return tx.Bucket(bKeys).Put([]byte(key), encodeKey(key, until.UnixNano()))
}

// sweepChunk is how many dedup entries a commit looks at while a sweep is
// under way.
const sweepChunk = 1000

// sweep forgets dedup keys past their window, and damaged ones. A sweep
// walks the whole key bucket, sweepChunk entries per commit, from where the
// last commit left off; one starts about once a minute. Walking the entries
// spares an index by expiry, which would double the bytes a key takes.
func (q *Queue) sweep(tx *bolt.Tx) {
	now := time.Now()
	if q.sweepFrom == nil && now.Before(q.nextSweep) {
		return
	}
	q.nextSweep = now.Add(time.Minute)
	c := tx.Bucket(bKeys).Cursor()
	k, v := c.Seek(q.sweepFrom)
	for range sweepChunk {
		if k == nil {
			q.sweepFrom = nil
			return
		}
		// A damaged entry reads as absent: it goes too.
		if until, err := decodeKey(string(k), v); err != nil || until <= now.UnixNano() {
			k = bytes.Clone(k)
			if c.Delete() != nil {
				break
			}
			k, v = c.Seek(k) // after a delete, Next could skip an entry
			continue
		}
		k, v = c.Next()
	}
	q.sweepFrom = bytes.Clone(k)
}

// Seen implements webhook.Queue.
func (q *Queue) Seen(_ context.Context, key string) (bool, error) {
	var seen bool
	err := q.view(func(tx *bolt.Tx) error {
		seen = q.remembered(tx, key, time.Now())
		return nil
	})
	return seen, err
}
