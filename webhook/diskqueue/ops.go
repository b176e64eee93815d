package diskqueue

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/internal/schedule"
)

// Put implements webhook.Queue. Its wait gives up when ctx ends; the
// delivery may then still be stored, and a repeat of it is a duplicate.
func (q *Queue) Put(ctx context.Context, d *webhook.Delivery) error {
	now := time.Now().UnixNano()
	q.mu.Lock()
	if err := q.usable(); err != nil {
		q.mu.Unlock()
		return err
	}
	q.keys.sweep(now)
	if q.keys.seen(d.Key, now) {
		// A 200 for a repeat only once the first is on disk too.
		g := q.storing[d.Key]
		q.mu.Unlock()
		if g != nil {
			if err := wait(ctx, g); err != nil {
				return err
			}
		}
		return webhook.ErrDuplicate
	}
	if err := q.full(int64(len(d.Body))); err != nil {
		q.mu.Unlock()
		return err
	}
	q.nextID++
	g := q.store(d, q.nextID, now)
	q.mu.Unlock()
	return wait(ctx, g)
}

// store appends d as delivery id, stored at now, and counts it at once, so
// that the bounds and dedup hold for the puts that follow; a failed write
// takes it back. q.mu is held.
func (q *Queue) store(d *webhook.Delivery, id uint64, now int64) *group {
	d.ID = id // here, under q.mu: a Put whose wait gives up must not race with the writer
	it := &item{id: id, bodyLen: int64(len(d.Body)), partition: d.Partition, received: d.ReceivedAt, attempt: d.Attempt, lastError: d.LastError}
	q.meta = appendMeta(q.meta[:0], d, now)
	meta := q.meta
	it.size = headerSize + int64(len(meta)) + it.bodyLen
	keys := q.keys.rememberAll(d, now)
	g, key := q.cur, d.Key
	if keys != nil && key != "" {
		q.storing[key] = g
	}
	stored := func() {
		if q.storing[key] == g {
			delete(q.storing, key)
		}
	}
	q.pending++
	q.bytes += it.bodyLen
	if q.cached+it.bodyLen <= cacheMax {
		it.cached = d
		q.cached += it.bodyLen
	}
	return q.gather(tPut, id, meta, d.Body, checksum(d.Body), func(seg *segment, off int64) {
		it.seg, it.off = seg, off
		seg.add(it)
		seg.keys = append(seg.keys, keys...)
		q.items[id] = it
		q.sched.Add(id, it.partition)
		stored()
	}, func() {
		stored()
		q.keys.forget(keys)
		q.pending--
		q.bytes -= it.bodyLen
		q.uncache(it)
	})
}

// uncache drops the delivery kept in memory for it. q.mu is held.
func (q *Queue) uncache(it *item) {
	if it.cached != nil {
		q.cached -= it.bodyLen
		it.cached = nil
	}
}

// Take implements webhook.Queue. The attempt is counted on disk before the
// delivery is handed out, so that a handling cut short by a crash counts. A
// delivery found damaged is dead-lettered instead, and the next one taken.
func (q *Queue) Take(ctx context.Context) (*webhook.Delivery, error) {
	for {
		id, err := q.sched.Take(ctx, q.mu.Lock, q.mu.Unlock)
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
			if err := q.bury(id, err); err != nil {
				q.release(id)
				return nil, err
			}
		default:
			q.release(id)
			return nil, err
		}
	}
}

// lease reads delivery id, checked, and counts its attempt on disk.
func (q *Queue) lease(id uint64) (*webhook.Delivery, error) {
	q.mu.Lock()
	it := q.items[id]
	d := it.cached
	q.uncache(it)
	q.mu.Unlock()
	if d == nil {
		var err error
		if d, err = q.read(it); err != nil {
			return nil, err
		}
	}
	c := *d // the first handling shares the event decoded on arrival
	q.mu.Lock()
	if err := q.usable(); err != nil {
		q.mu.Unlock()
		return nil, err
	}
	attempt := it.attempt + 1
	var meta [binary.MaxVarintLen64]byte
	if err := q.writeNow(it, tLease, binary.AppendUvarint(meta[:0], uint64(attempt)), func() { it.attempt = attempt }, nil); err != nil {
		return nil, err
	}
	q.mu.Lock()
	c.ID, c.Attempt, c.LastError = id, it.attempt, it.lastError
	q.mu.Unlock()
	return &c, nil
}

// stored is a put record read back: its header, the delivery's fields and
// its body, neither checked yet.
type stored struct {
	h          header
	meta, body []byte
}

// fetch reads the put record of it whole and checks its header.
func (q *Queue) fetch(it *item) (stored, error) {
	// Held from where it is to its read: a copy forward may move it, and its
	// old segment go, in between.
	q.filesMu.RLock()
	q.mu.Lock()
	seg, off, size := it.seg, it.off, it.size
	q.mu.Unlock()
	raw, err := readSegment(seg, off, size)
	q.filesMu.RUnlock()
	if err != nil {
		return stored{}, err
	}
	h, err := decodeHeader(raw)
	if err != nil || h.id != it.id || h.size() != size {
		return stored{}, recordDamage(it.id)
	}
	return stored{h, raw[headerSize : headerSize+h.metaLen], raw[headerSize+h.metaLen:]}, nil
}

// fields decodes the delivery's fields, checked.
func (r stored) fields() (*webhook.Delivery, error) {
	if checksum(r.meta) != r.h.metaSum {
		return nil, recordDamage(r.h.id)
	}
	d, _, err := decodeMeta(r.h.id, r.meta)
	return d, err
}

// read reads it back from disk, checking its record and its body.
func (q *Queue) read(it *item) (*webhook.Delivery, error) {
	q.mu.Lock()
	damage := it.damage
	q.mu.Unlock()
	if damage != nil {
		return nil, damage
	}
	r, err := q.fetch(it)
	if err != nil {
		return nil, err
	}
	d, err := r.fields()
	if err != nil {
		return nil, err
	}
	if checksum(r.body) != r.h.bodySum {
		return nil, bodyDamage(it.id)
	}
	d.Body = r.body
	return d, nil
}

// bury dead-letters delivery id, found damaged, with why as its last error.
func (q *Queue) bury(id uint64, why error) error {
	q.mu.Lock()
	it := q.items[id]
	q.mu.Unlock()
	return q.kill(it, q.logBurial(it, why))
}

// logBurial counts and logs the dead-lettering of it, found damaged, and
// returns the reason. The log line has the stable keys kind, key and
// attempt: those of the record when its fields read, else empty.
func (q *Queue) logBurial(it *item, why error) string {
	d, _, err := q.readFields(it)
	if err != nil {
		d = &webhook.Delivery{ID: it.id}
	}
	q.damaged.Add(1)
	q.log(slog.LevelError, "diskqueue: damaged delivery dead-lettered; it is not handed to a callback",
		"id", it.id, "kind", d.Kind, "key", d.Key, "attempt", d.Attempt, "reason", why.Error())
	return why.Error()
}

// kill appends the dead-lettering of it and waits for it.
func (q *Queue) kill(it *item, reason string) error {
	q.mu.Lock()
	if err := q.usable(); err != nil {
		q.mu.Unlock()
		return err
	}
	g := q.gatherAbout(it, tDead, []byte(reason), func() { q.killed(it, reason) }, nil)
	q.mu.Unlock()
	return wait(context.Background(), g)
}

// killed makes it a dead letter. q.mu is held.
func (q *Queue) killed(it *item, reason string) {
	it.lastError = reason
	if !it.dead {
		it.dead = true
		q.pending--
		q.dead++
		q.uncache(it)
		q.sched.Remove(it.id)
	}
}

// readFields reads the fields of it from disk, with its attempt and its
// last error, without checking its body.
func (q *Queue) readFields(it *item) (*webhook.Delivery, stored, error) {
	r, err := q.fetch(it)
	if err != nil {
		return nil, r, err
	}
	d, err := r.fields()
	if err != nil {
		return nil, r, err
	}
	q.mu.Lock()
	d.Attempt, d.LastError = it.attempt, it.lastError
	q.mu.Unlock()
	return d, r, nil
}

// release ends the lease of id after a write about it failed, so that it is
// handed out again a little later rather than held for good.
func (q *Queue) release(id uint64) {
	q.mu.Lock()
	q.released(id)
	q.mu.Unlock()
}

// released is release with q.mu held.
func (q *Queue) released(id uint64) { q.sched.Retry(id, time.Now().Add(time.Second)) }

// leased appends a record about leased delivery id, at once. When the
// write fails, the delivery is handed out again: its callback runs again,
// but neither it nor the later ones of its partition are stuck.
func (q *Queue) leased(id uint64, typ byte, meta []byte, apply func(*item)) error {
	q.mu.Lock()
	it, err := q.leasedItem(id)
	if err != nil {
		q.mu.Unlock()
		return err
	}
	return q.writeNow(it, typ, meta, func() { apply(it) }, func() { q.released(id) })
}

// leasedItem returns leased delivery id. q.mu is held.
func (q *Queue) leasedItem(id uint64) (*item, error) {
	if err := q.usable(); err != nil {
		return nil, err
	}
	if !q.sched.Leased(id) {
		return nil, fmt.Errorf("%w: %d", webhook.ErrNotLeased, id)
	}
	return q.items[id], nil
}

// Ack implements webhook.Queue. The acknowledgement is written with the
// next record, and synced within lazySync: after a crash in between, the
// delivery is handed out again, as after a crash during its callback.
func (q *Queue) Ack(_ context.Context, id uint64) error {
	q.mu.Lock()
	it, err := q.leasedItem(id)
	if err != nil {
		q.mu.Unlock()
		return err
	}
	if it.moving {
		return q.behindCopy(it, tAck, nil, func() { q.acked(it) }, func() { q.released(id) })
	}
	q.acksKept = appendRecord(q.acksKept, tAck, id, nil, nil, 0)
	q.acked(it)
	q.writtenNow()
	q.mu.Unlock()
	return nil
}

// acked drops it, handled. q.mu is held.
func (q *Queue) acked(it *item) {
	q.pending--
	q.forget(it)
	q.sched.Remove(it.id)
}

// forget drops it, handled or deleted. q.mu is held.
func (q *Queue) forget(it *item) {
	q.bytes -= it.bodyLen
	q.uncache(it)
	it.seg.drop(it)
	delete(q.items, it.id)
}

// Retry implements webhook.Queue. After a restart the delivery is ready at
// once.
func (q *Queue) Retry(_ context.Context, id uint64, at time.Time, reason string) error {
	return q.leased(id, tRetry, []byte(reason), func(it *item) {
		it.lastError = reason
		q.sched.Retry(id, at)
	})
}

// DeadLetter implements webhook.Queue.
func (q *Queue) DeadLetter(_ context.Context, id uint64, reason string) error {
	return q.leased(id, tDead, []byte(reason), func(it *item) { q.killed(it, reason) })
}

// DeadLetters implements webhook.Queue. A dead letter whose record is
// damaged is listed with its id, its body and the damage as LastError.
func (q *Queue) DeadLetters(context.Context) ([]*webhook.Delivery, error) {
	q.mu.Lock()
	var dead []*item
	for _, it := range q.items {
		if it.dead {
			dead = append(dead, it)
		}
	}
	q.mu.Unlock()
	slices.SortFunc(dead, func(a, b *item) int { return cmp.Compare(a.id, b.id) })
	out := make([]*webhook.Delivery, 0, len(dead))
	for _, it := range dead {
		d, _, err := q.readDead(it)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// readDead reads dead letter it with its body, as it is on disk, and the
// body's checksum as stored. A record whose fields do not read gives its
// id and its last error, with its body when its header reads.
func (q *Queue) readDead(it *item) (*webhook.Delivery, uint32, error) {
	d, r, err := q.readFields(it)
	if err != nil && !isDamage(err) {
		return nil, 0, err
	}
	if err != nil {
		q.mu.Lock()
		d = &webhook.Delivery{ID: it.id, LastError: it.lastError}
		q.mu.Unlock()
	}
	d.Body = r.body
	return d, r.h.bodySum, nil
}

// Requeue implements webhook.Queue. The delivery gets a new ID. Its body
// keeps the checksum it was stored with, so a damaged body requeued is
// dead-lettered again rather than handed to a callback.
func (q *Queue) Requeue(_ context.Context, id uint64) error {
	q.mu.Lock()
	it := q.items[id]
	q.mu.Unlock()
	if it == nil || !it.dead {
		return fmt.Errorf("%w: %d", webhook.ErrNotDeadLettered, id)
	}
	d, bodySum, err := q.readDead(it)
	if err != nil {
		return err
	}
	d.Attempt = 0
	q.mu.Lock()
	g, err := q.drop(id, it)
	if err == nil {
		q.nextID++
		g = q.requeue(d, q.nextID, bodySum)
	}
	q.mu.Unlock()
	if err != nil {
		return err
	}
	return wait(context.Background(), g)
}

// requeue appends d, once dead-lettered, as pending delivery id. Its keys
// are not remembered again. q.mu is held.
func (q *Queue) requeue(d *webhook.Delivery, id uint64, bodySum uint32) *group {
	meta := appendMeta(nil, d, 0)
	n := &item{id: id, size: headerSize + int64(len(meta)) + int64(len(d.Body)), bodyLen: int64(len(d.Body)), partition: d.Partition, received: d.ReceivedAt, lastError: d.LastError}
	q.bytes += n.bodyLen
	q.pending++
	return q.gather(tPut, id, meta, d.Body, bodySum, func(seg *segment, off int64) {
		n.seg, n.off = seg, off
		seg.add(n)
		q.items[id] = n
		q.sched.Add(id, n.partition)
	}, func() {
		q.bytes -= n.bodyLen
		q.pending--
	})
}

// drop appends the removal of dead letter it, unless another removal of it
// is under way. q.mu is held.
func (q *Queue) drop(id uint64, it *item) (*group, error) {
	if err := q.usable(); err != nil {
		return nil, err
	}
	if it == nil || q.items[id] != it || !it.dead || it.dropping {
		return nil, fmt.Errorf("%w: %d", webhook.ErrNotDeadLettered, id)
	}
	it.dropping = true
	return q.gatherAbout(it, tDrop, nil, func() {
		q.dead--
		q.forget(it)
	}, func() { it.dropping = false }), nil
}

// Delete implements webhook.Queue.
func (q *Queue) Delete(_ context.Context, id uint64) error {
	q.mu.Lock()
	g, err := q.drop(id, q.items[id])
	q.mu.Unlock()
	if err != nil {
		return err
	}
	return wait(context.Background(), g)
}
