package webhook

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// DiskQueueOptions configure a DiskQueue.
type DiskQueueOptions struct {
	// MaxPending bounds the deliveries held (pending, leased or waiting for
	// a retry); past it Put returns ErrQueueFull. 0 means no bound.
	MaxPending int
	// MaxBytes bounds the space the stored deliveries take in the queue's
	// file, roughly; past it Put returns ErrQueueFull, while takes, acks and
	// retries go on so that the queue can drain. 0 means no bound.
	MaxBytes int64
	// DedupWindow is how long a key is remembered. Default
	// DefaultDedupWindow; negative turns duplicate suppression off.
	DedupWindow time.Duration
}

// DiskQueue is a Queue kept in a directory on local disk, in one file
// (queue.db, a bbolt database). A delivery whose Put returned nil is on disk:
// it survives a crash or a restart, and is handed out again, in arrival
// order, when the queue is opened next. So is a delivery whose callback was
// running at the crash. Dedup keys and checkpoints are kept too.
//
// Concurrent writes are committed together, so many deliveries arriving at
// once share one disk flush. The directory and the file are readable by
// their owner only, because bodies can hold private data. One process at a
// time may open a directory.
type DiskQueue struct {
	opts DiskQueueOptions
	db   *bolt.DB

	mu sync.Mutex // guards s
	s  schedule

	// The writer goroutine commits what accumulates in ops as one
	// transaction; closing (under closing's write lock) ends it.
	closing sync.RWMutex
	closed  bool
	ops     chan *dbOp
	done    chan struct{}

	nextSweep time.Time    // used by the writer only
	commits   atomic.Int64 // transactions committed, for the tests
}

// dbOp is one write of a group commit.
type dbOp struct {
	// fn makes the change. A refusal it returns (see refused) fails this op
	// alone and must come before any change; another error aborts the
	// transaction.
	fn func(tx *bolt.Tx) error
	// after runs once the change is committed, under mu.
	after func()
	err   error
	done  chan struct{}
}

// The buckets of the queue's file.
var (
	bPending     = []byte("pending")     // id -> Delivery without its body (JSON)
	bDead        = []byte("dead")        // id -> Delivery without its body (JSON)
	bBodies      = []byte("bodies")      // id -> body, of pending and dead deliveries
	bKeys        = []byte("keys")        // dedup key -> expiry (unix ns)
	bExpiry      = []byte("expiry")      // expiry (unix ns) + dedup key -> nothing, for sweeping
	bCheckpoints = []byte("checkpoints") // name -> value
	buckets      = [][]byte{bPending, bDead, bBodies, bKeys, bExpiry, bCheckpoints}
)

// maxGroup bounds the writes committed together.
const maxGroup = 1000

// OpenDiskQueue opens the queue kept in dir, creating it if needed. A queue
// that cannot be opened or read back, or whose file is damaged, is an
// error: nothing is reset.
func OpenDiskQueue(dir string, opts DiskQueueOptions) (*DiskQueue, error) {
	if opts.MaxPending < 0 || opts.MaxBytes < 0 {
		return nil, errors.New("webhook: negative DiskQueueOptions bound")
	}
	if opts.DedupWindow == 0 {
		opts.DedupWindow = DefaultDedupWindow
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("webhook: queue directory: %w", err)
	}
	// Bodies can hold private data: owner only, also for a directory that
	// existed.
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("webhook: queue directory: %w", err)
	}
	path := filepath.Join(dir, "queue.db")
	if err := chmodIfExists(path, 0o600); err != nil {
		return nil, fmt.Errorf("webhook: queue file: %w", err)
	}
	db, err := openBolt(path)
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return nil, fmt.Errorf("webhook: queue %s is open in another process", path)
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum), errors.Is(err, berrors.ErrVersionMismatch):
		return nil, fmt.Errorf("webhook: queue file %s is damaged (%w); move it away to start afresh", path, err)
	case err != nil:
		return nil, fmt.Errorf("webhook: opening queue %s: %w", path, err)
	}
	q := &DiskQueue{opts: opts, db: db, s: newSchedule(), ops: make(chan *dbOp, maxGroup), done: make(chan struct{})}
	if err := q.load(); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("webhook: queue file %s is damaged (%w); move it away to start afresh", path, err)
	}
	go q.writer()
	return q, nil
}

// openBolt opens the file, turning the panic bbolt raises on some damaged
// files into an error.
func openBolt(path string) (db *bolt.DB, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", berrors.ErrInvalid, p)
		}
	}()
	return bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
}

func chmodIfExists(path string, mode os.FileMode) error {
	err := os.Chmod(path, mode)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// load checks the file, creates the buckets, and schedules the pending
// deliveries in arrival order. A damaged file can make bbolt panic; that is
// an error here.
func (q *DiskQueue) load() (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	if err := q.db.View(func(tx *bolt.Tx) error { return <-tx.Check() }); err != nil {
		return err
	}
	return q.db.Update(func(tx *bolt.Tx) error {
		for _, name := range buckets {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return tx.Bucket(bPending).ForEach(func(k, v []byte) error {
			d, err := decodeDelivery(k, v)
			if err == nil {
				q.s.add(d.ID, d.Partition)
			}
			return err
		})
	})
}

// writer commits the queued writes in groups until the queue closes.
func (q *DiskQueue) writer() {
	defer close(q.done)
	group := make([]*dbOp, 0, maxGroup)
	for op := range q.ops {
		group = append(group[:0], op)
	fill:
		for len(group) < maxGroup {
			select {
			case op, ok := <-q.ops:
				if !ok {
					break fill
				}
				group = append(group, op)
			default:
				break fill
			}
		}
		q.commit(group)
	}
}

// commit runs a group in one transaction. When the transaction fails, each
// write is tried alone, so that one bad write fails only itself.
func (q *DiskQueue) commit(group []*dbOp) {
	err := q.update(func(tx *bolt.Tx) error {
		for _, op := range group {
			if op.err = op.fn(tx); op.err != nil && !refused(op.err) {
				return op.err
			}
		}
		q.sweep(tx)
		return nil
	})
	if err != nil && len(group) > 1 {
		for _, op := range group {
			q.commit([]*dbOp{op})
		}
		return
	}
	if err != nil {
		group[0].err = err
	} else {
		q.commits.Add(1)
	}
	q.mu.Lock()
	for _, op := range group {
		if op.err == nil && op.after != nil {
			op.after()
		}
	}
	q.mu.Unlock()
	for _, op := range group {
		close(op.done)
	}
}

func (q *DiskQueue) update(fn func(tx *bolt.Tx) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("webhook: queue store failed: %v", p)
		}
	}()
	return q.db.Update(fn)
}

// full reports whether the pages in use reached MaxBytes. Freed pages are
// reused, so the file's own size would overstate it.
func (q *DiskQueue) full(tx *bolt.Tx) bool {
	if q.opts.MaxBytes == 0 {
		return false
	}
	free := int64(q.db.Stats().FreePageN) * int64(q.db.Info().PageSize)
	return tx.Size()-free >= q.opts.MaxBytes
}

// refused reports whether err is an answer about the queue's content rather
// than a failure to write.
func refused(err error) bool {
	var se *stateError
	return errors.Is(err, ErrDuplicate) || errors.Is(err, ErrQueueFull) || errors.As(err, &se)
}

// write queues fn for the next group commit and waits for it.
func (q *DiskQueue) write(fn func(tx *bolt.Tx) error, after func()) error {
	op := &dbOp{fn: fn, after: after, done: make(chan struct{})}
	q.closing.RLock()
	if q.closed {
		q.closing.RUnlock()
		return ErrQueueClosed
	}
	q.ops <- op
	q.closing.RUnlock()
	<-op.done
	return op.err
}

// sweep forgets dedup keys past their window, a bounded number per commit:
// about once a minute, or at every commit while more are due.
func (q *DiskQueue) sweep(tx *bolt.Tx) {
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

// Put implements Queue.
func (q *DiskQueue) Put(ctx context.Context, d *Delivery) error {
	if q.opts.MaxPending > 0 {
		q.mu.Lock()
		n := len(q.s.entries)
		q.mu.Unlock()
		if n >= q.opts.MaxPending {
			// A repeat of a stored delivery is kept, not dropped: answered
			// 200 as a duplicate, as below the bound.
			if seen, err := q.Seen(ctx, d.Key); err == nil && seen {
				return ErrDuplicate
			}
			return ErrQueueFull
		}
	}
	var id uint64
	return q.write(func(tx *bolt.Tx) error {
		now := time.Now()
		if q.remembered(tx, d.Key, now) {
			return ErrDuplicate
		}
		if q.full(tx) {
			return fmt.Errorf("%w: MaxBytes reached", ErrQueueFull)
		}
		pending := tx.Bucket(bPending)
		seq, err := pending.NextSequence()
		if err != nil {
			return err
		}
		c := *d
		c.ID = seq
		if err := putMeta(pending, &c); err != nil {
			return err
		}
		if err := tx.Bucket(bBodies).Put(idKey(seq), d.Body); err != nil {
			return err
		}
		if q.opts.DedupWindow > 0 {
			for _, k := range d.dedupKeys() {
				if err := q.remember(tx, k, now.Add(q.opts.DedupWindow)); err != nil {
					return err
				}
			}
		}
		id = seq
		return nil
	}, func() {
		d.ID = id
		q.s.add(id, d.Partition)
	})
}

func (q *DiskQueue) remembered(tx *bolt.Tx, key string, now time.Time) bool {
	if q.opts.DedupWindow <= 0 || key == "" {
		return false
	}
	v := tx.Bucket(bKeys).Get([]byte(key))
	return len(v) == 8 && int64(binary.BigEndian.Uint64(v)) > now.UnixNano()
}

func (q *DiskQueue) remember(tx *bolt.Tx, key string, until time.Time) error {
	keys, exp := tx.Bucket(bKeys), tx.Bucket(bExpiry)
	if old := keys.Get([]byte(key)); len(old) == 8 {
		if err := exp.Delete(append(bytes.Clone(old), key...)); err != nil {
			return err
		}
	}
	t := binary.BigEndian.AppendUint64(nil, uint64(until.UnixNano()))
	if err := keys.Put([]byte(key), t); err != nil {
		return err
	}
	return exp.Put(append(t, key...), nil)
}

func idKey(id uint64) []byte { return binary.BigEndian.AppendUint64(nil, id) }

// putMeta writes d without its body, which is written once, apart: an
// attempt or an error then rewrites a few bytes.
func putMeta(b *bolt.Bucket, d *Delivery) error {
	m := *d
	m.Body = nil
	v, err := json.Marshal(&m)
	if err != nil {
		return err
	}
	return b.Put(idKey(d.ID), v)
}

// getMeta reads delivery id from b without its body, or nil.
func getMeta(b *bolt.Bucket, id uint64) (*Delivery, error) {
	v := b.Get(idKey(id))
	if v == nil {
		return nil, nil
	}
	return decodeDelivery(idKey(id), v)
}

// getDelivery reads delivery id from b with its body, or nil.
func getDelivery(tx *bolt.Tx, b *bolt.Bucket, id uint64) (*Delivery, error) {
	d, err := getMeta(b, id)
	if d != nil {
		d.Body = bytes.Clone(tx.Bucket(bBodies).Get(idKey(id)))
	}
	return d, err
}

func decodeDelivery(k, v []byte) (*Delivery, error) {
	d := new(Delivery)
	if err := json.Unmarshal(v, d); err != nil || len(k) != 8 || d.ID != binary.BigEndian.Uint64(k) {
		return nil, fmt.Errorf("webhook: stored delivery %x does not decode", k)
	}
	return d, nil
}

// Take implements Queue. The attempt is counted on disk before the delivery
// is handed out, so that a handling cut short by a crash counts.
func (q *DiskQueue) Take(ctx context.Context) (*Delivery, error) {
	id, err := q.s.take(ctx, q.mu.Lock, q.mu.Unlock)
	if err != nil {
		return nil, err
	}
	var d *Delivery
	err = q.write(func(tx *bolt.Tx) error {
		pending := tx.Bucket(bPending)
		var err error
		if d, err = getDelivery(tx, pending, id); err != nil {
			return err
		}
		if d == nil {
			return fmt.Errorf("webhook: delivery %d is missing from the queue file", id)
		}
		d.Attempt++
		return putMeta(pending, d)
	}, nil)
	if err != nil {
		q.release(id)
		return nil, err
	}
	return d, nil
}

// release ends the lease of id after a write about it failed, so that it is
// handed out again a little later rather than held for good: nothing of
// that write reached the file.
func (q *DiskQueue) release(id uint64) {
	q.mu.Lock()
	q.s.retry(id, time.Now().Add(time.Second))
	q.mu.Unlock()
}

// leasedOp checks that id is leased before writing fn. When the write
// fails, the delivery is handed out again: its callback runs again, but
// neither it nor the later ones of its partition are stuck.
func (q *DiskQueue) leasedOp(id uint64, fn func(tx *bolt.Tx) error, after func()) error {
	q.mu.Lock()
	ok := q.s.leased(id)
	q.mu.Unlock()
	if !ok {
		return notLeased(id)
	}
	err := q.write(fn, after)
	if err != nil && !errors.Is(err, ErrQueueClosed) {
		q.release(id)
	}
	return err
}

// Ack implements Queue.
func (q *DiskQueue) Ack(_ context.Context, id uint64) error {
	return q.leasedOp(id, func(tx *bolt.Tx) error {
		if err := tx.Bucket(bBodies).Delete(idKey(id)); err != nil {
			return err
		}
		return tx.Bucket(bPending).Delete(idKey(id))
	}, func() { q.s.remove(id) })
}

// Retry implements Queue. After a restart the delivery is ready at once.
func (q *DiskQueue) Retry(_ context.Context, id uint64, at time.Time, reason string) error {
	return q.leasedOp(id, failed(id, reason, func(tx *bolt.Tx, d *Delivery) error {
		return putMeta(tx.Bucket(bPending), d)
	}), func() { q.s.retry(id, at) })
}

// DeadLetter implements Queue.
func (q *DiskQueue) DeadLetter(_ context.Context, id uint64, reason string) error {
	return q.leasedOp(id, failed(id, reason, func(tx *bolt.Tx, d *Delivery) error {
		if err := putMeta(tx.Bucket(bDead), d); err != nil {
			return err
		}
		return tx.Bucket(bPending).Delete(idKey(id))
	}), func() { q.s.remove(id) })
}

// failed is the write of a failed attempt: it reads the pending record of
// id, notes reason in it, and hands it to store.
func failed(id uint64, reason string, store func(*bolt.Tx, *Delivery) error) func(*bolt.Tx) error {
	return func(tx *bolt.Tx) error {
		d, err := getMeta(tx.Bucket(bPending), id)
		if err != nil || d == nil {
			return err
		}
		d.LastError = reason
		return store(tx, d)
	}
}

// DeadLetters implements Queue.
func (q *DiskQueue) DeadLetters(context.Context) ([]*Delivery, error) {
	var out []*Delivery
	err := q.db.View(func(tx *bolt.Tx) error {
		bodies := tx.Bucket(bBodies)
		return tx.Bucket(bDead).ForEach(func(k, v []byte) error {
			d, err := decodeDelivery(k, v)
			if err == nil {
				d.Body = bytes.Clone(bodies.Get(k))
				out = append(out, d)
			}
			return err
		})
	})
	return out, err
}

// Requeue implements Queue. The delivery gets a new ID.
func (q *DiskQueue) Requeue(_ context.Context, id uint64) error {
	var d *Delivery
	return q.write(func(tx *bolt.Tx) error {
		dead, pending, bodies := tx.Bucket(bDead), tx.Bucket(bPending), tx.Bucket(bBodies)
		var err error
		if d, err = getDelivery(tx, dead, id); err != nil {
			return err
		}
		if d == nil {
			return notDead(id)
		}
		if d.ID, err = pending.NextSequence(); err != nil {
			return err
		}
		d.Attempt = 0
		if err := putMeta(pending, d); err != nil {
			return err
		}
		if err := bodies.Put(idKey(d.ID), d.Body); err != nil {
			return err
		}
		if err := bodies.Delete(idKey(id)); err != nil {
			return err
		}
		return dead.Delete(idKey(id))
	}, func() { q.s.add(d.ID, d.Partition) })
}

// Delete implements Queue.
func (q *DiskQueue) Delete(_ context.Context, id uint64) error {
	return q.write(func(tx *bolt.Tx) error {
		dead := tx.Bucket(bDead)
		if dead.Get(idKey(id)) == nil {
			return notDead(id)
		}
		if err := tx.Bucket(bBodies).Delete(idKey(id)); err != nil {
			return err
		}
		return dead.Delete(idKey(id))
	}, nil)
}

// Seen implements Queue.
func (q *DiskQueue) Seen(_ context.Context, key string) (bool, error) {
	var seen bool
	err := q.db.View(func(tx *bolt.Tx) error {
		seen = q.remembered(tx, key, time.Now())
		return nil
	})
	return seen, err
}

// Checkpoint implements Queue.
func (q *DiskQueue) Checkpoint(_ context.Context, name string) ([]byte, error) {
	var v []byte
	err := q.db.View(func(tx *bolt.Tx) error {
		v = bytes.Clone(tx.Bucket(bCheckpoints).Get([]byte(name)))
		return nil
	})
	return v, err
}

// SetCheckpoint implements Queue.
func (q *DiskQueue) SetCheckpoint(_ context.Context, name string, value []byte) error {
	return q.write(func(tx *bolt.Tx) error {
		return tx.Bucket(bCheckpoints).Put([]byte(name), bytes.Clone(value))
	}, nil)
}

// Len returns the number of deliveries held and not dead-lettered.
func (q *DiskQueue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.s.entries)
}

// WaitIdle waits until no delivery is pending, leased or waiting for a
// retry.
func (q *DiskQueue) WaitIdle(ctx context.Context) error {
	return q.s.waitEmpty(ctx, q.mu.Lock, q.mu.Unlock)
}

// Close implements Queue: blocked Takes return, writes in flight finish,
// and the file is closed.
func (q *DiskQueue) Close() error {
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
	q.s.close()
	q.mu.Unlock()
	return q.db.Close()
}
