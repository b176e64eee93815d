package diskqueue

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/internal/schedule"
)

// Put implements webhook.Queue. Its write gives up when ctx ends; the
// delivery may then still be stored, and a repeat of it is a duplicate.
func (q *Queue) Put(ctx context.Context, d *webhook.Delivery) error {
	var id uint64
	return q.write(ctx, func(tx *bolt.Tx) (err error) {
		id, err = q.put(tx, d)
		return err
	}, func() {
		d.ID = id
		q.s.Add(id, d.Partition)
	})
}

// put stores d in tx, unless it is a duplicate or a bound is reached, and
// returns its id.
func (q *Queue) put(tx *bolt.Tx, d *webhook.Delivery) (uint64, error) {
	now := time.Now()
	if q.remembered(tx, d.Key, now) {
		return 0, webhook.ErrDuplicate
	}
	if err := q.full(int64(len(d.Body))); err != nil {
		return 0, err
	}
	pending := tx.Bucket(bPending)
	seq, err := pending.NextSequence()
	if err != nil {
		return 0, err
	}
	c := *d
	c.ID = seq
	sum := checksum(d.Body)
	if err := putRecord(pending, &c, &sum); err != nil {
		return 0, err
	}
	if err := tx.Bucket(bBodies).Put(idKey(seq), d.Body); err != nil {
		return 0, err
	}
	if err := q.rememberAll(tx, d, now); err != nil {
		return 0, err
	}
	q.pending.Add(1)
	q.bytes.Add(int64(len(d.Body)))
	return seq, nil
}

// putRecord writes d without its body, which is written once, apart: an
// attempt or an error then rewrites a few bytes.
func putRecord(b *bolt.Bucket, d *webhook.Delivery, bodySum *uint32) error {
	v, err := encodeRecord(d, bodySum)
	if err != nil {
		return err
	}
	return b.Put(idKey(d.ID), v)
}

// getRecord reads delivery id from b without its body, or nil.
func getRecord(b *bolt.Bucket, id uint64) (*webhook.Delivery, *uint32, error) {
	v := b.Get(idKey(id))
	if v == nil {
		return nil, nil, nil
	}
	return decodeRecord(idKey(id), v)
}

// getDelivery reads delivery id from b with its body, checked, or nil.
func getDelivery(tx *bolt.Tx, b *bolt.Bucket, id uint64) (*webhook.Delivery, *uint32, error) {
	d, sum, err := getRecord(b, id)
	if d == nil || err != nil {
		return nil, nil, err
	}
	body := tx.Bucket(bBodies).Get(idKey(id))
	if err := checkBody(id, body, sum); err != nil {
		return nil, nil, err
	}
	d.Body = bytes.Clone(body)
	return d, sum, nil
}

func idOf(k []byte) uint64 {
	if len(k) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(k)
}

// bury dead-letters pending delivery id, found damaged: it keeps what of its
// record still reads, and its body, with why as its last error. The log
// line has the stable keys kind, key and attempt: those of the record when
// it reads, else empty.
func (q *Queue) bury(tx *bolt.Tx, id uint64, why error) error {
	pending := tx.Bucket(bPending)
	d, sum, err := getRecord(pending, id)
	if err != nil || d == nil {
		d, sum = &webhook.Delivery{ID: id}, nil
	}
	d.LastError = why.Error()
	if err := putRecord(tx.Bucket(bDead), d, sum); err != nil {
		return err
	}
	q.pending.Add(-1)
	q.damaged.Add(1)
	q.log(slog.LevelError, "diskqueue: damaged delivery dead-lettered; it is not handed to a callback",
		"id", id, "kind", d.Kind, "key", d.Key, "attempt", d.Attempt, "reason", why.Error())
	return pending.Delete(idKey(id))
}

// Take implements webhook.Queue. The attempt is counted on disk before the
// delivery is handed out, so that a handling cut short by a crash counts. A
// delivery found damaged is dead-lettered instead, and the next one taken.
func (q *Queue) Take(ctx context.Context) (*webhook.Delivery, error) {
	for {
		id, err := q.s.Take(ctx, q.mu.Lock, q.mu.Unlock)
		if errors.Is(err, schedule.ErrClosed) {
			return nil, webhook.ErrQueueClosed
		} else if err != nil {
			return nil, err
		}
		d, err := q.lease(id)
		switch {
		case err == nil:
			return d, nil
		case isDamage(err):
			q.mu.Lock()
			q.s.Remove(id)
			q.mu.Unlock()
		default:
			q.release(id)
			return nil, err
		}
	}
}

// lease counts an attempt of id on disk and returns it, or buries it when
// it is damaged.
func (q *Queue) lease(id uint64) (*webhook.Delivery, error) {
	var d *webhook.Delivery
	err := q.write(context.Background(), func(tx *bolt.Tx) error {
		pending := tx.Bucket(bPending)
		var sum *uint32
		var err error
		d, sum, err = getDelivery(tx, pending, id)
		switch {
		case isDamage(err):
			if err := q.bury(tx, id, err); err != nil {
				return err
			}
			return err
		case err != nil:
			return err
		case d == nil:
			return fmt.Errorf("diskqueue: delivery %d is missing from the queue file", id)
		}
		d.Attempt++
		return putRecord(pending, d, sum)
	}, nil)
	return d, err
}

// release ends the lease of id after a write about it failed, so that it is
// handed out again a little later rather than held for good: nothing of
// that write reached the file.
func (q *Queue) release(id uint64) {
	q.mu.Lock()
	q.s.Retry(id, time.Now().Add(time.Second))
	q.mu.Unlock()
}

// leasedOp checks that id is leased before writing fn. When the write
// fails, the delivery is handed out again: its callback runs again, but
// neither it nor the later ones of its partition are stuck.
func (q *Queue) leasedOp(id uint64, fn func(tx *bolt.Tx) error, after func()) error {
	q.mu.Lock()
	ok := q.s.Leased(id)
	q.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w: %d", webhook.ErrNotLeased, id)
	}
	err := q.write(context.Background(), fn, after)
	if err != nil && !errors.Is(err, webhook.ErrQueueClosed) {
		q.release(id)
	}
	return err
}

// Ack implements webhook.Queue.
func (q *Queue) Ack(_ context.Context, id uint64) error {
	return q.leasedOp(id, func(tx *bolt.Tx) error {
		bodies := tx.Bucket(bBodies)
		n := len(bodies.Get(idKey(id)))
		if err := bodies.Delete(idKey(id)); err != nil {
			return err
		}
		q.pending.Add(-1)
		q.bytes.Add(-int64(n))
		return tx.Bucket(bPending).Delete(idKey(id))
	}, func() { q.s.Remove(id) })
}

// Retry implements webhook.Queue. After a restart the delivery is ready at
// once.
func (q *Queue) Retry(_ context.Context, id uint64, at time.Time, reason string) error {
	return q.leasedOp(id, failed(id, reason, func(tx *bolt.Tx, d *webhook.Delivery, sum *uint32) error {
		return putRecord(tx.Bucket(bPending), d, sum)
	}), func() { q.s.Retry(id, at) })
}

// DeadLetter implements webhook.Queue.
func (q *Queue) DeadLetter(_ context.Context, id uint64, reason string) error {
	return q.leasedOp(id, failed(id, reason, func(tx *bolt.Tx, d *webhook.Delivery, sum *uint32) error {
		if err := putRecord(tx.Bucket(bDead), d, sum); err != nil {
			return err
		}
		q.pending.Add(-1)
		return tx.Bucket(bPending).Delete(idKey(id))
	}), func() { q.s.Remove(id) })
}

// failed is the write of a failed attempt: it reads the pending record of
// id, notes reason in it, and hands it to store.
func failed(id uint64, reason string, store func(*bolt.Tx, *webhook.Delivery, *uint32) error) func(*bolt.Tx) error {
	return func(tx *bolt.Tx) error {
		d, sum, err := getRecord(tx.Bucket(bPending), id)
		if err != nil || d == nil {
			return err
		}
		d.LastError = reason
		return store(tx, d, sum)
	}
}

// DeadLetters implements webhook.Queue. A dead letter whose record is
// damaged is listed with its id, its body and the damage as LastError.
func (q *Queue) DeadLetters(context.Context) ([]*webhook.Delivery, error) {
	var out []*webhook.Delivery
	err := q.view(func(tx *bolt.Tx) error {
		bodies := tx.Bucket(bBodies)
		return tx.Bucket(bDead).ForEach(func(k, v []byte) error {
			d, _, err := decodeRecord(k, v)
			if err != nil {
				d = &webhook.Delivery{ID: idOf(k), LastError: err.Error()}
			}
			d.Body = bytes.Clone(bodies.Get(k))
			out = append(out, d)
			return nil
		})
	})
	return out, err
}

// Requeue implements webhook.Queue. The delivery gets a new ID. Its body
// keeps the checksum it was stored with, so a damaged body requeued is
// dead-lettered again rather than handed to a callback.
func (q *Queue) Requeue(_ context.Context, id uint64) error {
	var d *webhook.Delivery
	return q.write(context.Background(), func(tx *bolt.Tx) error {
		dead, pending, bodies := tx.Bucket(bDead), tx.Bucket(bPending), tx.Bucket(bBodies)
		var sum *uint32
		var err error
		if d, sum, err = getRecord(dead, id); err != nil {
			return err
		}
		if d == nil {
			return fmt.Errorf("%w: %d", webhook.ErrNotDeadLettered, id)
		}
		if d.ID, err = pending.NextSequence(); err != nil {
			return err
		}
		d.Attempt = 0
		if err := putRecord(pending, d, sum); err != nil {
			return err
		}
		if body := bodies.Get(idKey(id)); body != nil {
			if err := bodies.Put(idKey(d.ID), bytes.Clone(body)); err != nil {
				return err
			}
		}
		if err := bodies.Delete(idKey(id)); err != nil {
			return err
		}
		q.pending.Add(1)
		return dead.Delete(idKey(id))
	}, func() { q.s.Add(d.ID, d.Partition) })
}

// Delete implements webhook.Queue.
func (q *Queue) Delete(_ context.Context, id uint64) error {
	return q.write(context.Background(), func(tx *bolt.Tx) error {
		dead, bodies := tx.Bucket(bDead), tx.Bucket(bBodies)
		if dead.Get(idKey(id)) == nil {
			return fmt.Errorf("%w: %d", webhook.ErrNotDeadLettered, id)
		}
		q.bytes.Add(-int64(len(bodies.Get(idKey(id)))))
		if err := bodies.Delete(idKey(id)); err != nil {
			return err
		}
		return dead.Delete(idKey(id))
	}, nil)
}

// Checkpoint implements webhook.Queue.
func (q *Queue) Checkpoint(_ context.Context, name string) ([]byte, error) {
	var v []byte
	err := q.view(func(tx *bolt.Tx) error {
		v = bytes.Clone(tx.Bucket(bCheckpoints).Get([]byte(name)))
		return nil
	})
	return v, err
}

// SetCheckpoint implements webhook.Queue.
func (q *Queue) SetCheckpoint(_ context.Context, name string, value []byte) error {
	return q.write(context.Background(), func(tx *bolt.Tx) error {
		return tx.Bucket(bCheckpoints).Put([]byte(name), bytes.Clone(value))
	}, nil)
}

// Len returns the number of deliveries held and not dead-lettered.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.s.Len()
}

// WaitIdle waits until no delivery is pending, leased or waiting for a
// retry.
func (q *Queue) WaitIdle(ctx context.Context) error {
	return q.s.WaitEmpty(ctx, q.mu.Lock, q.mu.Unlock)
}

// Stats implements webhook.Queue.
func (q *Queue) Stats(context.Context) (webhook.QueueStats, error) {
	st := webhook.QueueStats{Pending: q.Len(), Damaged: q.damaged.Load()}
	err := q.view(func(tx *bolt.Tx) error {
		st.DeadLetters = tx.Bucket(bDead).Stats().KeyN
		k, v := tx.Bucket(bPending).Cursor().First()
		if d, _, err := decodeRecord(k, v); k != nil && err == nil {
			st.Oldest = d.ReceivedAt
		}
		return nil
	})
	return st, err
}

// StallAfter is how long a commit may take before Check reports the disk
// stalled.
const StallAfter = 2 * time.Second

// Check implements webhook.Queue: the queue is open, no bound is reached,
// and no commit has been under way for StallAfter (a disk that stalls).
func (q *Queue) Check(context.Context) error {
	q.closing.RLock()
	closed := q.closed
	q.closing.RUnlock()
	if closed {
		return webhook.ErrQueueClosed
	}
	if err := q.full(0); err != nil {
		return err
	}
	if t := q.committing.Load(); t != 0 && time.Since(time.Unix(0, t)) > StallAfter {
		return fmt.Errorf("diskqueue: store stalled: a commit has taken %v", time.Since(time.Unix(0, t)).Round(time.Second))
	}
	return nil
}

// Close implements webhook.Queue: blocked Takes return, writes in flight
// finish, and the file is closed.
func (q *Queue) Close() error {
	q.closing.Lock()
	if q.closed {
		q.closing.Unlock()
		return nil
	}
	q.closed = true
	close(q.ops)
	q.closing.Unlock()
	<-q.done
	q.mu.Lock()
	q.s.Close()
	q.mu.Unlock()
	return q.closeDB()
}

func (q *Queue) closeDB() error {
	q.dbMu.Lock()
	defer q.dbMu.Unlock()
	if q.db == nil {
		return nil
	}
	err := q.db.Close()
	q.db = nil
	return err
}
