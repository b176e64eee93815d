// Package diskqueue keeps the deliveries of a webhook.Handler on local disk,
// so that an event answered 200 survives a crash or a restart.
//
//	q, err := diskqueue.Open("/var/lib/bot/queue", diskqueue.Options{})
//	...
//	h, err := webhook.NewHandler(webhook.Options{Queue: q, OnIssue: onIssue})
//
// # Files
//
// The directory, readable by its owner only, holds:
//   - queue.db, a bbolt database (a B+tree, copied on write): the pending
//     and dead-lettered deliveries (a record, and the body apart), the
//     dedup keys with their expiry, and the checkpoints of catch-up;
//   - put-NNNNNN.log, the put log: append-only files of the deliveries
//     stored since the last commit of queue.db, usually one, of at most
//     about 8 MiB. A file goes once its deliveries are in queue.db.
//
// One process at a time may open the directory; another gets ErrHeld.
// Tools that only look set Options.NoCreate, which writes nothing at open.
//
// # Durability
//
// Every write waits until it is synced to disk, and writes that arrive
// together share one sync (group commit). A Put appends to the put log and
// syncs it once for all the Puts waiting: the Handler answers 200 then. A
// writer goroutine moves logged deliveries into queue.db at its next
// commit, where the attempt counted when a delivery is handed out, Acks,
// Retries and dead letters are committed too, each group in one bbolt
// transaction. Open moves in what the log holds past queue.db's mark. So a
// crash loses no delivery whose Put returned; one whose callback was
// running is handed out again, its attempt counted. Every record, log
// frame, body and dedup entry carries a checksum; a delivery that fails
// one is never handed to a callback but dead-lettered, with a reason
// naming the damage, and a log frame torn by a crash ends its file. A
// queue.db whose pages are damaged is refused at open, never reset.
//
// # Space
//
// A body takes its size on disk, a delivery's record a few hundred bytes,
// and a remembered dedup key about 100 bytes (a key is forgotten once past
// Options.DedupWindow). Pages of queue.db freed by handled deliveries are
// reused. On Linux their blocks also go back to the file system while the
// queue runs, each time a sixteenth of the file was freed: the file keeps
// its size, its disk usage falls as the queue drains. When the queue is
// drained and most of the file is free, it is compacted, which shrinks the
// file itself (see Queue.Compact).
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
// The bounds are checked as each delivery is admitted, under a lock, so
// they hold however many deliveries arrive at once.
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

	// The logger goroutine appends what Puts send on logIn to the put
	// log; closing ends it.
	logIn   chan *logEntry
	logDone chan struct{}
	plog    *putLog // used by the logger only

	lmu      sync.Mutex           // guards the fields below
	inLog    map[string]*logEntry // dedup keys of the deliveries not yet in queue.db
	toApply  []*logEntry          // logged deliveries, in log order, not yet in queue.db
	moving   int                  // logged deliveries in the commit under way
	lastID   uint64               // the last id given to a delivery
	logs     []logFile            // the log files, oldest first
	logCur   int                  // the number of the one appended to
	logStart atomic.Int64         // when the log write under way began (unix ns), 0 when none
	stallLog func()               // for the tests: runs before each log write, as a disk that stalls

	pending, bytes atomic.Int64 // deliveries held, and bytes of stored bodies
	damaged        atomic.Int64 // damaged deliveries and dedup entries found
	commits        atomic.Int64 // transactions committed, for the tests
	committing     atomic.Int64 // when the commit under way began (unix ns), 0 when none
	// What the transaction under way changes in pending and bytes, counted
	// in when it commits; used by the writer only.
	txPending, txBytes int64

	nextSweep time.Time // used by the writer only
	freeGiven int64     // bytes of free pages at the last giveBack; used by the writer only
	noPunch   bool      // the file system cannot punch holes; used by the writer only
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

// moveAt is how many logged deliveries may wait for a commit that another
// write asks for.
const moveAt = 256

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
	q := &Queue{opts: opts, path: path, db: db, s: schedule.New(), ops: make(chan *dbOp, maxGroup), done: make(chan struct{}),
		logIn: make(chan *logEntry, maxGroup), logDone: make(chan struct{}), inLog: map[string]*logEntry{}}
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
	q.plog = &putLog{dir: dir}
	for _, f := range q.logs {
		q.plog.n = max(q.plog.n, f.n)
	}
	if !opts.NoCreate {
		q.dropLogs(q.lastID)
	}
	go q.writer()
	go q.logger()
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

// load creates the buckets and reads what the file holds. A damaged file
// can make bbolt panic; that is an error here.
func (q *Queue) load() (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	if q.opts.NoCreate {
		return q.db.View(func(tx *bolt.Tx) error {
			if err := q.scan(tx); err != nil {
				return err
			}
			return q.replay(tx)
		})
	}
	return q.db.Update(func(tx *bolt.Tx) error {
		for _, name := range append(buckets, bLog) {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		if err := tx.DeleteBucket(bExpiry); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
			return err
		}
		if err := q.replay(tx); err != nil {
			return err
		}
		return q.scan(tx)
	})
}

// replay reads the deliveries logged past the log's mark. A write
// transaction moves them into queue.db; after a read one (NoCreate) they
// wait for the writer's first commit.
func (q *Queue) replay(tx *bolt.Tx) error {
	var mark uint64
	if b := tx.Bucket(bLog); b != nil {
		mark = idOf(b.Get(logMark))
	}
	entries, files, skipped, err := readLog(filepath.Dir(q.path), mark)
	if err != nil {
		return err
	}
	if skipped > 0 {
		q.log(slog.LevelError, "diskqueue: the put log ends in a damaged or torn frame; what follows it is lost", "bytes", skipped)
	}
	q.logs, q.lastID = files, tx.Bucket(bPending).Sequence()
	for _, f := range files {
		q.lastID = max(q.lastID, f.last)
	}
	if tx.Writable() {
		return q.moveIn(tx, entries)
	}
	q.toApply = entries
	for _, e := range entries {
		for _, k := range e.d.DedupKeys() {
			q.inLog[k] = e
		}
		q.s.Add(e.id, e.d.Partition)
		q.pending.Add(1)
		q.bytes.Add(int64(len(e.body)))
	}
	return nil
}

// scan schedules the pending deliveries in arrival order and counts the
// bytes stored. In a write transaction it dead-letters the deliveries whose
// records are damaged; in a read one it schedules them too, and Take
// dead-letters them.
func (q *Queue) scan(tx *bolt.Tx) error {
	for _, name := range buckets {
		if tx.Bucket(name) == nil {
			return fmt.Errorf("bucket %s missing (a queue opened with NoCreate must have been opened without it once)", name)
		}
	}
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
		group = gather(group, op, q.ops)
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

// gather returns group holding first and what else waits on ch, up to
// maxGroup.
func gather[T any](group []T, first T, ch <-chan T) []T {
	group = append(group[:0], first)
	for len(group) < maxGroup {
		select {
		case v, ok := <-ch:
			if !ok {
				return group
			}
			group = append(group, v)
		default:
			return group
		}
	}
	return group
}

// logger appends the deliveries Puts hand it to the put log, a group at a
// time, until the queue closes, and has the writer move them in.
func (q *Queue) logger() {
	defer close(q.logDone)
	group := make([]*logEntry, 0, maxGroup)
	for e := range q.logIn {
		group = q.number(gather(group, e, q.logIn))
		var err error
		if len(group) > 0 {
			q.logStart.Store(time.Now().UnixNano())
			if q.stallLog != nil {
				q.stallLog()
			}
			err = q.plog.append(group, q)
			q.logStart.Store(0)
		}
		q.logged(group, err)
	}
}

// number gives the deliveries of group their ids, in log order, and
// encodes their records. One whose record does not encode fails alone; it
// is left out of the group returned.
func (q *Queue) number(group []*logEntry) []*logEntry {
	q.lmu.Lock()
	defer q.lmu.Unlock()
	ok := group[:0]
	for _, e := range group {
		q.lastID++
		e.id, e.d.ID = q.lastID, q.lastID
		sum := checksum(e.body)
		if e.rec, e.err = encodeRecord(e.d, &sum); e.err != nil {
			q.forget(e)
			close(e.done)
			continue
		}
		ok = append(ok, e)
	}
	return ok
}

// logged ends the Puts of group, logged or failed with err. A logged
// delivery is handed out from now, and waits for the writer's next commit.
func (q *Queue) logged(group []*logEntry, err error) {
	q.lmu.Lock()
	for _, e := range group {
		if e.err = err; err != nil {
			q.forget(e)
		}
	}
	if err == nil {
		q.toApply = append(q.toApply, group...)
	}
	waiting := len(q.toApply)
	q.lmu.Unlock()
	if err == nil {
		q.mu.Lock()
		for _, e := range group {
			q.s.Add(e.id, e.d.Partition)
		}
		q.mu.Unlock()
	}
	// The next commit moves them in: the lease of one of them asks for
	// one. Past moveAt, one is asked for now, so that memory and the log
	// do not grow while nothing is taken.
	if waiting >= moveAt {
		select {
		case q.ops <- &dbOp{fn: func(*bolt.Tx) error { return nil }, done: make(chan struct{})}:
		default:
		}
	}
	for _, e := range group {
		close(e.done)
	}
}

// commit runs a group in one transaction. When the transaction fails, each
// write is tried alone, so that one bad write fails only itself.
func (q *Queue) commit(group []*dbOp) {
	q.lmu.Lock()
	moving := q.toApply
	q.toApply, q.moving = nil, len(moving)
	q.lmu.Unlock()
	q.txPending, q.txBytes = 0, 0
	err := q.commitTx(func(tx *bolt.Tx) error {
		// Ids grow: their pages fill up, rather than split in halves that
		// no later id would fill.
		for _, name := range [][]byte{bPending, bDead, bBodies} {
			tx.Bucket(name).FillPercent = 1
		}
		if err := q.moveIn(tx, moving); err != nil {
			return err
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
	q.moved(moving, err == nil)
	if err != nil {
		if len(group) > 1 {
			for _, op := range group {
				q.commit([]*dbOp{op})
			}
			return
		}
		group[0].err = err
	} else {
		q.commits.Add(1)
		q.pending.Add(q.txPending)
		q.bytes.Add(q.txBytes)
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

// moved ends the move of entries into queue.db: done, their keys are
// read from there and the log files they fill can go; failed, they wait
// for the next commit.
func (q *Queue) moved(entries []*logEntry, ok bool) {
	q.lmu.Lock()
	q.moving = 0
	if !ok {
		q.toApply = append(entries, q.toApply...)
		q.lmu.Unlock()
		return
	}
	for _, e := range entries {
		q.unremember(e)
	}
	q.lmu.Unlock()
	if len(entries) > 0 {
		q.dropLogs(entries[len(entries)-1].id)
	}
}

// errBroken is the error of a queue whose file could not be reopened after
// a compaction.
var errBroken = errors.New("diskqueue: the queue file could not be reopened after a compaction")

// update runs fn in a write transaction of its own, once the logged
// deliveries are in queue.db.
func (q *Queue) update(fn func(tx *bolt.Tx) error) error {
	if err := q.settle(); err != nil {
		return err
	}
	return q.commitTx(fn)
}

// commitTx runs fn in a write transaction.
func (q *Queue) commitTx(fn func(tx *bolt.Tx) error) (err error) {
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

// view runs fn in a read transaction, once the logged deliveries are in
// queue.db; read does not wait for them.
func (q *Queue) view(fn func(tx *bolt.Tx) error) error {
	if err := q.settle(); err != nil {
		return err
	}
	return q.read(fn)
}

// settle waits until the logged deliveries are in queue.db.
func (q *Queue) settle() error {
	q.lmu.Lock()
	n := len(q.toApply) + q.moving
	q.lmu.Unlock()
	if n == 0 {
		return nil
	}
	return q.write(context.Background(), func(*bolt.Tx) error { return nil }, nil)
}

func (q *Queue) read(fn func(tx *bolt.Tx) error) error {
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
