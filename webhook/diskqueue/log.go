package diskqueue

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/collabsvc/collab/webhook"
)

// The put log. A Put is answered once its delivery is in the log and the
// log is synced: one append and one sync for all the Puts waiting, where a
// bbolt commit syncs twice and writes the pages it changed in place. The
// writer moves logged deliveries into queue.db at its next commit, with
// the id of the last one moved (the log's mark); a log file whose
// deliveries are all moved is deleted. Open moves in what was logged past
// the mark.
//
// A log file is put-NNNNNN.log, a run of frames: the length of the rest,
// its CRC-32C, the delivery's id, the end of its dedup window (unix ns),
// the length of its record, its record (as in queue.db) and its body. A
// process appends only to the files it created, so a frame torn by a crash
// can only end a file.

// logFileMax is the size past which the logger starts a new log file.
const logFileMax = 8 << 20

// frameHead is the length and checksum before a frame's content.
const frameHead = 8

var (
	bLog    = []byte("log")  // "mark" -> the id of the last logged delivery moved in
	logMark = []byte("mark") // its key
)

// logEntry is a logged delivery, on its way into queue.db.
type logEntry struct {
	id    uint64
	until int64 // end of its dedup window, unix ns
	rec   []byte
	body  []byte
	d     *webhook.Delivery // the record decoded, without its body
	err   error
	done  chan struct{}
}

// frame appends e's frame to b.
func (e *logEntry) frame(b []byte) []byte {
	start := len(b)
	b = binary.BigEndian.AppendUint64(b, 0) // length and checksum, set below
	b = binary.BigEndian.AppendUint64(b, e.id)
	b = binary.BigEndian.AppendUint64(b, uint64(e.until))
	b = binary.BigEndian.AppendUint32(b, uint32(len(e.rec)))
	b = append(append(b, e.rec...), e.body...)
	content := b[start+frameHead:]
	binary.BigEndian.PutUint32(b[start:], uint32(len(content)))
	binary.BigEndian.PutUint32(b[start+4:], checksum(content))
	return b
}

// readFrame reads the frame at the start of b and returns it with its
// length, or ok false when b does not start with a whole, intact frame.
func readFrame(b []byte) (e *logEntry, n int, ok bool) {
	if len(b) < frameHead {
		return nil, 0, false
	}
	size := int(binary.BigEndian.Uint32(b))
	if size < 20 || len(b)-frameHead < size {
		return nil, 0, false
	}
	c := b[frameHead : frameHead+size]
	if checksum(c) != binary.BigEndian.Uint32(b[4:]) {
		return nil, 0, false
	}
	reclen := int(binary.BigEndian.Uint32(c[16:]))
	if reclen > len(c)-20 {
		return nil, 0, false
	}
	e = &logEntry{id: binary.BigEndian.Uint64(c), until: int64(binary.BigEndian.Uint64(c[8:]))}
	e.rec, e.body = c[20:20+reclen], c[20+reclen:]
	d, _, err := decodeRecord(idKey(e.id), e.rec)
	if err != nil {
		return nil, 0, false
	}
	e.d = d
	return e, frameHead + size, true
}

// logFile is a log file and the id of the last delivery in it.
type logFile struct {
	n    int
	last uint64
}

func logName(dir string, n int) string { return filepath.Join(dir, fmt.Sprintf("put-%06d.log", n)) }

// logFiles lists the numbers of the log files in dir, in order.
func logFiles(dir string) ([]int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var ns []int
	for _, e := range entries {
		var n int
		if name := e.Name(); strings.HasPrefix(name, "put-") && strings.HasSuffix(name, ".log") {
			if _, err := fmt.Sscanf(name, "put-%06d.log", &n); err == nil {
				ns = append(ns, n)
			}
		}
	}
	slices.Sort(ns)
	return ns, nil
}

// readLog returns the entries logged in dir past mark, in order, and the
// files read. A file that ends in a frame that is not whole is read up to
// it; bytes past it are reported in skipped.
func readLog(dir string, mark uint64) (entries []*logEntry, files []logFile, skipped int64, err error) {
	ns, err := logFiles(dir)
	if err != nil {
		return nil, nil, 0, err
	}
	for _, n := range ns {
		b, err := os.ReadFile(logName(dir, n))
		if err != nil {
			return nil, nil, 0, err
		}
		f := logFile{n: n}
		for len(b) > 0 {
			e, size, ok := readFrame(b)
			if !ok {
				break
			}
			b = b[size:]
			f.last = max(f.last, e.id)
			if e.id > mark {
				entries = append(entries, e)
			}
		}
		skipped += int64(len(b))
		files = append(files, f)
	}
	return entries, files, skipped, nil
}

// putLog is the log file being appended to. The logger goroutine alone
// uses it.
type putLog struct {
	dir  string
	f    *os.File // nil until the first append, and after a failed one
	n    int      // its number
	size int64
}

// append writes the frames of group to the log and syncs it. After a
// failure the next append goes to a new file, so that what a failed write
// left at the end of this one stays at an end.
func (l *putLog) append(group []*logEntry, q *Queue) error {
	if l.f == nil || l.size > logFileMax {
		if err := l.next(q); err != nil {
			return err
		}
	}
	var b []byte
	for _, e := range group {
		b = e.frame(b)
	}
	_, err := l.f.Write(b)
	if err == nil {
		err = l.f.Sync()
	}
	if err != nil {
		_ = l.f.Close()
		l.f = nil
		return fmt.Errorf("diskqueue: writing the put log: %w", err)
	}
	l.size += int64(len(b))
	q.lmu.Lock()
	q.logs[len(q.logs)-1].last = group[len(group)-1].id
	q.lmu.Unlock()
	return nil
}

// next closes the current file and creates the next one, durably.
func (l *putLog) next(q *Queue) error {
	if l.f != nil {
		if err := l.f.Close(); err != nil {
			return err
		}
		l.f = nil
	}
	f, err := os.OpenFile(logName(l.dir, l.n+1), os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("diskqueue: creating a put log: %w", err)
	}
	if err := syncDir(l.dir); err != nil {
		_ = f.Close()
		return fmt.Errorf("diskqueue: creating a put log: %w", err)
	}
	l.n++
	l.f, l.size = f, 0
	q.lmu.Lock()
	q.logs = append(q.logs, logFile{n: l.n})
	q.logCur = l.n
	q.lmu.Unlock()
	return nil
}

func (l *putLog) close() error {
	if l.f == nil {
		return nil
	}
	return l.f.Close()
}

// dropLogs deletes the log files, but the one appended to, whose
// deliveries are all moved into queue.db (up to mark).
func (q *Queue) dropLogs(mark uint64) {
	q.lmu.Lock()
	defer q.lmu.Unlock()
	keep := q.logs[:0]
	for _, f := range q.logs {
		if f.n == q.logCur || f.last > mark {
			keep = append(keep, f)
			continue
		}
		if err := os.Remove(logName(filepath.Dir(q.path), f.n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			keep = append(keep, f)
		}
	}
	q.logs = keep
}
