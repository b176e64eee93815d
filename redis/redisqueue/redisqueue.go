// Package redisqueue keeps a webhook receiver's deliveries in Redis Streams,
// so that several receivers behind one load balancer share one queue: any of
// them may accept a delivery, and any of them may handle it.
//
//	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
//	q, err := redisqueue.New(ctx, rdb, redisqueue.Options{})
//	// pass q as the Handler's queue; every receiver uses the same Prefix.
//
// Each delivery is a stream entry read through one consumer group. A
// receiver leases what it reads and renews its leases while it runs; when a
// receiver dies, its entries are taken over by the others once LeaseTimeout
// has passed, and handled again. Handling is therefore at least once: a
// receiver that stalls longer than LeaseTimeout without dying may see its
// events handled a second time elsewhere. Without failures each event is
// handled once.
//
// Dedup keys live in Redis too, stored in the same atomic step as the
// delivery, so a repeat reaching another receiver is suppressed, and a key
// exists only for a delivery that was stored. Catch-up checkpoints are kept
// in Redis as well.
//
// Order: the deliveries of one partition (one issue, merge request or build)
// are handed out one at a time, in the order they were stored, across all
// receivers: a delivery is leased only after every earlier delivery of its
// partition was acked or dead-lettered. A delivery whose callback is retried
// holds back the later ones of its partition. When a lease is taken over from
// a receiver that stalled rather than died, the stalled receiver's callback
// may still be running while the next delivery of that partition starts; no
// lease-based queue can rule that out.
//
// Durability is Redis's: Put returns once Redis has the delivery in memory.
// Run Redis with appendonly yes and appendfsync always so that a Redis
// restart keeps what the receivers answered 200. With appendfsync everysec
// a crash of a busy Redis can drop its last writes, and with snapshots
// alone everything since the last snapshot: the receivers then detect a
// loss (see Loss detection) and catch up.
//
// Faults of the engine:
//   - A stream or consumer group found missing is created again on the spot
//     by whichever receiver finds it, and counted in Faults. A queue opened
//     with Options.NoCreate, as tools that inspect a queue open it, never
//     creates them: it reports ErrNoQueue instead.
//   - Put returns when its context ends, even while Redis is stalled, so the
//     Handler's store deadline holds. Give the client short timeouts anyway
//     (ReadTimeout and WriteTimeout of a second or two, and
//     ContextTimeoutEnabled), so that the write cut short does not hold a
//     connection for long.
//   - A loss of the engine's state (Redis restarted with an empty data set,
//     from an older snapshot or from an append-only file cut short, or a
//     failover to a replica that lagged) is detected within CheckInterval,
//     logged at error level, counted, and reported on Losses with a time
//     from which a catch-up recovers what was lost; the Handler answers it
//     with that catch-up. See Loss detection below.
//   - Each stored delivery carries CRC-32C checksums of its metadata, body
//     and record. One that fails is never handed to a callback: it is
//     dead-lettered with a reason naming the damaged part, logged and
//     counted. A damaged dedup key counts as absent.
//
// # Loss detection
//
// Every CheckInterval, and at once when a Put sees a sign of loss, each
// receiver checks the data set. It reports a loss when:
//   - the epoch, a random marker the first receiver writes, is gone or
//     changed: the data set is not the one written to (restarted empty).
//     Every running receiver reports it;
//   - a dedup key it looks for is missing. A Put writes its delivery's
//     dedup key in the same atomic step as the delivery, and the key lasts
//     DedupWindow, so a missing key means the data set went back to before
//     that delivery was stored. Nothing written later brings the key back,
//     but the same delivery stored again. A receiver looks for the keys of
//     the deliveries it stored since its last check; of the newest one (in
//     the order of writes) its last good check found, which a data set that
//     went back before any older one lacks too; and of the newest delivery
//     pending at its last good check, whoever stored it. So each receiver
//     that stored a lost delivery reports the loss, whatever any receiver,
//     old or new, stored after it;
//   - the delivery sequence is below the highest id it has seen. Later
//     Puts can hide this sign; the keys cannot be hidden.
//
// Its report starts from the last good check whose keys the data set
// still holds, and whose sequence it is not below (the last one at all,
// for an empty data set): the earliest
// of the arrival of the oldest delivery then pending (or the check's
// start, if none was) and of the arrivals of the deliveries this receiver
// stored after that check, less DeliveryLag, rounded down to the second.
// It covers every delivery this receiver stored after that check. It
// covers the other lost deliveries (pending at that check, or stored after
// it by other receivers) when each was stored within DeliveryLag of its
// arrival, by clocks that agree within that.
//
// Limits:
//   - A key is looked for only while younger than half of DedupWindow,
//     less 30 s (3.5 days, by default): a data set that went back further
//     than that past a receiver's last stored delivery is not detected by
//     that receiver's keys. A delivery with no dedup key (DedupWindow
//     negative, or an empty Key) is seen only through the epoch and the
//     sequence, which later Puts can hide.
//   - Redis must keep the keys until they expire: a key evicted
//     (maxmemory-policy other than noeviction) or deleted by hand is
//     reported as a loss.
//   - What a receiver knows is kept in memory. A receiver started again
//     knows nothing of what it stored before: when the data set goes back
//     while it is down, the loss is reported by the receivers that run
//     through it if it went back before the newest delivery pending at
//     their last check, or before one of their own; the deliveries the
//     stopped receiver stored after the last check of every running
//     receiver are lost unreported. A loss while no receiver runs is not
//     detected: run webhook/catchup with a Since at start to cover it.
//
// All keys share one hash tag (the Prefix), so the queue lives on one Redis
// Cluster shard and its scripts stay atomic.
package redisqueue

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/collabsvc/collab/webhook"
	"github.com/redis/go-redis/v9"
)

// Options configure a Queue. Receivers sharing a queue must agree on Prefix,
// Group and DedupWindow.
type Options struct {
	// Prefix starts every key of the queue. Default "{collab:webhook}:".
	// Keep it inside braces so that Redis Cluster puts every key on one
	// shard.
	Prefix string
	// Group is the stream's consumer group. Default "receivers".
	Group string
	// Consumer names this receiver within the group; it must be unique
	// among the running receivers. A receiver restarted under the same name
	// resumes its own leases at once instead of after LeaseTimeout. Default:
	// the host name, the process id and a random suffix.
	Consumer string
	// LeaseTimeout is how long a dead receiver's leases last before another
	// receiver takes them over. Leases are renewed every third of it.
	// Default 30 s.
	LeaseTimeout time.Duration
	// DedupWindow is how long a dedup key is kept. Catch-up after downtime
	// relies on it to skip events already handled, so keep it longer than
	// the downtime you want to survive. Default webhook.DefaultDedupWindow;
	// negative turns duplicate suppression off.
	DedupWindow time.Duration
	// MaxPending bounds the deliveries waiting or being handled; Put answers
	// webhook.ErrQueueFull beyond it. Default 0, no bound.
	MaxPending int64
	// Prefetch is how many deliveries a receiver reads ahead of its
	// workers. Default 16.
	Prefetch int
	// PollInterval is how often a receiver with nothing to do looks for new
	// deliveries and for partitions freed by other receivers. Default 100 ms.
	PollInterval time.Duration
	// CheckInterval is how often a receiver checks that Redis still holds
	// the queue's state (see Loss detection). Default 1 s.
	CheckInterval time.Duration
	// DeliveryLag is how long after a change the server may deliver its
	// webhook, plus the clock skew between receivers and server, and the
	// time a receiver takes to store a delivery. A loss is reported that
	// much before the last known-good time, so that the catch-up also
	// finds the changes delivered late, just before the loss. Default 1
	// min.
	DeliveryLag time.Duration
	// Logger, when set, receives a record for each loss of the engine's
	// state, each consumer group created again and each damaged entry.
	Logger *slog.Logger
	// NoCreate opens a queue that exists already, for tools that inspect
	// it: New writes nothing (it creates no key, and does not register
	// Consumer in the group), and a Prefix or Group that holds no queue is
	// an error wrapping ErrNoQueue, where New would otherwise start an
	// empty queue there. Later on too, the queue never creates its state
	// again: a stream or group found missing makes Check, Take and Put fail
	// with ErrNoQueue. Consumer's earlier leases are not resumed at once
	// but taken over after LeaseTimeout, like a dead receiver's.
	NoCreate bool
}

// ErrNoQueue means that, with Options.NoCreate, the stream or the consumer
// group of the queue does not exist.
var ErrNoQueue = errors.New("redisqueue: no queue")

// Queue is a webhook.Queue in Redis Streams. It is safe for concurrent use.
type Queue struct {
	rdb    redis.UniversalClient
	o      Options
	stream string
	keys   []string

	taker chan struct{} // one Take at a time reads and leases
	wake  chan struct{} // a local settle or Put may have made a delivery ready

	mu        sync.Mutex
	held      map[string]*entry // by stream entry id: read by this receiver and not yet settled
	byID      map[uint64]*entry
	lastClaim time.Time

	watch // the engine's state, see watch.go

	closeOnce sync.Once
	closed    chan struct{}
	loops     sync.WaitGroup
}

// entry is a stream entry in this receiver's lease.
type entry struct {
	id     uint64
	sid    string
	at     time.Time // not ready before
	leased bool      // handed to a worker
	lost   bool      // taken over by another receiver
}

var _ webhook.Queue = (*Queue)(nil)

// New returns a Queue using rdb, creating the stream and its consumer group
// when missing (unless Options.NoCreate). The caller keeps ownership of
// rdb: Close does not close it.
func New(ctx context.Context, rdb redis.UniversalClient, opts Options) (*Queue, error) {
	if rdb == nil {
		return nil, errors.New("redisqueue: nil client")
	}
	if opts.LeaseTimeout < 0 || opts.MaxPending < 0 || opts.Prefetch < 0 || opts.PollInterval < 0 || opts.CheckInterval < 0 ||
		opts.DeliveryLag < 0 {
		return nil, errors.New("redisqueue: negative option")
	}
	setDefault(&opts.Prefix, "{collab:webhook}:")
	setDefault(&opts.Group, "receivers")
	setDefault(&opts.LeaseTimeout, 30*time.Second)
	setDefault(&opts.DedupWindow, webhook.DefaultDedupWindow)
	setDefault(&opts.Prefetch, 16)
	setDefault(&opts.PollInterval, 100*time.Millisecond)
	setDefault(&opts.CheckInterval, time.Second)
	setDefault(&opts.DeliveryLag, time.Minute)
	if opts.LeaseTimeout < 3*opts.PollInterval {
		return nil, fmt.Errorf("redisqueue: LeaseTimeout %v must be at least three PollIntervals (%v)", opts.LeaseTimeout, opts.PollInterval)
	}
	if opts.Consumer == "" {
		host, _ := os.Hostname()
		var b [4]byte
		_, _ = rand.Read(b[:])
		opts.Consumer = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
	}
	q := &Queue{
		rdb:    rdb,
		o:      opts,
		stream: opts.Prefix + "stream",
		taker:  make(chan struct{}, 1),
		wake:   make(chan struct{}, 1),
		held:   map[string]*entry{},
		byID:   map[uint64]*entry{},
		closed: make(chan struct{}),
	}
	q.keys = []string{q.stream}
	q.watch.init()
	if err := q.check(ctx); err != nil {
		if !errors.Is(err, ErrNoQueue) {
			err = fmt.Errorf("redisqueue: opening the queue: %w", err)
		}
		return nil, err
	}
	// What this consumer leased before a restart comes first. Reading
	// registers the consumer in the group, a write NoCreate rules out.
	if !opts.NoCreate {
		if err := q.read(ctx, "0", 0, -1); err != nil {
			return nil, err
		}
	}
	q.loops.Add(2)
	// Leases are renewed every third of their timeout; the engine's state is
	// checked every CheckInterval, and at once when a sign of loss is seen.
	go q.loop(q.o.LeaseTimeout/3, nil, q.renew)
	go q.loop(q.o.CheckInterval, q.kick, q.checkNow)
	return q, nil
}

func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// Consumer returns this receiver's name in the consumer group.
func (q *Queue) Consumer() string { return q.o.Consumer }

// Put implements webhook.Queue. The delivery, its dedup key and its stream
// entry are stored in one atomic step, and MaxPending is checked within it.
// Put returns when ctx ends even if Redis has not answered (a stalled
// server): the write may still land later, and a delivery sent again is
// then a duplicate.
func (q *Queue) Put(ctx context.Context, d *webhook.Delivery) error {
	if err := q.open(); err != nil {
		return err
	}
	s, err := encode(d)
	if err != nil {
		return err
	}
	key, stateKey := d.Key, d.StateKey
	if q.o.DedupWindow < 0 {
		key, stateKey = "", ""
	}
	seen, recoveries, arrived := q.maxSeq.Load(), q.recoveries.Load(), d.ReceivedAt
	if arrived.IsZero() {
		arrived = time.Now()
	}
	res, err := bounded(ctx, func(ctx context.Context) ([]any, error) {
		return putScript.Run(ctx, q.rdb, q.keys, q.o.Prefix, key, q.o.DedupWindow.Milliseconds(), q.o.MaxPending,
			d.Partition, stateKey, dedupMark(key), dedupMark(stateKey), s.m, s.b, s.r, s.c, q.o.NoCreate,
			*q.anchorKey.Load()).Slice()
	})
	if err == nil && len(res) != 4 {
		err = fmt.Errorf("unexpected reply %v", res)
	}
	if err != nil {
		q.noGroup(err)
		return fmt.Errorf("redisqueue: storing the delivery: %w", err)
	}
	id, _ := res[0].(int64)
	epoch, _ := res[1].(string)
	if n, _ := res[2].(int64); n == 1 {
		q.damagedEntry("dedup key", "its value is not a mark; it was written again", "key", key)
	}
	gone, _ := res[3].(int64)
	q.observe(epoch, seen, recoveries, id, gone == 1)
	switch id {
	case -1:
		return webhook.ErrQueueFull
	case -2:
		return webhook.ErrDuplicate
	case -3:
		return q.missing(state{})
	}
	d.ID = uint64(id)
	q.stored(key, id, arrived)
	q.signal()
	return nil
}

// bounded returns f's result, or ctx's error as soon as ctx ends: a client
// whose timeouts ignore the context (go-redis without
// ContextTimeoutEnabled) must not hold the caller past its deadline. f
// then finishes in the background, within the client's own timeouts.
func bounded[T any](ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	if ctx.Done() == nil {
		return f(ctx)
	}
	type result struct {
		v   T
		err error
	}
	c := make(chan result, 1)
	go func() {
		v, err := f(ctx)
		c <- result{v, err}
	}()
	select {
	case r := <-c:
		return r.v, r.err
	case <-ctx.Done():
		select {
		case r := <-c:
			return r.v, r.err
		default:
			var zero T
			return zero, ctx.Err()
		}
	}
}

// Take implements webhook.Queue. It hands out this receiver's oldest ready
// lease, reading new deliveries and taking over expired leases of other
// receivers as needed. A stream or consumer group found missing is created
// again on the spot.
func (q *Queue) Take(ctx context.Context) (*webhook.Delivery, error) {
	select {
	case q.taker <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-q.closed:
		return nil, webhook.ErrQueueClosed
	}
	defer func() { <-q.taker }()
	for {
		if err := q.open(); err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		d, more, err := q.takeOnce(ctx)
		if d != nil {
			return d, nil
		}
		if err != nil {
			if !q.noGroup(err) {
				return nil, err
			}
			if err := q.check(ctx); err != nil {
				return nil, err
			}
			continue
		}
		if more {
			continue
		}
		t := time.NewTimer(q.o.PollInterval)
		select {
		case <-q.wake:
		case <-t.C:
		case <-ctx.Done():
		case <-q.closed:
		}
		t.Stop()
	}
}

// takeOnce takes over expired leases, leases a ready delivery, or reads new
// ones; more reports that reading found some, to be looked at at once.
func (q *Queue) takeOnce(ctx context.Context) (d *webhook.Delivery, more bool, err error) {
	if err := q.claim(ctx); err != nil {
		return nil, false, err
	}
	d, waiting, err := q.lease(ctx)
	if d != nil || err != nil || waiting >= q.o.Prefetch {
		return d, false, err
	}
	block := q.o.PollInterval
	if waiting > 0 {
		block = -1 // do not sit in Redis while a local settle may free one
	}
	n := q.heldLen()
	if err := q.read(ctx, ">", int64(q.o.Prefetch-waiting), block); err != nil {
		return nil, false, err
	}
	return nil, q.heldLen() > n || block > 0, nil
}

// lease leases the oldest ready entry of this receiver, if any; waiting
// counts the entries held and not handed out.
func (q *Queue) lease(ctx context.Context) (d *webhook.Delivery, waiting int, err error) {
	now := time.Now()
	cands, waiting := q.candidates(now)
	if len(cands) == 0 {
		return nil, waiting, nil
	}
	args := []any{q.o.Prefix, now.UnixMilli()}
	for _, e := range cands {
		args = append(args, e.id, e.sid)
	}
	res, err := leaseScript.Run(ctx, q.rdb, q.keys, args...).Slice()
	if err == nil && len(res) != 5 && len(res) != 10 {
		err = fmt.Errorf("unexpected reply %v", res)
	}
	if err != nil {
		return nil, waiting, fmt.Errorf("redisqueue: leasing: %w", err)
	}
	if gone, _ := res[4].([]any); len(gone) > 0 {
		if err := q.forget(ctx, gone); err != nil {
			return nil, waiting, err
		}
	}
	if len(res) == 5 {
		return nil, waiting, nil
	}
	d, err = q.leased(ctx, res)
	if d == nil {
		return nil, waiting - 1, err
	}
	return d, waiting - 1, nil
}

// candidates lists the entries held and ready at now, in arrival order;
// waiting counts the entries held and not handed out.
func (q *Queue) candidates(now time.Time) (cands []*entry, waiting int) {
	q.mu.Lock()
	for _, e := range q.held {
		if !e.leased && !e.lost {
			waiting++
			if !now.Before(e.at) {
				cands = append(cands, e)
			}
		}
	}
	q.mu.Unlock()
	slices.SortFunc(cands, func(a, b *entry) int { return compareSID(a.sid, b.sid) })
	return cands, waiting
}

// leased decodes the delivery the lease script handed out, and marks it
// leased. A damaged one is dead-lettered instead, with the damage as its
// reason, and nil is returned.
func (q *Queue) leased(ctx context.Context, res []any) (*webhook.Delivery, error) {
	id, _ := res[0].(int64)
	n, _ := res[1].(int64)
	sid, _ := res[2].(string)
	str := func(i int) string { v, _ := res[i].(string); return v }
	d, err := decode(stored{m: str(5), b: str(6), r: str(7), c: str(8), j: str(9)})
	if err != nil {
		// Out of the way, for a person to look at; the others go on.
		reason := fmt.Sprintf("redisqueue: delivery %d is damaged: %v", id, err)
		q.damagedEntry("delivery", err.Error(), "id", id, "attempt", n)
		q.damagedDeliveries.Add(1)
		if err := deadScript.Run(ctx, q.rdb, q.keys, q.o.Prefix, q.o.Group, id, reason, sid).Err(); err != nil {
			return nil, fmt.Errorf("redisqueue: dead-lettering damaged delivery %d: %w", id, err)
		}
		q.release(uint64(id))
		return nil, nil
	}
	d.ID, d.Attempt, d.LastError = uint64(id), int(n), str(3)
	q.mu.Lock()
	if e := q.byID[d.ID]; e != nil && e.sid == sid {
		e.leased = true
	} else {
		// Renewal found it taken over while it was being leased: hand it out
		// anyway, as the lease script counted the attempt.
		q.byID[d.ID] = &entry{id: d.ID, sid: sid, leased: true, lost: true}
	}
	q.mu.Unlock()
	return d, nil
}

// forget drops entries whose deliveries were settled elsewhere, and acks
// them so they leave this receiver's pending list.
func (q *Queue) forget(ctx context.Context, sids []any) error {
	ids := make([]string, 0, len(sids))
	q.mu.Lock()
	for _, s := range sids {
		sid, _ := s.(string)
		if e := q.held[sid]; e != nil {
			q.drop(e)
		}
		ids = append(ids, sid)
	}
	q.mu.Unlock()
	if err := q.rdb.XAck(ctx, q.stream, q.o.Group, ids...).Err(); err != nil {
		return fmt.Errorf("redisqueue: dropping settled entries: %w", err)
	}
	return nil
}

// read adds entries of the stream to this receiver's lease: new ones (">")
// or, at start, its own pending ones ("0").
func (q *Queue) read(ctx context.Context, from string, count int64, block time.Duration) error {
	res, err := q.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{
		Group: q.o.Group, Consumer: q.o.Consumer, Streams: []string{q.stream, from}, Count: count, Block: block,
	}).Result()
	if errors.Is(err, redis.Nil) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("redisqueue: reading the stream: %w", err)
	}
	for _, s := range res {
		q.hold(ctx, s.Messages)
	}
	return nil
}

// claim takes over the entries whose lease expired, at most once per
// PollInterval.
func (q *Queue) claim(ctx context.Context) error {
	if time.Since(q.lastClaim) < q.o.PollInterval {
		return nil
	}
	q.lastClaim = time.Now()
	start := "0-0"
	for {
		msgs, next, err := q.rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{
			Stream: q.stream, Group: q.o.Group, Consumer: q.o.Consumer, MinIdle: q.o.LeaseTimeout,
			Start: start, Count: 100,
		}).Result()
		if err != nil {
			return fmt.Errorf("redisqueue: taking over expired leases: %w", err)
		}
		q.hold(ctx, msgs)
		if next == "0-0" || next == "" {
			return q.forgetConsumers(ctx)
		}
		start = next
	}
}

// forgetConsumers removes from the group the receivers that hold nothing
// and have not been heard from for a lease timeout, so that receivers with
// generated names do not pile up. A live receiver removed by mistake is
// added again by its next read.
func (q *Queue) forgetConsumers(ctx context.Context) error {
	consumers, err := q.rdb.XInfoConsumers(ctx, q.stream, q.o.Group).Result()
	if err != nil {
		return fmt.Errorf("redisqueue: listing receivers: %w", err)
	}
	for _, c := range consumers {
		if c.Name != q.o.Consumer && c.Pending == 0 && c.Idle > q.o.LeaseTimeout {
			if err := q.rdb.XGroupDelConsumer(ctx, q.stream, q.o.Group, c.Name).Err(); err != nil {
				return fmt.Errorf("redisqueue: removing receiver %q: %w", c.Name, err)
			}
		}
	}
	return nil
}

// hold records entries now leased to this receiver. Entries with no id were
// deleted from the stream and only linger in the pending list.
func (q *Queue) hold(ctx context.Context, msgs []redis.XMessage) {
	var stale []string
	q.mu.Lock()
	defer func() {
		q.mu.Unlock()
		if len(stale) > 0 {
			q.rdb.XAck(ctx, q.stream, q.o.Group, stale...)
		}
	}()
	for _, m := range msgs {
		s, _ := m.Values["id"].(string)
		id, err := strconv.ParseUint(s, 10, 64)
		if err != nil || id == 0 {
			stale = append(stale, m.ID)
			continue
		}
		if e := q.held[m.ID]; e != nil {
			e.lost = false // taken back after a takeover
			continue
		}
		e := &entry{id: id, sid: m.ID}
		q.held[m.ID] = e
		q.byID[id] = e
	}
}

func (q *Queue) heldLen() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.held)
}

// Ack implements webhook.Queue. Acking a delivery that another receiver took
// over and settled already is not an error.
func (q *Queue) Ack(ctx context.Context, id uint64) error {
	return q.settle(id, "acking", func(sid string) error {
		return ackScript.Run(ctx, q.rdb, q.keys, q.o.Prefix, q.o.Group, id, sid).Err()
	}, func() { q.release(id) })
}

// Retry implements webhook.Queue. The delivery stays in this receiver's
// lease until it is ready again.
func (q *Queue) Retry(ctx context.Context, id uint64, at time.Time, reason string) error {
	return q.settle(id, "retrying", func(sid string) error {
		return retryScript.Run(ctx, q.rdb, q.keys, q.o.Prefix, id, at.UnixMilli(), reason, sid).Err()
	}, func() { q.unlease(id, at) })
}

// DeadLetter implements webhook.Queue.
func (q *Queue) DeadLetter(ctx context.Context, id uint64, reason string) error {
	return q.settle(id, "dead-lettering", func(sid string) error {
		return deadScript.Run(ctx, q.rdb, q.keys, q.o.Prefix, q.o.Group, id, reason, sid).Err()
	}, func() { q.release(id) })
}

// settle runs the script that settles id, a delivery this receiver leased,
// with its stream entry id, then done. When Redis fails, the lease ends and
// this receiver hands the delivery out again after PollInterval; the error
// says what it was doing.
func (q *Queue) settle(id uint64, doing string, script func(sid string) error, done func()) error {
	e, err := q.leaseOf(id)
	if err != nil {
		return err
	}
	if err := script(e.sid); err != nil {
		q.unlease(id, time.Now().Add(q.o.PollInterval))
		return fmt.Errorf("redisqueue: %s delivery %d: %w", doing, id, err)
	}
	done()
	return nil
}

// unlease ends a worker's lease of id; this receiver hands it out again at
// at, unless another took it over. Ack, Retry and DeadLetter call it when
// Redis failed to settle id too: a lease no worker holds would be renewed
// for good and hold back its partition.
func (q *Queue) unlease(id uint64, at time.Time) {
	q.mu.Lock()
	if e := q.byID[id]; e != nil && e.leased {
		e.leased, e.at = false, at
		if e.lost {
			q.drop(e)
		}
	}
	q.mu.Unlock()
	q.signal()
}

func (q *Queue) leaseOf(id uint64) (*entry, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if e := q.byID[id]; e != nil && e.leased {
		return e, nil
	}
	return nil, fmt.Errorf("redisqueue: delivery %d is not leased by this receiver: %w", id, webhook.ErrNotLeased)
}

func (q *Queue) release(id uint64) {
	q.mu.Lock()
	if e := q.byID[id]; e != nil {
		q.drop(e)
	}
	q.mu.Unlock()
	q.signal()
}

// drop forgets e. The caller holds q.mu.
func (q *Queue) drop(e *entry) {
	delete(q.held, e.sid)
	delete(q.byID, e.id)
}

// lose marks e taken over by another receiver, or forgets it when no
// worker holds it: a worker settles its own, or finds it gone. The caller
// holds q.mu.
func (q *Queue) lose(e *entry) {
	if e.leased {
		e.lost = true
		return
	}
	q.drop(e)
}

// signal wakes a Take waiting for a delivery to become ready.
func (q *Queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// DeadLetters implements webhook.Queue.
func (q *Queue) DeadLetters(ctx context.Context) ([]*webhook.Delivery, error) {
	ids, err := q.rdb.ZRange(ctx, q.o.Prefix+"dead", 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("redisqueue: listing dead letters: %w", err)
	}
	cmds, err := q.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, id := range ids {
			p.HMGet(ctx, q.o.Prefix+"d:"+id, "n", "e", "m", "b", "r", "c", "j")
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("redisqueue: listing dead letters: %w", err)
	}
	out := make([]*webhook.Delivery, 0, len(ids))
	for i, c := range cmds {
		v := c.(*redis.SliceCmd).Val()
		str := func(i int) string { s, _ := v[i].(string); return s }
		s := stored{m: str(2), b: str(3), r: str(4), c: str(5), j: str(6)}
		if s.m == "" && s.j == "" {
			continue // deleted meanwhile
		}
		d, err := decode(s)
		if err != nil {
			d = new(webhook.Delivery) // a damaged one is listed with its id and error
		}
		d.ID, _ = strconv.ParseUint(ids[i], 10, 64)
		d.Attempt, _ = strconv.Atoi(str(0))
		d.LastError = str(1)
		out = append(out, d)
	}
	return out, nil
}

// Requeue implements webhook.Queue. The delivery gets a new ID, as if it
// arrived now.
func (q *Queue) Requeue(ctx context.Context, id uint64) error {
	return q.deadOp(ctx, requeueScript, "requeueing", id)
}

// Delete implements webhook.Queue.
func (q *Queue) Delete(ctx context.Context, id uint64) error {
	return q.deadOp(ctx, deleteScript, "deleting", id)
}

func (q *Queue) deadOp(ctx context.Context, s *redis.Script, what string, id uint64) error {
	n, err := s.Run(ctx, q.rdb, q.keys, q.o.Prefix, id).Int()
	if err != nil {
		return fmt.Errorf("redisqueue: %s dead letter %d: %w", what, id, err)
	}
	if n == 0 {
		return fmt.Errorf("redisqueue: no dead letter %d: %w", id, webhook.ErrNotDeadLettered)
	}
	q.signal()
	return nil
}

// WaitIdle implements webhook.IdleWaiter: it waits until every delivery
// stored by any receiver is settled, acked or dead-lettered, polling every
// PollInterval.
func (q *Queue) WaitIdle(ctx context.Context) error {
	for {
		n, err := q.rdb.XLen(ctx, q.stream).Result()
		if err != nil {
			return fmt.Errorf("redisqueue: counting pending deliveries: %w", err)
		}
		if n == 0 {
			return nil
		}
		t := time.NewTimer(q.o.PollInterval)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}

// Seen implements webhook.Queue. A dedup key whose value is damaged counts
// as not seen: the delivery is stored again, and at worst handled twice.
func (q *Queue) Seen(ctx context.Context, key string) (bool, error) {
	v, err := q.rdb.Get(ctx, q.o.Prefix+"k:"+key).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("redisqueue: looking up a dedup key: %w", err)
	case !soundMark(key, v):
		q.damagedEntry("dedup key", "its value is not a mark; taken as not seen", "key", key)
		return false, nil
	}
	return true, nil
}

// Checkpoint implements webhook.Queue.
func (q *Queue) Checkpoint(ctx context.Context, name string) ([]byte, error) {
	v, err := q.rdb.HGet(ctx, q.o.Prefix+"cp", name).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("redisqueue: reading checkpoint %q: %w", name, err)
	}
	return v, nil
}

// SetCheckpoint implements webhook.Queue. Redis keeps it as durably as it is
// configured to (appendonly, fsync policy).
func (q *Queue) SetCheckpoint(ctx context.Context, name string, value []byte) error {
	if err := q.rdb.HSet(ctx, q.o.Prefix+"cp", name, value).Err(); err != nil {
		return fmt.Errorf("redisqueue: writing checkpoint %q: %w", name, err)
	}
	return nil
}

// Close stops renewing this receiver's leases; what it holds is taken over
// by another receiver after LeaseTimeout, or at once by a receiver started
// under the same Consumer name. Blocked Takes return webhook.ErrQueueClosed.
// Close does not close the Redis client.
func (q *Queue) Close() error {
	q.closeOnce.Do(func() {
		close(q.closed)
		q.loops.Wait()
	})
	return nil
}

func (q *Queue) open() error {
	select {
	case <-q.closed:
		return webhook.ErrQueueClosed
	default:
		return nil
	}
}

// loop runs fn every period, and whenever kick fires, until Close.
func (q *Queue) loop(period time.Duration, kick <-chan struct{}, fn func()) {
	defer q.loops.Done()
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-q.closed:
			return
		case <-t.C:
		case <-kick:
		}
		fn()
	}
}

// renew keeps this receiver's leases from expiring while it runs.
func (q *Queue) renew() {
	q.mu.Lock()
	args := []any{q.o.Group, q.o.Consumer}
	for sid, e := range q.held {
		if !e.lost {
			args = append(args, sid)
		}
	}
	q.mu.Unlock()
	if len(args) == 2 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), q.o.LeaseTimeout/3)
	defer cancel()
	lost, err := renewScript.Run(ctx, q.rdb, q.keys, args...).StringSlice()
	if err != nil {
		return // the next round tries again; the lease lasts three rounds
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, sid := range lost {
		if e := q.held[sid]; e != nil {
			q.lose(e) // the new owner may run it again
		}
	}
}

// compareSID orders stream entry ids ("ms-seq").
func compareSID(a, b string) int {
	am, as := splitSID(a)
	bm, bs := splitSID(b)
	if am != bm {
		return cmp.Compare(am, bm)
	}
	return cmp.Compare(as, bs)
}

func splitSID(s string) (ms, seq uint64) {
	m, n, _ := strings.Cut(s, "-")
	ms, _ = strconv.ParseUint(m, 10, 64)
	seq, _ = strconv.ParseUint(n, 10, 64)
	return ms, seq
}
