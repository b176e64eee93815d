package diskqueue

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/collabsvc/collab/webhook"
)

// segment is one file of the log.
type segment struct {
	num       uint64
	path      string
	f         file
	size      int64        // bytes written; changed under Queue.wmu (see written)
	synced    atomic.Int64 // bytes a sync is known to have covered
	live      int          // items whose latest put is here
	liveBytes int64
	keys      []keyRef  // the dedup keys its puts remember, kept when it goes
	copying   bool      // its live items are being copied forward
	lastDrop  time.Time // when it last lost a live item
}

// A segment starts with segMagic and the last id given when it became
// the one written to (see roll), so that ids keep growing when every older
// segment is gone. segMagicV1 began the segments of the format before
// marks (see tMark), which read alike.
const (
	segMagic      = "collabq\x02"
	segMagicV1    = "collabq\x01"
	segHeaderSize = 16
)

// A segment takes no more groups past segMax. When the queue is drained and
// its last segment is past drainedRoll, a new one is begun so that the old
// one can go.
const (
	segMax      = 8 << 20
	drainedRoll = 1 << 20
)

// sizes are the sizes and delays that shape the log; tests that build
// crash images shrink them.
type sizes struct {
	segMax, drainedRoll int64
	copyAfter           time.Duration
}

var defaultSizes = sizes{segMax: segMax, drainedRoll: drainedRoll, copyAfter: copyAfter}

func segName(num uint64) string { return fmt.Sprintf("log-%016x.seg", num) }

// group is the records gathered for one sync, and what to do once it is
// done. Its buffer begins with room for the mark written ahead of it (see
// tMark).
type group struct {
	buf  []byte
	ops  []op
	puts bool // it stores a delivery (see linger)
	done chan struct{}
	err  error
}

// op is what a record does to the queue's state once written (apply, given
// where it landed), or undoes once its write failed.
type op struct {
	rel   int64
	apply func(seg *segment, off int64)
	undo  func()
}

func newGroup(buf []byte) *group {
	buf = slices.Grow(buf[:0], headerSize)[:headerSize]
	return &group{buf: buf, done: make(chan struct{})}
}

// empty reports whether g has no record to write.
func (g *group) empty() bool { return len(g.buf) == headerSize }

// gather appends a record to the group being gathered and wakes the
// writer. q.mu is held.
func (q *Queue) gather(typ byte, id uint64, meta, body []byte, bodySum uint32, apply func(*segment, int64), undo func()) *group {
	g := q.cur
	g.puts = g.puts || typ == tPut
	g.ops = append(g.ops, op{rel: int64(len(g.buf)), apply: apply, undo: undo})
	g.buf = appendRecord(g.buf, typ, id, meta, body, bodySum)
	q.wake.Signal()
	if len(g.ops) == lingerRecords {
		q.gatheredNow()
	}
	return g
}

// gatherAbout appends a record about it, a delivery already stored, to the
// group being gathered. While it is
// being written, it is not copied forward: the copy would land after the
// record in the log, and undo it at the next open.
func (q *Queue) gatherAbout(it *item, typ byte, meta []byte, apply func(), undo func()) *group {
	it.inflight++
	return q.gather(typ, it.id, meta, nil, 0, func(*segment, int64) {
		it.inflight--
		if apply != nil {
			apply()
		}
	}, func() {
		it.inflight--
		if undo != nil {
			undo()
		}
	})
}

// gatheredNow ends the writer's linger, if it lingers.
func (q *Queue) gatheredNow() {
	select {
	case q.gathered <- struct{}{}:
	default:
	}
}

// wait waits for g's sync, or for ctx to end.
func wait(ctx context.Context, g *group) error {
	select {
	case <-g.done:
		return g.err
	case <-ctx.Done():
		return fmt.Errorf("diskqueue: store stalled (the write may still complete): %w", ctx.Err())
	}
}

// writer writes and syncs the gathered records, one group at a time, until
// the queue closes. Records gathered while a group is written make the next
// group, so that many share one sync. Between groups it compacts, syncs the
// records written at once, and tidies the log.
func (q *Queue) writer() {
	defer close(q.done)
	for {
		q.mu.Lock()
		for q.cur.empty() && len(q.compacts) == 0 && len(q.flushes) == 0 && !q.tidyDue && !q.syncDue && !q.closed {
			q.wake.Wait()
		}
		switch reqs, flushes := q.compacts, q.flushes; {
		case len(reqs) > 0:
			q.compacts = nil
			q.mu.Unlock()
			err := q.compact()
			for _, r := range reqs {
				r <- err
			}
		case !q.cur.empty():
			q.syncDue = false // the group's sync takes what is unsynced
			q.commitNext()
		case q.unsynced && (q.syncDue || q.closed) || len(flushes) > 0:
			unsynced, head := q.unsynced, q.head()
			q.unsynced, q.syncDue, q.flushes = false, false, nil
			q.mu.Unlock()
			if unsynced {
				q.syncLazily(head)
			}
			q.tidy()
			for _, f := range flushes {
				close(f)
			}
		case q.tidyDue && !q.closed:
			q.tidyDue = false
			q.mu.Unlock()
			q.tidy()
		case q.closed:
			q.mu.Unlock()
			return
		default: // a sync due that a group took
			q.syncDue = false
			q.mu.Unlock()
		}
	}
}

// commitNext writes and syncs the records gathered, after a linger (see
// lingerMax), rolling to a new segment when they do not fit. q.mu is held,
// and released.
func (q *Queue) commitNext() {
	if q.cur.puts && q.lastGroup > 1 && len(q.cur.ops) < lingerRecords && !q.closed {
		q.mu.Unlock()
		q.linger()
		q.mu.Lock()
	}
	g := q.cur
	q.cur = newGroup(q.spare)
	q.lastGroup = len(g.ops)
	select {
	case <-q.gathered: // g's, unless the linger took it: not the next group's
	default:
	}
	head, broken := q.head(), q.broken
	q.mu.Unlock()
	size := q.written(head)
	roll := broken == nil && size+int64(len(g.buf)) > q.sizes.segMax && size > segHeaderSize

	q.committing.Store(time.Now().UnixNano())
	var err error
	if roll {
		head, err = q.roll()
	}
	var base int64
	if err == nil {
		base, err = q.writeGroup(head, g.buf)
	}
	q.committing.Store(0)
	q.finish(g, head, base, err)
}

// A sync costs about the same for one record as for thirty, so before it
// writes a group that stores a delivery, the writer waits up to lingerMax
// for lingerRecords records to gather. Deliveries come from outside, many at
// once when they come fast: this takes fewer syncs, less CPU and even less
// time per delivery than a sync as soon as one arrives. It does not wait
// when the last group held one record (a lone writer), nor for a group that
// stores nothing (the workers' attempts and outcomes are written at once,
// not in groups; see writeNow).
const (
	lingerMax     = 300 * time.Microsecond
	lingerRecords = 32
)

// linger waits until lingerRecords records are gathered, lingerMax passed,
// or the queue closes.
func (q *Queue) linger() {
	q.lingerTimer.Reset(lingerMax)
	select {
	case <-q.gathered:
		q.lingerTimer.Stop() // no stale tick follows (Go 1.23 timers)
	case <-q.lingerTimer.C:
	}
}

// writeGroup appends buf, a group's, to head behind its mark, and syncs
// it, with the records written at once before it (see writeNow), and
// returns where buf landed.
func (q *Queue) writeGroup(head *segment, buf []byte) (int64, error) {
	if q.beforeWrite != nil {
		if err := q.beforeWrite(); err != nil {
			return 0, err
		}
	}
	q.mu.Lock()
	q.unsynced = false // this sync takes them
	q.mu.Unlock()
	base, err := q.appendLog(head, buf, true)
	if err == nil {
		err = q.sync(head, base+int64(len(buf)))
	}
	return base, err
}

// appendLog appends buf to head and returns where it landed; with mark,
// buf begins with room for a mark.
func (q *Queue) appendLog(head *segment, buf []byte, mark bool) (int64, error) {
	q.wmu.Lock()
	defer q.wmu.Unlock()
	return q.appendLocked(head, buf, mark)
}

// appendNow appends a record to the segment written to.
func (q *Queue) appendNow(typ byte, id uint64, meta []byte) error {
	q.wmu.Lock()
	defer q.wmu.Unlock()
	if len(q.segs) == 0 {
		return webhook.ErrQueueClosed // closed since the caller looked
	}
	q.scratch = appendRecord(q.scratch[:0], typ, id, meta, nil, 0)
	_, err := q.appendLocked(q.segs[len(q.segs)-1], q.scratch, false)
	return err
}

// appendLocked appends buf to head, followed by the records kept for the
// next write (see Ack), and returns where buf landed; with mark, it first
// writes at the start of buf a mark of how far head is synced. After a
// failed write the segment is cut back to where it was, durably, so that
// no torn record sits before the next one, and the kept records are kept
// for the write after; when the cut fails too the log takes no more
// writes. q.wmu is held.
func (q *Queue) appendLocked(head *segment, buf []byte, mark bool) (int64, error) {
	q.mu.Lock()
	later, broken := q.acksKept, q.broken
	if broken == nil {
		q.acksKept = nil
	}
	q.mu.Unlock()
	if broken != nil {
		return 0, broken
	}
	if len(buf) == 0 {
		buf = later
	} else if len(later) > 0 {
		buf = append(buf, later...)
	}
	if mark {
		putMark(buf, head.synced.Load())
	}
	base := head.size
	_, err := head.f.WriteAt(buf, base)
	if err == nil {
		head.size += int64(len(buf))
		return base, nil
	}
	err = fmt.Errorf("diskqueue: writing %s: %w", head.path, err)
	terr := head.f.Truncate(base)
	if terr == nil {
		terr = head.f.Sync()
	}
	q.mu.Lock()
	q.acksKept = append(later, q.acksKept...)
	if terr != nil {
		q.broken = fmt.Errorf("diskqueue: the log cannot be repaired after a failed write; reopen the queue: %w", terr)
	}
	q.mu.Unlock()
	return 0, err
}

// written returns the bytes written to seg.
func (q *Queue) written(seg *segment) int64 {
	q.wmu.Lock()
	defer q.wmu.Unlock()
	return seg.size
}

// sync makes what was written to seg durable, its first covered bytes at
// least. A failed sync leaves the log taking no more writes: the kernel may
// have dropped what it could not write, and a later sync would not say so.
func (q *Queue) sync(seg *segment, covered int64) error {
	err := seg.f.Sync()
	if err == nil {
		if covered > seg.synced.Load() { // only the writer syncs
			seg.synced.Store(covered)
		}
		return nil
	}
	err = fmt.Errorf("diskqueue: syncing %s: %w", seg.path, err)
	q.log(slog.LevelError, "diskqueue: sync failed; the queue takes no more writes", "error", err)
	q.mu.Lock()
	q.broken = fmt.Errorf("diskqueue: the log cannot be trusted after a failed sync; reopen the queue: %w", err)
	q.mu.Unlock()
	return err
}

// writeNow appends a record about it, a delivery held and leased, and
// applies it once written, without waiting for a sync: the attempts and
// outcomes of handlings are written this way. Written, a record outlives a
// crash of the process; it is synced with the next delivery stored, or
// within lazySync. So a delivery stored is never lost, and after a power
// loss one handled in the last lazySync may be handed out again, or
// counted one attempt less. q.mu is held, and released.
func (q *Queue) writeNow(it *item, typ byte, meta []byte, apply func(), undo func()) error {
	if it.moving {
		return q.behindCopy(it, typ, meta, apply, undo)
	}
	it.inflight++
	before := q.beforeWrite
	q.mu.Unlock()
	var err error
	if before != nil {
		err = before()
	}
	if err == nil {
		err = q.appendNow(typ, it.id, meta)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	it.inflight--
	if err != nil {
		if undo != nil {
			undo()
		}
		return err
	}
	apply()
	q.writtenNow()
	return nil
}

// behindCopy appends a record about it, whose copy forward waits in the
// group being gathered, to that group, and waits for its sync: written at
// once, it would land before the copy, which would undo it at the next
// open. q.mu is held, and released.
func (q *Queue) behindCopy(it *item, typ byte, meta []byte, apply func(), undo func()) error {
	g := q.gatherAbout(it, typ, meta, apply, undo)
	q.mu.Unlock()
	return wait(context.Background(), g)
}

// writtenNow has the writer sync within lazySync what was written at once,
// or kept for the next write. q.mu is held.
func (q *Queue) writtenNow() {
	if !q.unsynced {
		q.unsynced = true
		q.syncTimer.Reset(lazySync)
	}
}

// syncLazily writes the acks kept for the next write to head, and syncs
// what was written at once.
func (q *Queue) syncLazily(head *segment) {
	q.wmu.Lock()
	_, err := q.appendLocked(head, nil, false) // what Ack kept for the next write
	covered := head.size
	q.wmu.Unlock()
	if err != nil {
		q.log(slog.LevelWarn, "diskqueue: writing acks failed; they are kept for the next write", "error", err)
		q.mu.Lock()
		if q.broken == nil {
			q.writtenNow() // try again within lazySync
		}
		q.mu.Unlock()
		return
	}
	_ = q.sync(head, covered) // a failure is logged, and stops writes
}

// flush has the writer sync the records written at once and tidy the log,
// as it does within lazySync, and waits for it.
func (q *Queue) flush() {
	done := make(chan struct{})
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.flushes = append(q.flushes, done)
	q.wake.Signal()
	q.mu.Unlock()
	<-done
}

// lazySync is how long a record written at once may wait for its sync, in
// case a delivery comes to share it.
const lazySync = 10 * time.Millisecond

// finish applies a written group's records, or undoes a failed one's,
// releases the group's writers, and tidies the log.
func (q *Queue) finish(g *group, head *segment, base int64, err error) {
	q.mu.Lock()
	if err == nil {
		for _, o := range g.ops {
			if o.apply != nil {
				o.apply(head, base+o.rel)
			}
		}
		q.syncs.Add(1)
	} else {
		for _, o := range g.ops {
			if o.undo != nil {
				o.undo()
			}
		}
	}
	q.spare = g.buf
	g.buf, g.err = nil, err
	q.mu.Unlock()
	close(g.done) // before the tidy: the writers wait for nothing more
	if err == nil {
		q.tidy()
	}
}

// Compact removes every segment but the one written to, copying forward the
// deliveries they still hold, and begins a new segment when the one written
// to holds nothing live: the directory then holds about what is live. The
// queue removes handled segments by itself as it drains; Compact also
// moves the dead letters and retried deliveries that keep an old segment,
// for a tool or after a burst. Writes wait while it runs.
func (q *Queue) Compact() error {
	done := make(chan error, 1)
	q.mu.Lock()
	if err := q.usable(); err != nil {
		q.mu.Unlock()
		return err
	}
	q.compacts = append(q.compacts, done)
	q.wake.Signal()
	q.mu.Unlock()
	return <-done
}

// compact does Compact's work, in the writer.
func (q *Queue) compact() error {
	q.mu.Lock()
	head := q.head()
	q.mu.Unlock()
	roll := q.written(head) > segHeaderSize
	if roll {
		if _, err := q.roll(); err != nil {
			return err
		}
	}
	q.mu.Lock()
	olds := slices.Clone(q.segs[:len(q.segs)-1])
	q.mu.Unlock()
	for _, old := range olds {
		if old.live > 0 && !old.copying { // a copying one's copies wait in q.cur, written below
			q.copyForward(old)
		}
	}
	q.mu.Lock()
	g, head := q.cur, q.head()
	q.cur = newGroup(q.spare)
	q.mu.Unlock()
	var err error
	var base int64
	if !g.empty() {
		base, err = q.writeGroup(head, g.buf)
	}
	q.finish(g, head, base, err)
	return err
}

// head is the segment written to. q.mu is held.
func (q *Queue) head() *segment { return q.segs[len(q.segs)-1] }

// roll makes the next segment the head: the one made ahead of time, or a
// new one, its header naming the last id given, durably, before an older
// segment may go. Then it has the one after made ahead.
func (q *Queue) roll() (*segment, error) {
	q.mu.Lock()
	preparing := q.preparing
	q.mu.Unlock()
	<-preparing // it may be making this very segment
	q.mu.Lock()
	num, last, seg := q.head().num+1, q.nextID, q.ready
	q.ready = nil
	q.mu.Unlock()
	if seg == nil || seg.num != num {
		var err error
		if seg, err = q.createSegment(num, last); err != nil {
			return nil, err
		}
	} else if err := setLastID(seg, last); err != nil {
		_ = seg.f.Close()
		_ = q.disk.Remove(seg.path)
		return nil, err
	}
	q.wmu.Lock()
	q.mu.Lock()
	old := q.head()
	q.segs = append(q.segs, seg)
	q.mu.Unlock()
	covered := old.size // written to no more
	q.wmu.Unlock()
	_ = q.sync(old, covered) // for the records written at once to it; a failure stops writes
	q.makeAhead(num + 1)
	return seg, nil
}

// makeAhead makes segment num ahead of time, in the background: filling a
// segment with zeros takes a while, and a sync of data written over them
// is cheaper than one that also grows the file.
func (q *Queue) makeAhead(num uint64) {
	done := make(chan struct{})
	q.mu.Lock()
	last := q.nextID
	q.preparing = done
	q.mu.Unlock()
	q.bg.Add(1)
	go func() {
		defer q.bg.Done()
		defer close(done)
		seg, err := q.createSegment(num, last)
		if err != nil {
			return // roll tries again, and reports
		}
		q.mu.Lock()
		defer q.mu.Unlock()
		if q.closed || q.ready != nil {
			_ = seg.f.Close()
			_ = q.disk.Remove(seg.path)
			return
		}
		q.ready = seg
	}()
}

// createSegment makes segment num, durably, its header naming last, and
// fills it with zeros up to segMax.
func (q *Queue) createSegment(num, last uint64) (*segment, error) {
	path := filepath.Join(q.dir, segName(num))
	f, err := q.disk.Create(path + ".new")
	if err != nil {
		return nil, fmt.Errorf("diskqueue: new segment: %w", err)
	}
	_, err = f.WriteAt(binary.LittleEndian.AppendUint64([]byte(segMagic), last), 0)
	zeros := make([]byte, min(256<<10, q.sizes.segMax))
	for n := int64(segHeaderSize); err == nil && n < q.sizes.segMax; n += int64(len(zeros)) {
		_, err = f.WriteAt(zeros[:min(int64(len(zeros)), q.sizes.segMax-n)], n)
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		// Made whole under another name, so that a crash never leaves a
		// segment cut short.
		if err = q.disk.Rename(path+".new", path); err == nil {
			err = q.disk.SyncDir(q.dir)
		}
	}
	if err != nil {
		_ = f.Close()
		_ = q.disk.Remove(path + ".new")
		return nil, fmt.Errorf("diskqueue: new segment: %w", err)
	}
	return &segment{num: num, path: path, f: f, size: segHeaderSize}, nil
}

// setLastID writes last into the header of seg, made ahead of time, and
// syncs it.
func setLastID(seg *segment, last uint64) error {
	_, err := seg.f.WriteAt(binary.LittleEndian.AppendUint64(nil, last), int64(len(segMagic)))
	if err == nil {
		err = seg.f.Sync()
	}
	if err != nil {
		return fmt.Errorf("diskqueue: new segment: %w", err)
	}
	return nil
}

// tidy removes the segments that hold nothing live any more, oldest first,
// copies forward the few live deliveries of a mostly handled oldest
// segment, begins a new segment when the queue is drained or the one written
// to is full, and removes expired key files. (Put forgets expired keys.)
func (q *Queue) tidy() {
	now := time.Now()
	q.retireHandled(now)
	q.mu.Lock()
	head := q.head()
	q.mu.Unlock()
	written := q.written(head)
	q.mu.Lock()
	drained := q.pending == 0 && q.dead == 0 && len(q.segs) == 1 && written > q.sizes.drainedRoll
	q.mu.Unlock()
	if drained || written > q.sizes.segMax { // filled by records written at once, as a drain does
		if _, err := q.roll(); err != nil {
			q.log(slog.LevelError, "diskqueue: beginning a segment failed", "error", err)
		}
		q.retireHandled(now)
	}
	q.expireKeyFiles(now)
}

// retireHandled removes the oldest segments while they hold nothing live,
// and copies forward the live deliveries of the first that does, when they
// are few.
func (q *Queue) retireHandled(now time.Time) {
	for {
		q.mu.Lock()
		if len(q.segs) < 2 {
			q.mu.Unlock()
			return
		}
		old := q.segs[0]
		if old.live > 0 {
			copyNow := q.copyDue(old, now)
			q.mu.Unlock()
			if copyNow {
				q.copyForward(old)
			}
			return
		}
		q.mu.Unlock()
		if err := q.retire(old, now); err != nil {
			q.log(slog.LevelError, "diskqueue: removing a handled segment failed", "segment", old.path, "error", err)
			return
		}
	}
}

// A segment whose live deliveries are under a quarter of it, and have not
// changed for copyAfter, has them copied forward: dead letters, deliveries
// waiting for a retry and those behind them. One still draining is left
// to drain.
const copyAfter = time.Second

// copyDue reports whether old's live deliveries are to be copied forward
// now; when they may be later, it has the writer tidy again then. q.mu is
// held.
func (q *Queue) copyDue(old *segment, now time.Time) bool {
	if old.copying || old.liveBytes*4 > old.size {
		return false
	}
	wait := old.lastDrop.Add(q.sizes.copyAfter).Sub(now)
	if wait <= 0 {
		return true
	}
	if q.tidyTimer == nil && !q.closed {
		q.tidyTimer = time.AfterFunc(wait, func() {
			q.mu.Lock()
			q.tidyTimer, q.tidyDue = nil, true
			q.wake.Signal()
			q.mu.Unlock()
		})
	}
	return false
}

// retire removes old, the oldest segment, which holds nothing live: the
// dedup keys of its puts still within their window are first written to a
// key file.
func (q *Queue) retire(old *segment, now time.Time) error {
	if err := q.keepKeys(old, now); err != nil {
		return err
	}
	q.filesMu.Lock()
	_ = old.f.Close()
	q.filesMu.Unlock()
	if err := q.disk.Remove(old.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	q.wmu.Lock()
	q.mu.Lock()
	q.segs[0] = nil // nor its keys kept reachable
	q.segs = q.segs[1:]
	q.mu.Unlock()
	q.wmu.Unlock()
	q.log(slog.LevelDebug, "diskqueue: handled segment removed", "segment", filepath.Base(old.path), "bytes", old.size)
	return q.disk.SyncDir(q.dir)
}

// copyForward copies the live deliveries of old, the oldest segment, to the
// head, with their state, so that old can go once they are written.
func (q *Queue) copyForward(old *segment) {
	type live struct {
		it        *item
		off, size int64
	}
	var todo []live
	q.mu.Lock()
	old.copying = true
	for _, it := range q.items {
		if it.seg == old {
			todo = append(todo, live{it, it.off, it.size})
		}
	}
	q.mu.Unlock()
	for _, l := range todo {
		raw, err := q.readAt(old, l.off, l.size)
		if err != nil {
			q.log(slog.LevelError, "diskqueue: copying a delivery forward failed", "id", l.it.id, "error", err)
			q.mu.Lock()
			old.copying = false
			q.mu.Unlock()
			return
		}
		q.mu.Lock()
		if it := l.it; it.seg == old && q.items[it.id] == it && it.inflight == 0 {
			q.recopy(it, old, raw)
		}
		q.mu.Unlock()
	}
	// What was skipped is copied at a later tidy.
	q.mu.Lock()
	q.cur.ops = append(q.cur.ops, op{apply: func(*segment, int64) { old.copying = false }, undo: func() { old.copying = false }})
	q.mu.Unlock()
}

// recopy appends raw, the put record of it, and its state, to be written
// with the next group; it moves there once written. q.mu is held.
func (q *Queue) recopy(it *item, old *segment, raw []byte) {
	g := q.cur
	rel := int64(len(g.buf))
	g.buf = append(g.buf, raw...)
	it.moving = true
	g.ops = append(g.ops, op{rel: rel, undo: func() { it.moving = false }, apply: func(seg *segment, off int64) {
		it.moving = false
		if it.seg == old && q.items[it.id] == it {
			old.drop(it)
			it.seg, it.off = seg, off
			seg.add(it)
		}
	}})
	if it.attempt > 0 {
		g.buf = appendRecord(g.buf, tLease, it.id, binary.AppendUvarint(nil, uint64(it.attempt)), nil, 0)
	}
	switch {
	case it.dead:
		g.buf = appendRecord(g.buf, tDead, it.id, []byte(it.lastError), nil, 0)
	case it.lastError != "":
		g.buf = appendRecord(g.buf, tRetry, it.id, []byte(it.lastError), nil, 0)
	}
	q.wake.Signal()
}

func (s *segment) add(it *item) {
	s.live++
	s.liveBytes += it.size
}

func (s *segment) drop(it *item) {
	s.live--
	s.liveBytes -= it.size
	s.lastDrop = time.Now()
}

// readAt reads size bytes of seg at off.
func (q *Queue) readAt(seg *segment, off, size int64) ([]byte, error) {
	q.filesMu.RLock()
	defer q.filesMu.RUnlock()
	return readSegment(seg, off, size)
}

// readSegment is readAt with q.filesMu held.
func readSegment(seg *segment, off, size int64) ([]byte, error) {
	buf := make([]byte, size)
	if _, err := seg.f.ReadAt(buf, off); err != nil {
		return nil, fmt.Errorf("diskqueue: reading %s: %w", filepath.Base(seg.path), err)
	}
	return buf, nil
}

// closeFiles closes the segments and lets the lock go.
func (q *Queue) closeFiles() error {
	q.wmu.Lock() // a record written at once may be on its way
	defer q.wmu.Unlock()
	q.filesMu.Lock()
	defer q.filesMu.Unlock()
	var first error
	for _, s := range q.segs {
		if err := s.f.Close(); err != nil && first == nil {
			first = err
		}
	}
	q.segs = nil
	if q.ready != nil {
		_ = q.ready.f.Close()
		q.ready = nil
	}
	if q.lock != nil {
		_ = q.lock.Close()
		q.lock = nil
	}
	return first
}
