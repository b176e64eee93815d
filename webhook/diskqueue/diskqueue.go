// Package diskqueue keeps the deliveries of a webhook.Handler on local disk,
// so that an event answered 200 survives a crash or a restart.
//
//	q, err := diskqueue.Open("/var/lib/bot/queue", diskqueue.Options{})
//	...
//	h, err := webhook.NewHandler(webhook.Options{Queue: q, OnIssue: onIssue})
//
// # Files
//
// The directory, readable by its owner only, holds a log: segment files
// (log-*.seg) to which every change is appended as a record: a delivery
// stored, an attempt begun, an attempt failed, a delivery dead-lettered,
// handled or deleted. It also holds the dedup keys of the deliveries whose
// segments are gone (keys-*.seg) and the checkpoints of catch-up
// (checkpoints). One process at a time may open the queue (it locks the
// directory); another gets ErrHeld. Tools that only look set Options.NoCreate,
// which writes nothing at open.
//
// # Durability
//
// A Put waits until its delivery is synced to disk, and the Handler answers
// 200 only then; a repeat is answered as a duplicate only once the first is
// synced too. Puts are appended together and share one sync: before it
// writes a group, the writer waits up to 300 µs for 32 puts to gather,
// which at a high rate takes less time and CPU per delivery than a sync for
// each.
//
// The attempt counted when a delivery is handed out, and a Retry or a
// DeadLetter, is written before the call returns, and an Ack with the next
// write; all are synced with the next Put, or within 10 ms. Written, they
// outlive a crash of the process: a delivery whose callback was running is
// handed out again, its attempt counted. Every file the queue makes or
// renames, and every cut it makes to a file, is synced, the directory too,
// before anything relies on it.
//
// # Power loss
//
// After a power cut, a kernel panic or a stopped machine, which may lose,
// tear or reorder every write not yet synced, the queue promises:
//
//   - it opens, and logs what it cut off the log and why;
//   - every delivery whose Put returned is handed out, unless it was
//     handled before the cut;
//   - a delivery whose Put had not returned is handed out intact, or a
//     repeat of it is stored: never answered as a duplicate of a delivery
//     the queue cannot hand out;
//   - no damaged body reaches a callback, and nothing is handed out that
//     was never stored, whatever the bodies stored hold;
//   - an id given after an open is higher than every id given before,
//     across any number of closes, crashes and rolls;
//   - a delivery handled is remembered as seen for its dedup window, and a
//     checkpoint reads as the last value set, or one being set.
//
// What the model allows besides: a delivery handled in the last 10 ms may
// be handed out again, or a DeadLetter or Retry of that time undone, its
// attempt counted one less. A test harness checks these promises on tens
// of thousands of images of the disk that a cut at every sync, and between,
// could leave (every write since the last sync kept, dropped, torn at a
// 512-byte sector or left with holes; every name change kept or undone).
//
// # Damage
//
// Every record carries checksums of its header, of the delivery's fields and
// of its body. A delivery whose fields or body fail theirs while a later
// record vouches that a sync had covered it, changed on the disk since, is
// never handed to a callback but dead-lettered, with a reason naming the
// damage, and its dedup keys are forgotten, so that a repeat brings it
// whole. A record that fails its checksums with nothing to vouch for it was
// being written when a cut came (its Put had not returned): it is cut off,
// with all that follows it. A record header that does not read ends what
// can be read of its segment: the rest is cut off and logged, since only
// the header says where the next record begins. A failed sync stops the
// queue taking writes (reopen it): the kernel may have dropped what it
// could not write.
//
// # Design notes
//
// Recovery reads records in order, each where the one before ends, and
// never looks for a record inside the bytes after one that does not read:
// a body is written by whoever can write an issue, and may hold bytes built
// to read as records, checksums included. Of the three known ways to stop
// a scan being fooled, LevelDB's 32 KiB blocks would split records (and
// copies forward) into fragments, and etcd's torn-tail rule alone cannot
// tell a torn write from damage on the disk. A mark at the start of each
// group, saying how far its segment was synced, tells the two apart at no
// cost a benchmark shows (32 bytes a group): damage before a mark is rot,
// after every mark a torn write. Tests reproduce the earlier format's
// faults (the scan, ids taken from a segment made ahead); on this one the
// harness finds no failure, while it fails queues whose syncs are no-ops,
// skip the directory, or come before their writes. The last id given is
// written into a segment's header, and synced, when it becomes the one
// written to (at a roll, or at an open, which may find a segment made
// ahead of time as its last), before an older one may go.
//
// # Space
//
// A body takes its size on disk, a delivery's fields a few hundred bytes,
// and a remembered dedup key about 60 bytes on disk and 60 in memory (a
// key is forgotten once past Options.DedupWindow). Segments are removed,
// oldest first, as soon as every delivery they hold is handled: the
// directory shrinks as the queue drains. A segment that keeps a few
// deliveries (dead letters, a partition held by a retry: under a quarter of
// it, untouched for a second) has them copied forward, so that it can go
// too. Segments are made ahead of time and filled with zeros, so the
// directory holds one more than the log needs.
package diskqueue

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/internal/schedule"
)

// Options configure a Queue.
type Options struct {
	// MaxPending bounds the deliveries held (pending, leased or waiting for
	// a retry); past it Put returns webhook.ErrQueueFull. 0 means no bound.
	MaxPending int
	// MaxBytes bounds the bytes of the bodies stored, dead letters
	// included; past it Put returns webhook.ErrQueueFull, while takes, acks
	// and retries go on so that the queue can drain. 0 means no bound.
	MaxBytes int64
	// DedupWindow is how long a key is remembered. Default
	// webhook.DefaultDedupWindow; negative turns duplicate suppression off.
	DedupWindow time.Duration
	// Logger receives a record for each damaged delivery or dedup entry
	// found, each cut of a torn tail, each failed write or sync, and (at
	// debug level) each segment removed. Nil logs through slog.Default().
	Logger *slog.Logger
	// NoCreate opens an existing queue without writing: Open creates no
	// directory and no file, and leaves damaged records and a torn tail
	// where they are (a Take still dead-letters a damaged delivery). A
	// directory that holds no queue is an error wrapping ErrNoQueue. Tools
	// that inspect a queue set it.
	NoCreate bool
}

// The errors of Open.
var (
	// ErrHeld: another process has the queue open; one process at a time
	// may.
	ErrHeld = errors.New("diskqueue: queue is open in another process")
	// ErrNoQueue: with Options.NoCreate, the directory holds no queue.
	ErrNoQueue = errors.New("diskqueue: no queue")
)

// Queue is a webhook.Queue kept in a directory on local disk (see the
// package documentation for its files, its durability and its space). A
// delivery whose Put returned nil is on disk: it survives a crash or a
// restart, and is handed out again, in arrival order, when the queue is
// opened next. So is a delivery whose callback was running at the crash.
// Dedup keys and checkpoints are kept too.
//
// The bounds are checked as each delivery is stored, so they hold however
// many deliveries arrive at once.
type Queue struct {
	opts  Options
	dir   string
	disk  fileSystem
	sizes sizes
	lock  io.Closer

	// mu guards the index, the writer's requests and what follows; it is
	// taken after segmentFiles.wmu.
	mu     sync.Mutex
	wake   *sync.Cond // on mu: the writer has work, or the queue closes
	closed bool
	broken error // why the log takes no more writes

	deliveryIndex
	groupWriter
	segmentFiles

	cpMu        sync.Mutex
	checkpoints map[string][]byte

	damaged atomic.Int64 // damaged records found
}

// deliveryIndex is what the queue holds, in memory, under Queue.mu.
type deliveryIndex struct {
	sched   schedule.Schedule
	items   map[uint64]*item // pending and dead-lettered deliveries
	nextID  uint64           // the last id given
	keys    dedup
	storing map[string]*group // the keys of deliveries being stored, and their group
	pending int               // deliveries held, not dead-lettered
	dead    int               // dead letters
	bytes   int64             // bytes of bodies stored, dead letters included
	cached  int64             // bytes of bodies held in memory until first taken
}

// groupWriter is the state of the writer goroutine and of the requests
// made to it; all but the atomics and the writer's own are under Queue.mu.
type groupWriter struct {
	cur       *group          // the records gathered for the next sync
	spare     []byte          // a buffer of a written group, for reuse
	meta      []byte          // a buffer for a put's fields
	compacts  []chan error    // Compact calls waiting for the writer
	flushes   []chan struct{} // flush calls waiting for the writer
	tidyDue   bool            // the writer is to tidy the log (see copyDue)
	tidyTimer *time.Timer
	acksKept  []byte      // records kept for the next write (see Ack)
	unsynced  bool        // records were written at once, or kept, since the last sync
	syncDue   bool        // the writer is to sync them (see lazySync)
	syncTimer *time.Timer // sets syncDue

	gathered    chan struct{} // lingerRecords gathered, or the queue closes; see linger
	lastGroup   int           // records in the last group taken by the writer; the writer's own
	lingerTimer *time.Timer
	done        chan struct{} // closed when the writer returns

	syncs      atomic.Int64 // groups synced, for the tests
	committing atomic.Int64 // when the sync under way began (unix ns), 0 when none

	beforeWrite func() error // tests stall the writer, or fail a write, with it
}

// segmentFiles is the files of the log.
type segmentFiles struct {
	// wmu is held while the log is appended to, so that records land one
	// after another; with Queue.mu, while segs changes. It is taken before
	// Queue.mu.
	wmu     sync.Mutex
	scratch []byte // under wmu: a record being written at once

	segs      []*segment    // oldest first; the last one is written to; under Queue.mu
	ready     *segment      // the next segment, made ahead of time; under Queue.mu
	preparing chan struct{} // closed once the segment being made ahead is done; under Queue.mu
	keyFiles  []keyFile     // under Queue.mu
	bg        sync.WaitGroup

	// filesMu is read-held while a segment is read outside Queue.mu, and
	// write-held while one is closed.
	filesMu sync.RWMutex
}

// item is a delivery the queue holds: where its latest copy is, and its
// state.
type item struct {
	id        uint64
	seg       *segment
	off, size int64 // the put record, header included
	bodyLen   int64
	partition string
	received  time.Time
	attempt   int
	lastError string
	dead      bool
	dropping  bool              // a Requeue or Delete of it is being written
	moving    bool              // its copy forward is being written
	inflight  int               // records about it being written
	damage    error             // its fields did not read at open
	cached    *webhook.Delivery // as Put got it, until first taken
}

// cacheMax bounds the bodies kept in memory for their first Take; past it a
// Take reads the delivery back from disk.
const cacheMax = 32 << 20

// Open opens the queue kept in dir, creating it if needed (unless
// Options.NoCreate). A queue that cannot be opened or read back is an
// error: nothing is reset. A queue another process has open is an error
// wrapping ErrHeld, after a second's wait for that process to let go. A
// delivery whose record is damaged is dead-lettered; what a power cut tore
// is cut off (see the package documentation). Files other than the
// queue's, such as a bbolt queue.db, are left alone.
func Open(dir string, opts Options) (*Queue, error) {
	return openOn(osFS{}, dir, opts, defaultSizes)
}

// openOn is Open on the given file system, with the given sizes.
func openOn(disk fileSystem, dir string, opts Options, sz sizes) (*Queue, error) {
	if opts.MaxPending < 0 || opts.MaxBytes < 0 {
		return nil, errors.New("diskqueue: negative Options bound")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.DedupWindow == 0 {
		opts.DedupWindow = webhook.DefaultDedupWindow
	}
	lock, err := openDir(disk, dir, opts.NoCreate)
	if err != nil {
		return nil, err
	}
	q := &Queue{
		opts: opts, dir: dir, disk: disk, sizes: sz, lock: lock, checkpoints: map[string][]byte{},
		deliveryIndex: deliveryIndex{sched: schedule.New(), items: map[uint64]*item{}, storing: map[string]*group{}, keys: newDedup(opts.DedupWindow)},
		groupWriter:   groupWriter{cur: newGroup(nil), done: make(chan struct{}), gathered: make(chan struct{}, 1), lingerTimer: time.NewTimer(time.Hour)},
		segmentFiles:  segmentFiles{preparing: closedChan()},
	}
	q.wake = sync.NewCond(&q.mu)
	q.syncTimer = time.AfterFunc(time.Hour, func() {
		q.mu.Lock()
		q.syncDue = true
		q.wake.Signal()
		q.mu.Unlock()
	})
	q.syncTimer.Stop()
	if err := q.load(); err != nil {
		q.closeFiles()
		return nil, err
	}
	go q.writer()
	return q, nil
}

func closedChan() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// full returns webhook.ErrQueueFull, wrapped, when one more delivery with a
// body of n bytes would pass a bound. q.mu is held.
func (q *Queue) full(n int64) error {
	switch {
	case q.opts.MaxPending > 0 && q.pending >= q.opts.MaxPending:
		return fmt.Errorf("%w: MaxPending %d reached", webhook.ErrQueueFull, q.opts.MaxPending)
	case q.opts.MaxBytes > 0 && q.bytes+n > q.opts.MaxBytes:
		return fmt.Errorf("%w: MaxBytes %d reached", webhook.ErrQueueFull, q.opts.MaxBytes)
	}
	return nil
}

// Len returns the number of deliveries held and not dead-lettered.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.sched.Len()
}

// WaitIdle waits until no delivery is pending, leased or waiting for a
// retry.
func (q *Queue) WaitIdle(ctx context.Context) error {
	return q.sched.WaitEmpty(ctx, q.mu.Lock, q.mu.Unlock)
}

// Stats implements webhook.Queue.
func (q *Queue) Stats(context.Context) (webhook.QueueStats, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	st := webhook.QueueStats{Pending: q.sched.Len(), DeadLetters: q.dead, Damaged: q.damaged.Load()}
	var oldest uint64
	for id, it := range q.items {
		if !it.dead && (oldest == 0 || id < oldest) {
			oldest, st.Oldest = id, it.received
		}
	}
	return st, nil
}

// StallAfter is how long a sync may take before Check reports the disk
// stalled.
const StallAfter = 2 * time.Second

// Check implements webhook.Queue: the queue is open, no bound is reached,
// its log takes writes, and no sync has been under way for StallAfter (a
// disk that stalls).
func (q *Queue) Check(context.Context) error {
	q.mu.Lock()
	err := q.usable()
	if err == nil {
		err = q.full(0)
	}
	q.mu.Unlock()
	if err != nil {
		return err
	}
	if t := q.committing.Load(); t != 0 && time.Since(time.Unix(0, t)) > StallAfter {
		return fmt.Errorf("diskqueue: store stalled: a sync has taken %v", time.Since(time.Unix(0, t)).Round(time.Second))
	}
	return nil
}

// usable returns why the queue takes no writes, or nil. q.mu is held.
func (q *Queue) usable() error {
	if q.closed {
		return webhook.ErrQueueClosed
	}
	return q.broken
}

// Close implements webhook.Queue: blocked Takes return, writes in flight
// finish, and the files are closed.
func (q *Queue) Close() error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return nil
	}
	q.closed = true
	if q.tidyTimer != nil {
		q.tidyTimer.Stop()
	}
	q.syncTimer.Stop()
	q.wake.Broadcast()
	q.gatheredNow()
	q.mu.Unlock()
	<-q.done
	q.bg.Wait()
	q.mu.Lock()
	q.sched.Close()
	q.mu.Unlock()
	return q.closeFiles()
}

func (q *Queue) log(level slog.Level, msg string, args ...any) {
	q.opts.Logger.Log(context.Background(), level, msg, args...)
}
