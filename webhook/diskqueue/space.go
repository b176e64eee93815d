package diskqueue

import (
	"log/slog"
	"os"
)

// giveBackMin is how many bytes of pages must have been freed since the
// last pass before the writer gives space back again: at least this, and
// at least a sixteenth of the file, so that a drain makes a few passes
// over the file, whatever its size.
const giveBackMin = 1 << 20

// maybeGiveBack gives the space of the pages freed since the last pass
// back to the file system, when enough has been freed. Called by the
// writer, between commits.
func (q *Queue) maybeGiveBack() {
	if q.noPunch {
		return
	}
	q.dbMu.RLock()
	if q.db == nil {
		q.dbMu.RUnlock()
		return
	}
	free := int64(q.db.Stats().FreePageN) * int64(q.db.Info().PageSize)
	size := q.fileSize // Compact writes it under the write lock
	q.dbMu.RUnlock()
	q.freeGiven = min(q.freeGiven, free) // freed pages were used again
	if free-q.freeGiven < max(giveBackMin, size/16) {
		return
	}
	if err := q.giveBack(); err != nil {
		q.noPunch = true
		q.log(slog.LevelWarn, "diskqueue: cannot give freed space back while running; it comes back when the queue is drained", "error", err)
		return
	}
	q.freeGiven = free
}

// giveBack punches a hole in the file at each free page not punched yet,
// so that the file system takes back the space of handled deliveries
// while the queue runs: the file keeps its size, its disk usage falls. A
// free page holds nothing the file refers to, not even the transaction
// before the last (bbolt writes over such a page at the next commit all the
// same); no read transaction is open while the pages are listed and
// punched. A page is punched once: one that bbolt uses and frees again
// between two passes keeps its blocks until the queue is compacted.
func (q *Queue) giveBack() error {
	q.dbMu.Lock()
	defer q.dbMu.Unlock()
	if q.db == nil {
		return errBroken
	}
	f, err := os.OpenFile(q.path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	tx, err := q.db.Begin(true) // a write transaction: at its start, every page freed before is free
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	size := int64(q.db.Info().PageSize)
	start, n := 0, 0
	for id := 2; ; id++ {
		info, err := tx.Page(id)
		if err != nil {
			return err
		}
		free := info != nil && info.Type == "free"
		if free && !q.punched.has(id) {
			if n == 0 {
				start = id
			}
			n++
			q.punched.set(id)
			continue
		}
		if n > 0 {
			if err := punch(f, int64(start)*size, int64(n)*size); err != nil {
				return err
			}
			n = 0
		}
		if info == nil {
			return nil
		}
		if !free { // in use: written again since it was punched, if it was
			for i := id; i <= id+info.OverflowCount; i++ {
				q.punched.clear(i)
			}
			id += info.OverflowCount
		}
	}
}

// pages is a set of page ids.
type pages []uint64

func (p pages) has(id int) bool { return id/64 < len(p) && p[id/64]&(1<<(id%64)) != 0 }

func (p *pages) set(id int) {
	for id/64 >= len(*p) {
		*p = append(*p, 0)
	}
	(*p)[id/64] |= 1 << (id % 64)
}

func (p pages) clear(id int) {
	if id/64 < len(p) {
		p[id/64] &^= 1 << (id % 64)
	}
}
