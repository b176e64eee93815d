package redisqueue

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/collabsvc/collab/webhook"
	"github.com/redis/go-redis/v9"
)

// The watch on the engine's state. Redis can lose what it acknowledged: a
// restart with an empty data set or from older files, or a failover to a
// replica that lagged. Three things tell it:
//   - the epoch, a random value the first receiver writes; a data set
//     without it, or with another, is not the one this receiver wrote to;
//   - dedup keys. A Put writes one in the same atomic step as its delivery,
//     and it lasts DedupWindow: a key missing within that time means the
//     data set lost that Put. No later write brings it back, but the same
//     delivery stored again, which is then handled. Each check looks for
//     the keys of this receiver's Puts since the last check; for its
//     anchor, the key of the newest of its deliveries (by id, the order of
//     writes) that the last good check found, so that a data set that went
//     back before an older one lacks the anchor too; and for the key of the
//     newest delivery pending at the last good check, whoever stored it, so
//     that a data set that went back before it, losing what a receiver
//     stopped since had stored after it, is noticed too;
//   - seq, the last delivery id given out, which only grows; a smaller
//     value than this receiver saw means the data set went back in time.
//     Unlike the keys, this sign can be hidden: later Puts of any receiver
//     carry seq past what this one saw.
//
// Each receiver checks every CheckInterval, and at once when a Put sees a
// sign of loss. After a good check at time t, every delivery that arrived
// before the oldest one still pending (or before t, when none is) has been
// settled; that time is the receiver's "known good" mark. A data set that
// still holds the newest delivery pending then lost, of what was not yet
// handled, only deliveries stored after the check. The mark is kept in
// memory, with the seq, the anchor and the newest pending delivery of each
// recent good check and the earliest arrival among the Puts it found first.
// A loss is reported from the last good check whose seq, anchor and newest
// pending delivery the data set still holds (or the first remembered): the
// earliest of its mark and of the arrivals of the Puts found after it, so a
// catch-up from there recovers what the engine forgot.

// maxGood is how many good checks a receiver remembers: the first (since
// New or the last loss) and the latest others, for a data set that went
// back further than the last one.
const maxGood = 256

// maxFresh is how many Puts since the last check ask for the next at once,
// which keeps the keys a check looks for few.
const maxFresh = 4096

// good is one good check: the seq then, the known-good mark, the anchor,
// the newest pending delivery, and the earliest arrival among this
// receiver's Puts it found first.
type good struct {
	seq            int64
	mark           time.Time
	anchor, newest put       // zero for none
	fresh          time.Time // zero for none
}

// put is a delivery this receiver stored, whose dedup key checks look for.
type put struct {
	key     string
	id      int64     // its delivery id: ids follow the order of writes
	arrived time.Time // when the delivery arrived
	at      time.Time // when it was stored: its key lasts DedupWindow from about then
}

// watch is the engine's state as this receiver knows it.
type watch struct {
	checkMu sync.Mutex // one check at a time; guards epoch, goods, anchor, newest and pending
	epoch   string
	goods   []good    // oldest first
	anchor  put       // the newest of this receiver's Puts the last good check found
	newest  put       // the newest delivery pending at the last good check
	pending time.Time // a loss detected and not yet told, if not zero

	putMu sync.Mutex
	fresh []put // this receiver's Puts since the last check took them

	anchorKey atomic.Pointer[string] // anchor.key, for Put's look without the lock

	maxSeq atomic.Int64 // the highest delivery id seen
	backTo atomic.Int64 // the lowest id a Put got at or below one seen before; 0 for none
	// recoveries counts the recoveries after a loss: what a Put saw across
	// one belongs to the loss recovered from, not to another.
	recoveries atomic.Int64
	epochs     atomic.Value // string: epoch, for Put's look without the lock
	kick       chan struct{}

	losses chan time.Time

	lossCount, damaged, damagedDeliveries, regrouped atomic.Int64
}

func (w *watch) init() {
	w.kick, w.losses = make(chan struct{}, 1), make(chan time.Time, 1)
	w.epochs.Store("")
	w.setAnchor(put{})
}

func (w *watch) setAnchor(a put) {
	w.anchor = a
	w.anchorKey.Store(&a.key)
}

// Faults counts what went wrong with the engine since New.
type Faults struct {
	// Losses counts the losses of the engine's state detected: the data set
	// was empty, lacked a delivery this receiver had stored, or was older
	// than what it had seen.
	Losses int64
	// Damaged counts stored entries that failed their checksum or did not
	// decode: deliveries (dead-lettered) and dedup keys (written again).
	Damaged int64
	// GroupsCreated counts the times the stream or its consumer group was
	// missing and was created again.
	GroupsCreated int64
}

// Faults returns this receiver's counts of engine faults.
func (q *Queue) Faults() Faults {
	return Faults{Losses: q.lossCount.Load(), Damaged: q.damaged.Load(), GroupsCreated: q.regrouped.Load()}
}

// Losses implements webhook.LossReporter. For each loss of the engine's
// state this receiver detects, it delivers a time before every lost
// delivery it can tell of (see Loss detection in the package doc): a
// catch-up from that time (catchup.OnLoss in package webhook/catchup)
// recovers the events the engine forgot, as far as the API tells them. A loss not yet
// received is merged with the next: the channel then holds the earlier
// time. The time is this receiver's clock, rounded down to the second as
// the API's times are.
func (q *Queue) Losses() <-chan time.Time { return q.losses }

// Check implements webhook.Queue: Redis answers within ctx, the stream and
// its group exist (they are created again if not), and MaxPending is not
// reached. It also runs the check for a loss of the engine's state (see
// Losses).
func (q *Queue) Check(ctx context.Context) error {
	if err := q.open(); err != nil {
		return err
	}
	_, err := bounded(ctx, func(ctx context.Context) (struct{}, error) { return struct{}{}, q.check(ctx) })
	if err != nil {
		return fmt.Errorf("redisqueue: checking the engine: %w", err)
	}
	if q.o.MaxPending > 0 {
		n, err := q.rdb.XLen(ctx, q.stream).Result()
		if err != nil {
			return fmt.Errorf("redisqueue: checking the engine: %w", err)
		}
		if n >= q.o.MaxPending {
			return fmt.Errorf("redisqueue: %d deliveries pending: %w", n, webhook.ErrQueueFull)
		}
	}
	return nil
}

// Stats implements webhook.Queue: the queue's depth, the arrival of its
// oldest pending delivery (by Redis's clock) and the number of dead
// letters, shared by every receiver; Damaged counts the damaged deliveries
// this receiver dead-lettered.
func (q *Queue) Stats(ctx context.Context) (webhook.QueueStats, error) {
	if err := q.open(); err != nil {
		return webhook.QueueStats{}, err
	}
	var n, dead *redis.IntCmd
	var first *redis.XMessageSliceCmd
	_, err := q.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		n = p.XLen(ctx, q.stream)
		first = p.XRangeN(ctx, q.stream, "-", "+", 1)
		dead = p.ZCard(ctx, q.o.Prefix+"dead")
		return nil
	})
	if err != nil {
		return webhook.QueueStats{}, fmt.Errorf("redisqueue: reading the queue's stats: %w", err)
	}
	st := webhook.QueueStats{Pending: int(n.Val()), DeadLetters: int(dead.Val()), Damaged: q.damagedDeliveries.Load()}
	if m := first.Val(); len(m) == 1 {
		st.Oldest = sidTime(m[0].ID)
	}
	return st, nil
}

// sidTime is the time a stream entry id names.
func sidTime(sid string) time.Time {
	ms, _ := splitSID(sid)
	return time.UnixMilli(int64(ms))
}

// checkNow runs a check on its own deadline; an unreachable engine is
// tried again next round.
func (q *Queue) checkNow() {
	ctx, cancel := context.WithTimeout(context.Background(), max(q.o.CheckInterval, time.Second))
	defer cancel()
	_ = q.check(ctx)
}

// observe looks at what a Put saw: the epoch, the id it got where seen was
// the highest id known before and recoveries the count of recoveries then,
// and whether the anchor was gone. A sign of loss asks for a check at once.
func (q *Queue) observe(epoch string, seen, recoveries, id int64, gone bool) {
	if id > 0 && id <= seen && recoveries == q.recoveries.Load() {
		// The data set went back: later Puts may carry seq past what this
		// receiver saw before the next check, so the evidence is kept.
		lower(&q.backTo, id)
		q.ask()
	}
	if gone || epoch != q.epochs.Load().(string) {
		q.ask()
	}
	raise(&q.maxSeq, id)
}

// stored records a delivery this receiver stored under the dedup key key,
// for the next check to look for; many ask for that check at once.
func (q *Queue) stored(key string, id int64, arrived time.Time) {
	if key == "" {
		return
	}
	q.putMu.Lock()
	q.fresh = append(q.fresh, put{key: key, id: id, arrived: arrived, at: time.Now()})
	n := len(q.fresh)
	q.putMu.Unlock()
	if n >= maxFresh {
		q.ask()
	}
}

// batch is what a check looks for: the dedup keys of the anchor, of the
// newest delivery pending at the last good check and of the Puts since the
// last check (puts, those still young enough to be looked for), and the
// earliest arrival among all of those Puts.
type batch struct {
	all, puts []put
	keys      []string
	arrived   time.Time
}

// takeFresh takes the Puts since the last check, at now. Keys that may
// have expired are not looked for.
func (q *Queue) takeFresh(now time.Time) batch {
	q.putMu.Lock()
	b := batch{all: q.fresh}
	q.fresh = nil
	q.putMu.Unlock()
	if !q.young(q.anchor, now) {
		q.setAnchor(put{})
	}
	for _, p := range []put{q.anchor, q.newest} {
		if p.key != "" && q.young(p, now) {
			b.keys = append(b.keys, p.key)
		}
	}
	for _, p := range b.all {
		b.arrived = minTime(b.arrived, p.arrived)
		if q.young(p, now) {
			b.puts = append(b.puts, p)
			b.keys = append(b.keys, p.key)
		}
	}
	return b
}

// giveBack returns the Puts of a check that failed, for the next.
func (q *Queue) giveBack(b batch) {
	q.putMu.Lock()
	q.fresh = append(b.all, q.fresh...)
	q.putMu.Unlock()
}

// young reports whether p's dedup key is surely still there at now, unless
// lost: it was stored less than half of DedupWindow, less 30 s, ago.
func (q *Queue) young(p put, now time.Time) bool {
	return now.Sub(p.at) < q.o.DedupWindow/2-30*time.Second
}

func (q *Queue) ask() {
	select {
	case q.kick <- struct{}{}:
	default:
	}
}

// noGroup reports whether err says that the stream or its group is
// missing, and asks for a check, which creates them again.
func (q *Queue) noGroup(err error) bool {
	if err == nil {
		return false
	}
	s := err.Error()
	if strings.Contains(s, "NOGROUP") || strings.Contains(s, "no such key") {
		q.ask()
		return true
	}
	return false
}

// state is the engine's state as checkScript reads it.
type state struct {
	epoch   string
	seq     int64  // the last delivery id given out
	oldest  string // the stream entry id of the oldest pending delivery; "" for none
	stream  bool   // the stream exists
	group   bool   // the consumer group exists
	missing int64  // how many of the dedup keys looked for are missing
	// The oldest and the newest pending deliveries, as far as their
	// metadata decodes (zero otherwise), with at their arrival.
	first, last put
}

// readState runs checkScript, looking for the dedup keys keys.
func (q *Queue) readState(ctx context.Context, keys []string) (state, error) {
	args := make([]any, 0, 2+len(keys))
	args = append(args, q.o.Prefix, q.o.Group)
	for _, k := range keys {
		args = append(args, k)
	}
	res, err := checkScript.Run(ctx, q.rdb, q.keys, args...).Slice()
	if err == nil && len(res) != 8 {
		err = fmt.Errorf("unexpected reply %v", res)
	}
	if err != nil {
		return state{}, err
	}
	var st state
	st.epoch, _ = res[0].(string)
	seq, _ := res[1].(string)
	st.seq, _ = strconv.ParseInt(seq, 10, 64)
	st.oldest, _ = res[2].(string)
	stream, _ := res[3].(int64)
	group, _ := res[4].(int64)
	st.stream, st.group = stream == 1, group == 1
	st.missing, _ = res[5].(int64)
	st.first, st.last = pendingPut(res[6]), pendingPut(res[7])
	return st, nil
}

// pendingPut is the delivery whose metadata (field m) is v, as far as it
// decodes; its key and arrival are all a check needs.
func pendingPut(v any) put {
	s, _ := v.(string)
	var m meta
	if s == "" || json.Unmarshal([]byte(s), &m) != nil {
		return put{}
	}
	return put{key: m.Key, arrived: m.ReceivedAt, at: m.ReceivedAt}
}

// check reads the engine's state, recovers what is missing (epoch, stream,
// group) and reports a loss when the state is not the one this receiver
// knew.
func (q *Queue) check(ctx context.Context) error {
	q.checkMu.Lock()
	defer q.checkMu.Unlock()
	start := time.Now()
	seen := q.maxSeq.Load() // before the read: a Put may raise it meanwhile
	b := q.takeFresh(start)
	st, err := q.readState(ctx, b.keys)
	if err != nil {
		q.giveBack(b)
		return err
	}
	mark, ok := q.judge(ctx, st, seen, start, b)
	if st.epoch == "" || !st.group || !q.pending.IsZero() {
		if err := q.restore(ctx, &st); err != nil {
			return err // the next check recovers, then reports the loss
		}
	}
	q.epoch = st.epoch
	q.epochs.Store(st.epoch)
	raise(&q.maxSeq, st.seq)
	g := good{seq: st.seq, mark: mark}
	q.newest = put{}
	if ok {
		g.anchor, g.newest, g.fresh = q.anchor, st.last, b.arrived
		q.newest = st.last
		for _, p := range b.puts {
			if p.id > g.anchor.id {
				g.anchor = p
			}
		}
		q.setAnchor(g.anchor)
	}
	q.goods = append(q.goods, g)
	if len(q.goods) > maxGood {
		// The first stays: a loss further back is reported from it.
		q.goods[2].fresh = minTime(q.goods[2].fresh, q.goods[1].fresh)
		q.goods = slices.Delete(q.goods, 1, 2)
	}
	return nil
}

// judge compares st with what this receiver knew, records a loss if it
// finds one, and returns the known-good mark of this check, which started
// at start when the highest id seen was seen and looked for b; ok is false
// after a loss.
func (q *Queue) judge(ctx context.Context, st state, seen int64, start time.Time, b batch) (mark time.Time, ok bool) {
	known := q.epoch != ""
	wiped := known && st.epoch != q.epoch
	held := st.seq // what the data set still holds
	if n := q.backTo.Swap(0); n > 0 {
		held = min(held, n-1)
	}
	back := known && !wiped && (held < seen || st.missing > 0)
	mark = minTime(start, st.first.arrived)
	if st.oldest != "" {
		mark = minTime(mark, sidTime(st.oldest))
	}
	if !wiped && !back {
		return mark, true
	}
	// Until the next check, the mark stays where the catch-up starts.
	mark = q.since(ctx, wiped, held, b)
	q.goods = append(q.goods[:0], good{mark: mark})
	q.setAnchor(put{})
	q.epoch = ""
	q.lost(mark, wiped, held, st.missing)
	return mark, false
}

// restore writes what the engine misses, or after a loss raises seq, and
// tells the pending loss. With NoCreate it writes nothing: a missing stream
// or group is an error wrapping ErrNoQueue, and a loss is told at once.
func (q *Queue) restore(ctx context.Context, st *state) error {
	if q.o.NoCreate {
		if err := q.missing(*st); err != nil {
			return err
		}
		q.tell()
		return nil
	}
	// After a loss, seq is raised too: ids stay unique, and no receiver
	// takes the ids it saw before for a second loss.
	epoch, err := q.recover(ctx, st.seq)
	if err != nil {
		return err
	}
	if !q.pending.IsZero() {
		// The ids Puts got before the recovery are evidence of the loss
		// just recovered from, not of a second one.
		q.recoveries.Add(1)
		q.backTo.Store(0)
	} else if q.epoch != "" {
		q.regrouped.Add(1)
		q.log(slog.LevelWarn, "redisqueue: the stream or its consumer group was missing; created again")
	}
	st.epoch, st.seq = epoch, max(st.seq, q.maxSeq.Load())
	q.tell()
	return nil
}

// missing returns an error wrapping ErrNoQueue that names what st lacks,
// or nil when the stream and its group exist.
func (q *Queue) missing(st state) error {
	switch {
	case !st.stream:
		return fmt.Errorf("%w: no stream %s (is the prefix %q right?)", ErrNoQueue, q.stream, q.o.Prefix)
	case !st.group:
		return fmt.Errorf("%w: the stream %s has no consumer group %q", ErrNoQueue, q.stream, q.o.Group)
	}
	return nil
}

// lower sets v to n if v is 0 or higher.
func lower(v *atomic.Int64, n int64) {
	for {
		m := v.Load()
		if (m != 0 && m <= n) || v.CompareAndSwap(m, n) {
			return
		}
	}
}

// raise sets v to n if n is higher.
func raise(v *atomic.Int64, n int64) {
	for {
		m := v.Load()
		if n <= m || v.CompareAndSwap(m, n) {
			return
		}
	}
}

// recover writes what a lost data set misses: the epoch, a seq no lower
// than any id this receiver saw, the stream and its group.
func (q *Queue) recover(ctx context.Context, seq int64) (string, error) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	epoch, err := recoverScript.Run(ctx, q.rdb, q.keys, q.o.Prefix, q.o.Group, hex.EncodeToString(b[:]),
		max(seq, q.maxSeq.Load())).Text()
	if err != nil {
		return "", fmt.Errorf("redisqueue: recreating the queue's state: %w", err)
	}
	return epoch, nil
}

// since is the known-good mark to catch up from after a loss, where this
// check looked for b. The good check it starts from is the last one for a
// wiped data set; for one that went back to seq, the last one whose seq,
// anchor and newest pending delivery it still holds (or the first
// remembered). It is the earliest of that check's mark and of the arrivals
// of this receiver's Puts found after it, or in b: the data set holds
// those found by that check, which are not newer than its anchor.
func (q *Queue) since(ctx context.Context, wiped bool, seq int64, b batch) time.Time {
	i := len(q.goods) - 1
	if !wiped {
		held := q.goodsHeld(ctx)
		for i > 0 && (q.goods[i].seq > seq || !held[i]) {
			i--
		}
	}
	since := minTime(q.goods[i].mark, b.arrived)
	for _, g := range q.goods[i+1:] {
		since = minTime(since, g.fresh)
	}
	return since
}

// goodsHeld reports, for each good check, whether the data set still holds
// the dedup keys of its anchor and of its newest pending delivery. A failed
// look holds none.
func (q *Queue) goodsHeld(ctx context.Context) []bool {
	held := make([]bool, len(q.goods))
	looks := make([]*redis.IntCmd, len(q.goods))
	_, err := q.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, g := range q.goods {
			if keys := q.dedupKeys(g.anchor, g.newest); len(keys) > 0 {
				looks[i] = p.Exists(ctx, keys...)
			}
		}
		return nil
	})
	if err != nil {
		return held
	}
	for i, g := range q.goods {
		held[i] = looks[i] == nil || looks[i].Val() == int64(len(q.dedupKeys(g.anchor, g.newest)))
	}
	return held
}

// dedupKeys are the Redis keys of the dedup keys of ps that have one.
func (q *Queue) dedupKeys(ps ...put) []string {
	var keys []string
	for _, p := range ps {
		if p.key != "" {
			keys = append(keys, q.o.Prefix+"k:"+p.key)
		}
	}
	return keys
}

// lost records a loss: logs, counts, forgets the leases it no longer has,
// and keeps it for tell.
func (q *Queue) lost(since time.Time, wiped bool, seq, missing int64) {
	q.lossCount.Add(1)
	what := "the data set went back in time (restarted from older files, or a failover to a replica that lagged?)"
	if wiped {
		what = "the data set is not the one receivers wrote to (restarted empty?)"
	}
	q.log(slog.LevelError, "redisqueue: Redis lost deliveries it had acknowledged; catch up from the known-good time",
		"cause", what, "since", since, "seq", seq, "seen", q.maxSeq.Load(), "missing", missing)
	q.mu.Lock()
	for _, e := range q.held {
		q.lose(e)
	}
	q.mu.Unlock()
	// A change made before the mark may have been delivered after it. The
	// API's times are whole seconds: a catch-up from a mark within a second
	// would skip the changes made earlier in that second.
	since = since.Add(-q.o.DeliveryLag).Truncate(time.Second)
	if q.pending.IsZero() || since.Before(q.pending) {
		q.pending = since
	}
}

// tell sends the pending loss on Losses, once the engine's state is
// recreated, so that the catch-up it starts stores into a working queue. A
// loss not yet received is merged with this one.
func (q *Queue) tell() {
	since := q.pending
	if since.IsZero() {
		return
	}
	q.pending = time.Time{}
	select {
	case old := <-q.losses:
		since = minTime(old, since)
	default:
	}
	q.losses <- since
}

// damagedEntry logs and counts a stored entry that failed its check.
func (q *Queue) damagedEntry(what, damage string, args ...any) {
	q.damaged.Add(1)
	q.log(slog.LevelError, "redisqueue: damaged "+what, append([]any{"damage", damage}, args...)...)
}

func (q *Queue) log(level slog.Level, msg string, args ...any) {
	if q.o.Logger != nil {
		q.o.Logger.Log(context.Background(), level, msg, args...)
	}
}

// minTime is the earlier of a and b; a zero one is none.
func minTime(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}
