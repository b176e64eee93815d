package diskqueue

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

// A file is compacted when it is at least compactMin bytes and more than
// half of it is free: freed pages are reused, and their blocks given back
// (see giveBack), but the file itself never shrinks.
const compactMin = 4 << 20

// sparse reports whether most of the file is free. Called by Open and by
// the writer.
func (q *Queue) sparse() bool {
	q.dbMu.RLock()
	defer q.dbMu.RUnlock()
	if q.db == nil {
		return false
	}
	size := q.fileSize
	if size == 0 {
		if fi, err := os.Stat(q.path); err == nil {
			size = fi.Size()
		}
	}
	st := q.db.Stats()
	free := int64(st.FreePageN+st.PendingPageN) * int64(q.db.Info().PageSize)
	return size >= compactMin && free*2 > size
}

// Compact copies what the queue holds into a new file and puts it in the
// place of the old one, which gives back the space of the deliveries
// handled since: bbolt reuses freed pages but never shrinks its file.
//
// The queue does this by itself when it is opened and whenever it is
// drained, if most of its file is free. Call Compact after a burst, when the
// file is large and the queue is about to stay quiet, or from a tool while
// the receiver is stopped. Writes wait while it runs, for about the time of
// copying the live data; deliveries arriving then may be asked again by the
// Handler's store deadline. It needs free disk space for the copy.
func (q *Queue) Compact() error {
	q.dbMu.Lock()
	defer q.dbMu.Unlock()
	if q.db == nil {
		return errBroken
	}
	before, _ := os.Stat(q.path)
	tmp := q.path + ".compact"
	_ = os.Remove(tmp)
	if err := copyTo(tmp, q.db); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("diskqueue: compacting: %w", err)
	}
	if err := q.db.Close(); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("diskqueue: compacting: %w", err)
	}
	renamed := os.Rename(tmp, q.path)
	if renamed == nil {
		renamed = syncDir(filepath.Dir(q.path))
	}
	db, err := openFile(q.path)
	q.db = db // nil when reopening failed: the queue is broken (errBroken)
	if err != nil {
		return err
	}
	if renamed != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("diskqueue: compacting: %w", renamed)
	}
	q.fileSize, q.punched = 0, nil
	if after, err := os.Stat(q.path); err == nil && before != nil {
		q.log(slog.LevelInfo, "diskqueue: compacted", "bytes_before", before.Size(), "bytes_after", after.Size())
	}
	return nil
}

// copyTo writes the content of src to a new file at path, durably.
func copyTo(path string, src *bolt.DB) error {
	dst, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		return err
	}
	if err := bolt.Compact(dst, src, 16<<20); err != nil {
		_ = dst.Close()
		return err
	}
	return dst.Close()
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
