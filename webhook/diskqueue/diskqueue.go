// Package diskqueue keeps the deliveries of a webhook.Handler on local disk,
// so that an event answered 200 survives a crash or a restart.
//
//	q, err := diskqueue.Open("/var/lib/bot/queue", diskqueue.Options{})
//	...
//	h, err := webhook.NewHandler(webhook.Options{Queue: q, OnIssue: onIssue})
//
// # Files
//
// The directory holds one file, queue.db, a bbolt database (a B+tree,
// copied on write), readable by its owner only. It keeps the pending and
// dead-lettered deliveries (a record, and the body apart), the dedup keys
// with their expiry, and the checkpoints of catch-up. One process at a time
// may open it; another gets ErrHeld. Tools that only look set
// Options.NoCreate, which writes nothing at open.
//
// # Durability
//
// Every write (a Put, the attempt counted when a delivery is handed out, an
// Ack, a Retry) waits until it is synced to disk. Writes that arrive while
// a commit is under way are committed together, in one transaction, so
// many share one sync: the Handler answers 200 only once its delivery is
// in such a commit. A crash loses no delivery whose Put returned; one whose
// callback was running is handed out again, its attempt counted. Every
// record, body and dedup entry carries a checksum; a delivery that fails
// one is never handed to a callback but dead-lettered, with a reason
// naming the damage. A file whose pages are damaged is refused at open,
// never reset.
//
// # Space
//
// A body takes its size on disk, a delivery's record a few hundred bytes,
// and a remembered dedup key about 100 bytes (a key is forgotten once past
// Options.DedupWindow). Pages freed by handled deliveries are reused. On
// Linux their blocks also go back to the file system while the queue runs,
// each time a sixteenth of the file was freed: the file keeps its size, its
// disk usage falls as the queue drains. When the queue is drained and most
// of the file is free, it is compacted, which shrinks the file itself (see
// Queue.Compact).
package diskqueue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

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
	// Logger, when set, receives a record for each damaged delivery or dedup
	// entry found, and for each compaction.
	Logger *slog.Logger
	// NoCreate opens an existing queue without writing: Open creates no
	// directory and no file, compacts nothing and leaves damaged records
	// where they are (a Take still dead-letters them). A directory that
	// holds no queue is an error wrapping ErrNoQueue. Tools that inspect a
	// queue set it.
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
// package documentation for its file, its durability and its space). A
// delivery whose Put returned nil is on disk: it survives a crash or a
// restart, and is handed out again, in arrival order, when the queue is
// opened next. So is a delivery whose callback was running at the crash.
// Dedup keys and checkpoints are kept too.
//
// The bounds are checked inside the commit that stores a delivery, so they
// hold however many deliveries arrive at once.
type Queue struct {
	opts Options
	path string

	dbMu sync.RWMutex // read-held around each use of db; write-held while Compact swaps it
	db   *bolt.DB

	mu sync.Mutex // guards s
	s  schedule.Schedule

	// The writer goroutine commits what accumulates in ops as one
	// transaction; closing (under closing's write lock) ends it.
	closing sync.RWMutex
	closed  bool
	ops     chan *dbOp
	done    chan struct{}

	// Changed by the writer only; read by Check.
	pending, bytes atomic.Int64 // deliveries held, and bytes of stored bodies
	damaged        atomic.Int64 // damaged deliveries and dedup entries found
	commits        atomic.Int64 // transactions committed, for the tests
	committing     atomic.Int64 // when the commit under way began (unix ns), 0 when none

	nextSweep time.Time // used by the writer only
	freeGiven int64     // bytes of free pages at the last giveBack; used by the writer only
	noPunch   bool      // the file system cannot punch holes; used by the writer only
	punched   pages     // free pages punched since the file was opened; under dbMu's write lock
	sweepFrom []byte    // the key a sweep under way goes on from; used by the writer only
	fileSize  int64     // used by the writer only
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
	bPending     = []byte("pending")     // id -> record of a pending delivery, without its body
	bDead        = []byte("dead")        // id -> record of a dead-lettered delivery, without its body
	bBodies      = []byte("bodies")      // id -> body, of pending and dead deliveries
	bKeys        = []byte("keys")        // dedup key -> expiry (unix ns) and checksum
	bCheckpoints = []byte("checkpoints") // name -> value
	buckets      = [][]byte{bPending, bDead, bBodies, bKeys, bCheckpoints}
	// bExpiry, an index by expiry that earlier versions kept beside bKeys,
	// is dropped at open.
	bExpiry = []byte("expiry")
)

// maxGroup bounds the writes committed together.
const maxGroup = 1000

// Open opens the queue kept in dir, creating it if needed (unless
// Options.NoCreate). A queue that cannot be opened or read back, or whose
// file is damaged, is an error: nothing is reset. A queue another process
// has open is an error wrapping ErrHeld, after a second's wait for that
// process to let go. A delivery whose record is damaged is dead-lettered.
// When most of the file is free, Open compacts it first.
func Open(dir string, opts Options) (*Queue, error) {
	if opts.MaxPending < 0 || opts.MaxBytes < 0 {
		return nil, errors.New("diskqueue: negative Options bound")
	}
	if opts.DedupWindow == 0 {
		opts.DedupWindow = webhook.DefaultDedupWindow
	}
	path, err := prepare(dir, opts.NoCreate)
	if err != nil {
		return nil, err
	}
	db, err := openFile(path)
	if err != nil {
		return nil, err
	}
	q := &Queue{opts: opts, path: path, db: db, s: schedule.New(), ops: make(chan *dbOp, maxGroup), done: make(chan struct{})}
	if err := q.load(); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("diskqueue: queue file %s is damaged (%w); move it away to start afresh", path, err)
	}
	if !opts.NoCreate && q.sparse() {
		if err := q.Compact(); err != nil {
			_ = q.closeDB()
			return nil, err
		}
	}
	go q.writer()
	return q, nil
}

// prepare makes dir, owner only, and returns the path of the queue's file.
// With noCreate it only checks that the file is there, and not empty.
func prepare(dir string, noCreate bool) (string, error) {
	path := filepath.Join(dir, "queue.db")
	if noCreate {
		fi, err := os.Stat(path)
		if errors.Is(err, os.ErrNotExist) || err == nil && fi.Size() == 0 {
			return "", fmt.Errorf("%w: %s does not exist or is empty", ErrNoQueue, path)
		}
		if err != nil {
			return "", fmt.Errorf("diskqueue: queue file: %w", err)
		}
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("diskqueue: queue directory: %w", err)
	}
	// Bodies can hold private data: owner only, also for a directory that
	// existed.
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", fmt.Errorf("diskqueue: queue directory: %w", err)
	}
	if err := chmodIfExists(path, 0o600); err != nil {
		return "", fmt.Errorf("diskqueue: queue file: %w", err)
	}
	return path, nil
}

// openFile opens the queue's file, telling a busy or damaged one apart.
func openFile(path string) (*bolt.DB, error) {
	db, err := openBolt(path)
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return nil, fmt.Errorf("%w: %s", ErrHeld, path)
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum), errors.Is(err, berrors.ErrVersionMismatch):
		return nil, fmt.Errorf("diskqueue: queue file %s is damaged (%w); move it away to start afresh", path, err)
	case err != nil:
		return nil, fmt.Errorf("diskqueue: opening queue %s: %w", path, err)
	}
	return db, nil
}

// openBolt opens the file read-write. bbolt then rebuilds its list of free
// pages, which the queue does not write at each commit; on a damaged file
// that would panic where no recover reaches. So an existing file is first
// checked, read-only.
func openBolt(path string) (*bolt.DB, error) {
	if fi, err := os.Stat(path); err == nil && fi.Size() > 0 {
		if err := checkFile(path); err != nil {
			return nil, err
		}
	}
	return tryOpen(path, &bolt.Options{Timeout: time.Second, NoFreelistSync: true, FreelistType: bolt.FreelistMapType})
}

// checkFile reports damage in the file at path, as berrors.ErrInvalid: it
// reads every page in use, read-only, where a panic can be recovered.
func checkFile(path string) (err error) {
	db, err := tryOpen(path, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		return err
	}
	defer db.Close()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", berrors.ErrInvalid, p)
		}
	}()
	return db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(_ []byte, b *bolt.Bucket) error { return walk(b) })
	})
}

// walk reads every page of b and of the buckets within it.
func walk(b *bolt.Bucket) error {
	return b.ForEach(func(k, v []byte) error {
		if v == nil {
			if child := b.Bucket(k); child != nil {
				return walk(child)
			}
		}
		return nil
	})
}

// tryOpen opens the file, turning the panic bbolt raises on some damaged
// files into an error.
func tryOpen(path string, o *bolt.Options) (db *bolt.DB, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", berrors.ErrInvalid, p)
		}
	}()
	return bolt.Open(path, 0o600, o)
}

func chmodIfExists(path string, mode os.FileMode) error {
	err := os.Chmod(path, mode)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// load creates the buckets (with NoCreate, checks that they are there) and
// reads what the file holds. A damaged file can make bbolt panic; that is an
// error here.
func (q *Queue) load() (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	if q.opts.NoCreate {
		return q.db.View(func(tx *bolt.Tx) error {
			for _, name := range buckets {
				if tx.Bucket(name) == nil {
					return fmt.Errorf("bucket %s missing (a queue opened with NoCreate must have been opened without it once)", name)
				}
			}
			return q.scan(tx)
		})
	}
	return q.db.Update(func(tx *bolt.Tx) error {
		for _, name := range buckets {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		if err := tx.DeleteBucket(bExpiry); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
			return err
		}
		return q.scan(tx)
	})
}

// scan schedules the pending deliveries in arrival order and counts the
// bytes stored. In a write transaction it dead-letters the deliveries whose
// records are damaged; in a read one it schedules them too, and Take
// dead-letters them.
func (q *Queue) scan(tx *bolt.Tx) error {
	damaged := map[uint64]error{}
	err := tx.Bucket(bPending).ForEach(func(k, v []byte) error {
		d, _, err := decodeRecord(k, v)
		switch {
		case err == nil:
			q.s.Add(d.ID, d.Partition)
		case tx.Writable():
			damaged[idOf(k)] = err
		default:
			q.s.Add(idOf(k), "")
		}
		return nil
	})
	if err != nil {
		return err
	}
	for id, why := range damaged {
		if err := q.bury(tx, id, why); err != nil {
			return err
		}
	}
	q.pending.Store(int64(q.s.Len()))
	return tx.Bucket(bBodies).ForEach(func(_, v []byte) error {
		q.bytes.Add(int64(len(v)))
		return nil
	})
}

// writer commits the queued writes in groups until the queue closes, and
// gives space back when the queue is drained and most of its file is free.
func (q *Queue) writer() {
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
		q.committing.Store(time.Now().UnixNano())
		q.commit(group)
		q.committing.Store(0)
		if q.pending.Load() == 0 && q.sparse() {
			if err := q.Compact(); err != nil {
				q.log(slog.LevelError, "diskqueue: compaction failed", "error", err)
			}
		}
		q.maybeGiveBack()
	}
}

// commit runs a group in one transaction. When the transaction fails, each
// write is tried alone, so that one bad write fails only itself.
func (q *Queue) commit(group []*dbOp) {
	pending, bytes := q.pending.Load(), q.bytes.Load()
	err := q.update(func(tx *bolt.Tx) error {
		// Ids grow: their pages fill up, rather than split in halves that
		// no later id would fill.
		for _, name := range [][]byte{bPending, bDead, bBodies} {
			tx.Bucket(name).FillPercent = 1
		}
		for _, op := range group {
			if op.err = op.fn(tx); op.err != nil && !refused(op.err) {
				return op.err
			}
		}
		q.sweep(tx)
		q.fileSize = tx.Size()
		return nil
	})
	if err != nil {
		q.pending.Store(pending)
		q.bytes.Store(bytes)
		if len(group) > 1 {
			for _, op := range group {
				q.commit([]*dbOp{op})
			}
			return
		}
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

// errBroken is the error of a queue whose file could not be reopened after
// a compaction.
var errBroken = errors.New("diskqueue: the queue file could not be reopened after a compaction")

// update runs fn in a write transaction; view in a read transaction.
func (q *Queue) update(fn func(tx *bolt.Tx) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("diskqueue: store failed: %v", p)
		}
	}()
	q.dbMu.RLock()
	defer q.dbMu.RUnlock()
	if q.db == nil {
		return errBroken
	}
	return q.db.Update(fn)
}

func (q *Queue) view(fn func(tx *bolt.Tx) error) error {
	q.dbMu.RLock()
	defer q.dbMu.RUnlock()
	if q.db == nil {
		return errBroken
	}
	return q.db.View(fn)
}

// full returns webhook.ErrQueueFull, wrapped, when one more delivery with a
// body of n bytes would pass a bound.
func (q *Queue) full(n int64) error {
	switch {
	case q.opts.MaxPending > 0 && q.pending.Load() >= int64(q.opts.MaxPending):
		return fmt.Errorf("%w: MaxPending %d reached", webhook.ErrQueueFull, q.opts.MaxPending)
	case q.opts.MaxBytes > 0 && q.bytes.Load()+n > q.opts.MaxBytes:
		return fmt.Errorf("%w: MaxBytes %d reached", webhook.ErrQueueFull, q.opts.MaxBytes)
	}
	return nil
}

// refused reports whether err is an answer about the queue's content rather
// than a failure to write.
func refused(err error) bool {
	return errors.Is(err, webhook.ErrDuplicate) || errors.Is(err, webhook.ErrQueueFull) ||
		errors.Is(err, webhook.ErrNotLeased) || errors.Is(err, webhook.ErrNotDeadLettered) || isDamage(err)
}

// write queues fn for the next group commit and waits for it, or for ctx
// to end. A write given up on may still be committed.
func (q *Queue) write(ctx context.Context, fn func(tx *bolt.Tx) error, after func()) error {
	op := &dbOp{fn: fn, after: after, done: make(chan struct{})}
	q.closing.RLock()
	if q.closed {
		q.closing.RUnlock()
		return webhook.ErrQueueClosed
	}
	select {
	case q.ops <- op:
		q.closing.RUnlock()
	case <-ctx.Done():
		q.closing.RUnlock()
		return fmt.Errorf("diskqueue: store stalled: %w", ctx.Err())
	}
	select {
	case <-op.done:
		return op.err
	case <-ctx.Done():
		return fmt.Errorf("diskqueue: store stalled (the write may still complete): %w", ctx.Err())
	}
}

func (q *Queue) log(level slog.Level, msg string, args ...any) {
	if q.opts.Logger != nil {
		q.opts.Logger.Log(context.Background(), level, msg, args...)
	}
}
