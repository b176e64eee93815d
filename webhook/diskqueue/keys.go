package diskqueue

import (
	"context"
	"encoding/binary"
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
	keys, exp := tx.Bucket(bKeys), tx.Bucket(bExpiry)
	if old := keys.Get([]byte(key)); len(old) >= 8 {
		if err := exp.Delete(append(old[:8:8], key...)); err != nil {
			return err
		}
	}
	v := encodeKey(key, until.UnixNano())
	if err := keys.Put([]byte(key), v); err != nil {
		return err
	}
	return exp.Put(append(v[:8:8], key...), nil)
}

// sweep forgets dedup keys past their window, a bounded number per commit:
// about once a minute, or at every commit while more are due.
func (q *Queue) sweep(tx *bolt.Tx) {
	now := time.Now()
	if now.Before(q.nextSweep) {
		return
	}
	q.nextSweep = now.Add(time.Minute)
	keys, exp := tx.Bucket(bKeys), tx.Bucket(bExpiry)
	c := exp.Cursor()
	for range maxGroup {
		k, _ := c.First()
		if len(k) < 8 || int64(binary.BigEndian.Uint64(k)) > now.UnixNano() {
			return
		}
		if keys.Delete(k[8:]) != nil || exp.Delete(k) != nil {
			return
		}
	}
	q.nextSweep = now
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
