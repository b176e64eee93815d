package webhook

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/collabsvc/collab/webhook/internal/schedule"
)

// DefaultDedupWindow is how long a queue remembers a delivery's dedup key
// unless told otherwise.
const DefaultDedupWindow = 7 * 24 * time.Hour

// MemoryQueueOptions configure a MemoryQueue.
type MemoryQueueOptions struct {
	// MaxPending bounds the deliveries held (pending, leased or waiting for
	// a retry); past it Put returns ErrQueueFull. 0 means no bound.
	MaxPending int
	// MaxBytes bounds the bodies held, in bytes; past it Put returns
	// ErrQueueFull. 0 means no bound.
	MaxBytes int64
	// DedupWindow is how long a key is remembered. Default
	// DefaultDedupWindow; negative turns duplicate suppression off.
	DedupWindow time.Duration
}

// MemoryQueue is a Queue in memory. Everything it holds is lost when the
// process ends, so a crash or a restart loses the events accepted and not
// yet handled, although the server was answered 200. Use it in tests, or
// when that loss is acceptable; otherwise use package diskqueue.
type MemoryQueue struct {
	opts MemoryQueueOptions

	mu          sync.Mutex
	s           schedule.Schedule
	items       map[uint64]*Delivery
	bytes       int64 // the bodies of items
	dead        map[uint64]*Delivery
	keys        map[string]time.Time // dedup key -> expiry
	nextSweep   time.Time
	checkpoints map[string][]byte
	lastID      uint64
}

// NewMemoryQueue returns an empty MemoryQueue.
func NewMemoryQueue(opts MemoryQueueOptions) *MemoryQueue {
	if opts.DedupWindow == 0 {
		opts.DedupWindow = DefaultDedupWindow
	}
	return &MemoryQueue{
		opts:        opts,
		s:           schedule.New(),
		items:       map[uint64]*Delivery{},
		dead:        map[uint64]*Delivery{},
		keys:        map[string]time.Time{},
		checkpoints: map[string][]byte{},
	}
}

func (q *MemoryQueue) lock()   { q.mu.Lock() }
func (q *MemoryQueue) unlock() { q.mu.Unlock() }

// Put implements Queue.
func (q *MemoryQueue) Put(_ context.Context, d *Delivery) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.s.Closed() {
		return ErrQueueClosed
	}
	now := time.Now()
	if q.seen(d.Key, now) {
		return ErrDuplicate
	}
	if err := q.full(int64(len(d.Body))); err != nil {
		return err
	}
	if q.opts.DedupWindow > 0 {
		for _, k := range d.DedupKeys() {
			q.keys[k] = now.Add(q.opts.DedupWindow)
		}
	}
	q.insert(d)
	return nil
}

// insert gives d the next ID and makes it pending. q.mu is held.
func (q *MemoryQueue) insert(d *Delivery) {
	q.lastID++
	d.ID = q.lastID
	q.items[d.ID] = d
	q.bytes += int64(len(d.Body))
	q.s.Add(d.ID, d.Partition)
}

// drop removes item id. q.mu is held.
func (q *MemoryQueue) drop(id uint64) *Delivery {
	d := q.items[id]
	delete(q.items, id)
	q.bytes -= int64(len(d.Body))
	return d
}

// full reports ErrQueueFull when one more delivery with a body of n bytes
// would pass a bound. q.mu is held, so that the check and the insert are
// one step.
func (q *MemoryQueue) full(n int64) error {
	switch {
	case q.opts.MaxPending > 0 && len(q.items) >= q.opts.MaxPending:
		return fmt.Errorf("%w: MaxPending %d reached", ErrQueueFull, q.opts.MaxPending)
	case q.opts.MaxBytes > 0 && q.bytes+n > q.opts.MaxBytes:
		return fmt.Errorf("%w: MaxBytes %d reached", ErrQueueFull, q.opts.MaxBytes)
	}
	return nil
}

// seen reports whether key is held and not expired, sweeping expired keys
// about once a window. q.mu is held.
func (q *MemoryQueue) seen(key string, now time.Time) bool {
	if q.opts.DedupWindow <= 0 || key == "" {
		return false
	}
	if now.After(q.nextSweep) {
		for k, until := range q.keys {
			if !now.Before(until) {
				delete(q.keys, k)
			}
		}
		q.nextSweep = now.Add(q.opts.DedupWindow)
	}
	until, ok := q.keys[key]
	return ok && now.Before(until)
}

// Take implements Queue. The delivery handed out is a copy.
func (q *MemoryQueue) Take(ctx context.Context) (*Delivery, error) {
	id, err := q.s.Take(ctx, q.lock, q.unlock)
	if err != nil {
		return nil, takeError(err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	d := q.items[id]
	d.Attempt++
	c := *d
	// Only the first handling gets the event decoded on arrival; later ones
	// decode the body afresh, since a failed callback may have changed it.
	d.event = nil
	return &c, nil
}

// Ack implements Queue.
func (q *MemoryQueue) Ack(_ context.Context, id uint64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.s.Remove(id) {
		return notLeased(id)
	}
	q.drop(id)
	return nil
}

// Retry implements Queue.
func (q *MemoryQueue) Retry(_ context.Context, id uint64, at time.Time, reason string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.s.Retry(id, at) {
		return notLeased(id)
	}
	q.items[id].LastError = reason
	return nil
}

// DeadLetter implements Queue.
func (q *MemoryQueue) DeadLetter(_ context.Context, id uint64, reason string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.s.Remove(id) {
		return notLeased(id)
	}
	d := q.drop(id)
	d.LastError = reason
	q.dead[id] = d
	return nil
}

// DeadLetters implements Queue.
func (q *MemoryQueue) DeadLetters(context.Context) ([]*Delivery, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]*Delivery, 0, len(q.dead))
	for _, d := range q.dead {
		c := *d
		out = append(out, &c)
	}
	slices.SortFunc(out, func(a, b *Delivery) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// Requeue implements Queue. The delivery gets a new ID.
func (q *MemoryQueue) Requeue(_ context.Context, id uint64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	d, ok := q.dead[id]
	if !ok {
		return notDead(id)
	}
	delete(q.dead, id)
	d.Attempt = 0
	q.insert(d)
	return nil
}

// Delete implements Queue.
func (q *MemoryQueue) Delete(_ context.Context, id uint64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.dead[id]; !ok {
		return notDead(id)
	}
	delete(q.dead, id)
	return nil
}

// Seen implements Queue.
func (q *MemoryQueue) Seen(_ context.Context, key string) (bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.seen(key, time.Now()), nil
}

// Checkpoint implements Queue.
func (q *MemoryQueue) Checkpoint(_ context.Context, name string) ([]byte, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.checkpoints[name]), nil
}

// SetCheckpoint implements Queue.
func (q *MemoryQueue) SetCheckpoint(_ context.Context, name string, value []byte) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.checkpoints[name] = slices.Clone(value)
	return nil
}

// Len returns the number of deliveries held and not dead-lettered.
func (q *MemoryQueue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// WaitIdle implements IdleWaiter: it waits until no delivery is pending,
// leased or waiting for a retry.
func (q *MemoryQueue) WaitIdle(ctx context.Context) error {
	return q.s.WaitEmpty(ctx, q.lock, q.unlock)
}

// Close implements Queue. What the queue holds is discarded.
func (q *MemoryQueue) Close() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.s.Close()
	return nil
}

// Stats implements Queue.
func (q *MemoryQueue) Stats(context.Context) (QueueStats, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	st := QueueStats{Pending: len(q.items), DeadLetters: len(q.dead)}
	for _, d := range q.items {
		if st.Oldest.IsZero() || d.ReceivedAt.Before(st.Oldest) {
			st.Oldest = d.ReceivedAt
		}
	}
	return st, nil
}

// Check implements Queue: it fails once the queue is closed or a bound is
// reached.
func (q *MemoryQueue) Check(context.Context) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.s.Closed() {
		return ErrQueueClosed
	}
	return q.full(0)
}

// takeError turns the schedule's closed error into the Queue's.
func takeError(err error) error {
	if errors.Is(err, schedule.ErrClosed) {
		return ErrQueueClosed
	}
	return err
}

func notLeased(id uint64) error { return fmt.Errorf("%w: %d", ErrNotLeased, id) }
func notDead(id uint64) error   { return fmt.Errorf("%w: %d", ErrNotDeadLettered, id) }
